// stub_bridge.cpp — a stand-in libc10_cuda.so for the Python end-to-end
// test (tests/pystub/torch): the allocator object is backed by the fake
// caching allocator (tests/progs/fakealloc.c), whose every step reaches the
// attached trace trackers as a TraceEntry, as PyTorch's do; initialized()
// and snapshot() answer from its state.
#include <c10/cuda/CUDACachingAllocator.h>

extern "C" {
#include "fakealloc.h"
#include "gpuledger.h"
}

namespace {
namespace alloc = c10::cuda::CUDACachingAllocator;
using Entry = alloc::TraceEntry;

struct Bridge final : alloc::CUDAAllocator {
    std::vector<alloc::AllocatorTraceTracker> trackers;
    bool expandable = false;
    bool initialized() override
    {
        return fa_initialized() != 0;
    }
    alloc::SnapshotInfo snapshot(c10::MempoolId_t) override
    {
        alloc::SnapshotInfo s;
        s.config_metadata = alloc::AllocatorConfigInfo{};
        s.config_metadata.max_split_size = SIZE_MAX;
        s.config_metadata.expandable_segments = expandable;
        fa_walk(&s, on_segment, on_block);
        return s;
    }
    void attachAllocatorTraceTracker(alloc::AllocatorTraceTracker t) override
    {
        trackers.push_back(std::move(t));
    }
    std::string name() override
    {
        return "native";
    }
    static void on_segment(void *ctx, uint64_t addr, int stream, int exp)
    {
        alloc::SegmentInfo seg;
        seg.address = addr;
        seg.stream = reinterpret_cast<void *>(static_cast<uintptr_t>(stream));
        seg.is_expandable = exp != 0;
        static_cast<alloc::SnapshotInfo *>(ctx)->segments.push_back(seg);
    }
    static void on_block(void *ctx, uint64_t size, uint64_t requested, int state)
    {
        alloc::SegmentInfo &seg = static_cast<alloc::SnapshotInfo *>(ctx)->segments.back();
        alloc::BlockInfo b;
        b.size = size;
        b.requested_size = requested;
        b.allocated = state == 1;
        b.active = state != 0;
        seg.blocks.push_back(b);
        seg.total_size += size;
    }
};

Bridge *bridge;
uint64_t pool_a, pool_b; // the private pool allocations go to now (stub_set_pool): {0, 0} the default

void to_trackers(int action, uint64_t addr, uint64_t size, int stream, uint64_t extra)
{
    static const Entry::Action of[] = {
        Entry::SNAPSHOT,      Entry::ALLOC,       Entry::FREE_REQUESTED, Entry::FREE_COMPLETED, Entry::SEGMENT_ALLOC,
        Entry::SEGMENT_FREE,  Entry::SEGMENT_MAP, Entry::SEGMENT_UNMAP,  Entry::OOM,
    };
    if (action < GPULEDGER_TORCH_ALLOC || action > GPULEDGER_TORCH_OOM)
        return;
    Entry e(of[action], 0, action == GPULEDGER_TORCH_OOM ? extra : addr, size,
            reinterpret_cast<void *>(static_cast<uintptr_t>(stream)), {pool_a, pool_b});
    for (auto &t : bridge->trackers)
        t(e);
}
} // namespace

extern "C" void stub_install_bridge(int expandable, uint64_t max_split)
{
    bridge = new Bridge;
    bridge->expandable = expandable != 0;
    fa_init(expandable, max_split);
    fa_set_tracker(to_trackers);
    alloc::allocator.store(bridge);
}

// torch.cuda.use_mem_pool of the stand-in: the trace entries that follow
// carry this pool id ({0, 0}: the default pool again)
extern "C" void stub_set_pool(uint64_t a, uint64_t b)
{
    pool_a = a;
    pool_b = b;
}
