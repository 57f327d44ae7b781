// torch_shim.cpp — the one C++ piece of gpuledger: attaches a trace tracker
// to PyTorch's CUDA caching allocator and turns each TraceEntry into a call
// of a plain C function of libgpuledger.so (gpuledger.h). Built by the
// gpuledger Python package against the job's own torch headers, with its
// _GLIBCXX_USE_CXX11_ABI, into a per-version cache (shim.py); it never links
// libgpuledger: the library hands it the function to call.
//
// The tracker runs on the allocating thread (autograd's too) with the
// per-device allocator mutex held: it calls the C function and nothing else
// (no GIL, no allocation, no lock).
#include <c10/cuda/CUDACachingAllocator.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <utility>

extern "C" {
typedef void (*gl_torch_event_fn)(int action, int device, uint64_t addr, uint64_t size, uint64_t stream,
                                  uint64_t pool_a, uint64_t pool_b, uint64_t extra);
int gpuledger_torch_shim_attach(gl_torch_event_fn emit, char *err, size_t errsz);
int gpuledger_torch_shim_abi(void);
}

namespace {

namespace alloc = c10::cuda::CUDACachingAllocator;
using Entry = alloc::TraceEntry;

// gpuledger.h, enum gpuledger_torch_action
enum : int {
    GL_ALLOC = 1,
    GL_FREE_REQUESTED = 2,
    GL_FREE_COMPLETED = 3,
    GL_SEGMENT_ALLOC = 4,
    GL_SEGMENT_FREE = 5,
    GL_SEGMENT_MAP = 6,
    GL_SEGMENT_UNMAP = 7,
    GL_OOM = 8,
    GL_SNAPSHOT_SEGMENT = 9,
    GL_SNAPSHOT_BLOCK = 10,
    GL_CONFIG = 11,
};

gl_torch_event_fn g_emit;

// Fields that older torch releases lack are read where they exist.
template <class T>
auto pool_of(const T &e, int) -> decltype(e.mempool_, std::pair<uint64_t, uint64_t>())
{
    return {static_cast<uint64_t>(e.mempool_.first), static_cast<uint64_t>(e.mempool_.second)};
}
template <class T>
std::pair<uint64_t, uint64_t> pool_of(const T &, long)
{
    return {0, 0};
}

template <class T>
auto device_of(const T &e, int) -> decltype(e.device_, int())
{
    return static_cast<int>(e.device_);
}
template <class T>
int device_of(const T &, long)
{
    return -1;
}

template <class T>
auto expandable_of(const T &s, int) -> decltype(s.is_expandable, uint64_t())
{
    return s.is_expandable ? 1 : 0;
}
template <class T>
uint64_t expandable_of(const T &, long)
{
    return 0;
}

// roundup_power2_divisions: each a power of two (or 0), packed 4 bits per
// interval as log2 + 1.
template <class V>
uint64_t pack_divisions(const V &d)
{
    uint64_t packed = 0;
    for (size_t i = 0; i < d.size() && i < 16; i++) {
        uint64_t v = 0;
        if (d[i]) {
            size_t x = d[i];
            while (x > 1 && v < 14) {
                x >>= 1;
                v++;
            }
            v++;
        }
        packed |= v << (4 * i);
    }
    return packed;
}

// The allocator's settings, member by member (each may be missing in a
// release): max_split_size (SIZE_MAX: none), expandable_segments,
// roundup_power2_divisions.
template <class M>
auto max_split_of(const M &md, int) -> decltype(md.max_split_size, uint64_t())
{
    return static_cast<uint64_t>(md.max_split_size);
}
template <class M>
uint64_t max_split_of(const M &, long)
{
    return UINT64_MAX;
}
template <class M>
auto expandable_md(const M &md, int) -> decltype(md.expandable_segments, uint64_t())
{
    return md.expandable_segments ? 1 : 0;
}
template <class M>
uint64_t expandable_md(const M &, long)
{
    return 0;
}
template <class M>
auto divisions_of(const M &md, int) -> decltype(md.roundup_power2_divisions, uint64_t())
{
    return pack_divisions(md.roundup_power2_divisions);
}
template <class M>
uint64_t divisions_of(const M &, long)
{
    return 0;
}

template <class T>
auto emit_config(const T &snap, int) -> decltype(snap.config_metadata, void())
{
    const auto &md = snap.config_metadata;
    g_emit(GL_CONFIG, -1, max_split_of(md, 0), expandable_md(md, 0), 0, 0, 0, divisions_of(md, 0));
}
template <class T>
void emit_config(const T &, long)
{
}

int action_of(Entry::Action a)
{
    switch (a) {
    case Entry::ALLOC:
        return GL_ALLOC;
    case Entry::FREE_REQUESTED:
        return GL_FREE_REQUESTED;
    case Entry::FREE_COMPLETED:
        return GL_FREE_COMPLETED;
    case Entry::SEGMENT_ALLOC:
        return GL_SEGMENT_ALLOC;
    case Entry::SEGMENT_FREE:
        return GL_SEGMENT_FREE;
    case Entry::SEGMENT_MAP:
        return GL_SEGMENT_MAP;
    case Entry::SEGMENT_UNMAP:
        return GL_SEGMENT_UNMAP;
    case Entry::OOM:
        return GL_OOM;
    default:
        return 0; // SNAPSHOT and anything newer
    }
}

void on_trace(const Entry &e)
{
    int action = action_of(e.action_);
    if (!action)
        return;
    auto pool = pool_of(e, 0);
    uint64_t addr = static_cast<uint64_t>(e.addr_), extra = 0;
    if (action == GL_OOM) { // addr_ holds the device's free bytes
        extra = addr;
        addr = 0;
    }
    g_emit(action, device_of(e, 0), addr, static_cast<uint64_t>(e.size_),
           static_cast<uint64_t>(reinterpret_cast<uintptr_t>(e.stream_)), pool.first, pool.second, extra);
}

// Blocks that existed before we attached, with their exact sizes. Free
// blocks come too: they are the holes the next allocations are carved from.
void emit_snapshot(alloc::CUDAAllocator *a)
{
    auto snap = a->snapshot();
    emit_config(snap, 0);
    for (const auto &seg : snap.segments) {
        auto pool = std::make_pair(static_cast<uint64_t>(seg.owner_private_pool_id.first),
                                   static_cast<uint64_t>(seg.owner_private_pool_id.second));
        uint64_t stream = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(seg.stream));
        g_emit(GL_SNAPSHOT_SEGMENT, static_cast<int>(seg.device), static_cast<uint64_t>(seg.address),
               static_cast<uint64_t>(seg.total_size), stream, pool.first, pool.second, expandable_of(seg, 0));
        uint64_t addr = static_cast<uint64_t>(seg.address);
        for (const auto &b : seg.blocks) {
            uint64_t state = b.allocated ? 1 : b.active ? 2 : 0; // 2: freed, waiting for its streams
            g_emit(GL_SNAPSHOT_BLOCK, static_cast<int>(seg.device), addr, static_cast<uint64_t>(b.size), stream,
                   pool.first, pool.second, static_cast<uint64_t>(b.requested_size) | state << 62);
            addr += static_cast<uint64_t>(b.size);
        }
    }
}

void set_error(char *err, size_t errsz, const char *what)
{
    if (err && errsz)
        std::snprintf(err, errsz, "%s", what);
}

} // namespace

// 1: attached; 0: not yet (the allocator is not initialised: CUDA has not
// been used); -1: never (err says why).
int gpuledger_torch_shim_attach(gl_torch_event_fn emit, char *err, size_t errsz)
{
    static bool attached;
    if (attached)
        return 1;
    try {
        alloc::CUDAAllocator *a = alloc::get();
        if (!a || !a->initialized())
            return 0;
        std::string name = a->name();
        if (name != "native") {
            std::string why = "PyTorch's '" + name +
                              "' CUDA allocator backend takes no trace tracker (gpuledger run --torch tensors "
                              "records it at the CUDA level)";
            set_error(err, errsz, why.c_str());
            return -1;
        }
        g_emit = emit;
        emit_snapshot(a);
        a->attachAllocatorTraceTracker([](const Entry &e) { on_trace(e); });
        attached = true;
        return 1;
    } catch (const std::exception &e) {
        set_error(err, errsz, e.what());
    } catch (...) {
        set_error(err, errsz, "unknown C++ exception");
    }
    return -1;
}

// The shape of the C interface this shim was built for (gpuledger.h).
int gpuledger_torch_shim_abi(void)
{
    return 1;
}
