// A stand-in for PyTorch's c10/cuda/CUDACachingAllocator.h (torch 2.11):
// only the declarations python/gpuledger/torch_shim.cpp uses, with the same
// names, members and signatures, so that CI (which has no torch) compiles
// the shim and runs it against stub_allocator.cpp. Not PyTorch's code.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace c10 {
using DeviceIndex = int8_t;
using CaptureId_t = unsigned long long;
using MempoolId_t = std::pair<CaptureId_t, CaptureId_t>;
struct GatheredContext;
} // namespace c10

namespace c10::cuda::CUDACachingAllocator {

struct BlockInfo {
    size_t size = 0;
    size_t requested_size = 0;
    int32_t gc_counter = 0;
    bool allocated = false;
    bool active = false;
};

struct SegmentInfo {
    c10::DeviceIndex device = 0;
    int32_t registration_counter = -1;
    size_t address = 0;
    size_t total_size = 0;
    size_t requested_size = 0;
    size_t allocated_size = 0;
    size_t active_size = 0;
    void *stream = nullptr;
    bool is_large = false;
    bool is_expandable = false;
    MempoolId_t owner_private_pool_id = {0, 0};
    std::vector<BlockInfo> blocks;
};

struct TraceEntry {
    enum Action { ALLOC, FREE_REQUESTED, FREE_COMPLETED, SEGMENT_ALLOC, SEGMENT_FREE, SEGMENT_MAP, SEGMENT_UNMAP, SNAPSHOT, OOM };
    TraceEntry(Action action, c10::DeviceIndex device, size_t addr, size_t size, void *stream, MempoolId_t mempool)
        : action_(action), device_(device), addr_(addr), stream_(stream), size_(size), mempool_(std::move(mempool))
    {
    }
    Action action_;
    c10::DeviceIndex device_;
    size_t addr_;
    std::shared_ptr<GatheredContext> context_;
    void *stream_{};
    size_t size_;
    MempoolId_t mempool_;
    std::string compile_context_;
    std::string user_metadata_;
};

struct AllocatorConfigInfo {
    double garbage_collection_threshold;
    size_t max_split_size;
    size_t pinned_num_register_threads;
    bool expandable_segments;
    bool release_lock_on_malloc;
    bool pinned_use_host_register;
    bool graph_capture_record_stream_reuse;
    std::string last_allocator_settings;
    std::vector<size_t> roundup_power2_divisions;
};

struct SnapshotInfo {
    std::vector<SegmentInfo> segments;
    std::vector<std::vector<TraceEntry>> device_traces;
    AllocatorConfigInfo config_metadata;
};

using AllocatorTraceTracker = std::function<void(const TraceEntry &)>;

class CUDAAllocator {
  public:
    virtual ~CUDAAllocator() = default;
    virtual bool initialized() = 0;
    virtual SnapshotInfo snapshot(MempoolId_t mempool_id = {0, 0}) = 0;
    virtual void attachAllocatorTraceTracker(AllocatorTraceTracker tracker) = 0;
    virtual std::string name() = 0;
};

extern std::atomic<CUDAAllocator *> allocator;

inline CUDAAllocator *get()
{
    return allocator.load();
}

} // namespace c10::cuda::CUDACachingAllocator
