// stub_allocator.cpp — a stand-in for the allocator object libc10_cuda.so
// exports (c10::cuda::CUDACachingAllocator::allocator), driven from C by
// tests/unit/test_torch_shim.c: it answers initialized(), name() and
// snapshot() as told, and calls the attached trackers when told to.
#include <c10/cuda/CUDACachingAllocator.h>

#include <stdexcept>

namespace c10::cuda::CUDACachingAllocator {
std::atomic<CUDAAllocator *> allocator{nullptr};
}

namespace {
namespace alloc = c10::cuda::CUDACachingAllocator;

struct Stub final : alloc::CUDAAllocator {
    bool init = false, throw_snapshot = false;
    std::string backend = "native";
    alloc::SnapshotInfo snap;
    std::vector<alloc::AllocatorTraceTracker> trackers;

    bool initialized() override
    {
        return init;
    }
    alloc::SnapshotInfo snapshot(c10::MempoolId_t) override
    {
        if (throw_snapshot)
            throw std::runtime_error("snapshot failed\nwith a second line");
        return snap;
    }
    void attachAllocatorTraceTracker(alloc::AllocatorTraceTracker t) override
    {
        trackers.push_back(std::move(t));
    }
    std::string name() override
    {
        return backend;
    }
};

Stub *stub;
} // namespace

extern "C" {

void stub_install(const char *backend, int initialized, int throw_snapshot)
{
    delete stub;
    stub = new Stub;
    stub->backend = backend;
    stub->init = initialized != 0;
    stub->throw_snapshot = throw_snapshot != 0;
    stub->snap.config_metadata = alloc::AllocatorConfigInfo{};
    alloc::allocator.store(stub);
}

void stub_set_initialized(int initialized)
{
    stub->init = initialized != 0;
}

void stub_set_config(uint64_t max_split, int expandable, const uint64_t *divisions, int n)
{
    stub->snap.config_metadata.max_split_size = max_split;
    stub->snap.config_metadata.expandable_segments = expandable != 0;
    stub->snap.config_metadata.roundup_power2_divisions.assign(divisions, divisions + n);
}

void stub_add_segment(int device, uint64_t addr, uint64_t stream, int expandable, uint64_t pool_a, uint64_t pool_b)
{
    alloc::SegmentInfo s;
    s.device = static_cast<c10::DeviceIndex>(device);
    s.address = addr;
    s.stream = reinterpret_cast<void *>(static_cast<uintptr_t>(stream));
    s.is_expandable = expandable != 0;
    s.owner_private_pool_id = {pool_a, pool_b};
    stub->snap.segments.push_back(s);
}

void stub_add_block(uint64_t size, uint64_t requested, int allocated, int active)
{
    alloc::SegmentInfo &s = stub->snap.segments.back();
    alloc::BlockInfo b;
    b.size = size;
    b.requested_size = requested;
    b.allocated = allocated != 0;
    b.active = active != 0;
    s.blocks.push_back(b);
    s.total_size += size;
}

int stub_trackers(void)
{
    return static_cast<int>(stub->trackers.size());
}

/* action: TraceEntry::Action's number */
void stub_fire(int action, int device, uint64_t addr, uint64_t size, uint64_t stream, uint64_t pool_a,
               uint64_t pool_b)
{
    alloc::TraceEntry e(static_cast<alloc::TraceEntry::Action>(action), static_cast<c10::DeviceIndex>(device), addr,
                        size, reinterpret_cast<void *>(static_cast<uintptr_t>(stream)), {pool_a, pool_b});
    for (auto &t : stub->trackers)
        t(e);
}
}
