/* torch_trace.c — PyTorch's CUDA caching allocator seen from inside (the
 * tensor ledger): the entry point its trace tracker calls through the C++
 * shim (gpuledger_torch_event), the shim's registration and attachment, and
 * identity tags (gpuledger_tag).
 *
 * The shim can attach only once the allocator is initialised (before, it
 * silently receives nothing), and CUDA is initialised lazily: so after each
 * segment allocation (cudaMalloc, cuMemCreate, cuMemAddressReserve: what the
 * allocator calls for a new segment, with its lock held), outside any
 * wrapped call, a registered shim that has not attached yet is tried again.
 * The shim then emits the blocks that already exist (a snapshot) and
 * attaches, so the entry that follows (SEGMENT_ALLOC of that very segment)
 * is the first one seen.
 *
 * Trace entries arrive on the allocating thread (autograd's too) under the
 * per-device allocator mutex: each is one event through the usual hot path
 * (no lock, no allocation, no GIL; Python frames read directly) — except
 * the FREE_COMPLETED that follows its FREE_REQUESTED at once on the same
 * thread (a free without record_stream: almost all of them). The free is
 * published held (recorder.h), and that completion only marks it
 * (GL_EVF_COMPLETED): one event per free instead of two. Anything else the
 * thread records first, or the writer after waiting for it, lets the free
 * go as it is; its completion is then an event of its own. */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "config.h"
#include "gpuledger.h"
#include "recorder.h"
#include "stack.h"
#include "state.h"

/* What each gpuledger_torch_action records: its operation and memory kind,
 * and its stack (ALWAYS; FREE: only when GPULEDGER_FREE_STACKS=1, as the
 * report uses the allocation's; NO: none — the segment's own CUDA call has
 * one, and a completed free happens wherever the allocator noticed it). */
enum { NO, ALWAYS, FREE };
static const struct {
    uint8_t op, kind, stack;
    uint16_t api;
} act[] = {
    [GPULEDGER_TORCH_ALLOC] = {GL_OP_ALLOC, GL_KIND_BLOCK, ALWAYS, GL_API_torch_allocator},
    [GPULEDGER_TORCH_FREE_REQUESTED] = {GL_OP_FREE, GL_KIND_BLOCK, FREE, GL_API_torch_allocator},
    [GPULEDGER_TORCH_FREE_COMPLETED] = {GL_OP_FREE_COMPLETED, GL_KIND_BLOCK, NO, GL_API_torch_allocator},
    [GPULEDGER_TORCH_SEGMENT_ALLOC] = {GL_OP_ALLOC, GL_KIND_SEGMENT, NO, GL_API_torch_allocator},
    [GPULEDGER_TORCH_SEGMENT_FREE] = {GL_OP_FREE, GL_KIND_SEGMENT, NO, GL_API_torch_allocator},
    [GPULEDGER_TORCH_SEGMENT_MAP] = {GL_OP_MAP, GL_KIND_SEGMENT, NO, GL_API_torch_allocator},
    [GPULEDGER_TORCH_SEGMENT_UNMAP] = {GL_OP_UNMAP, GL_KIND_SEGMENT, NO, GL_API_torch_allocator},
    [GPULEDGER_TORCH_OOM] = {GL_OP_OOM, GL_KIND_BLOCK, ALWAYS, GL_API_torch_allocator},
    [GPULEDGER_TORCH_SNAPSHOT_SEGMENT] = {GL_OP_ALLOC, GL_KIND_SEGMENT, NO, GL_API_torch_snapshot},
    [GPULEDGER_TORCH_SNAPSHOT_BLOCK] = {GL_OP_ALLOC, GL_KIND_BLOCK, NO, GL_API_torch_snapshot},
    [GPULEDGER_TORCH_CONFIG] = {GL_OP_CONFIG, GL_KIND_NONE, NO, GL_API_torch_allocator},
};
#define NACT ((int)(sizeof act / sizeof act[0]))

/* gpuledger.h's public numbers are the vocabulary's */
#define GL_X(name, id, text) _Static_assert(GPULEDGER_TAG_##name == id, "gpuledger.h tag " #name);
GL_TAGS(GL_X)
#undef GL_X

/* A private pool's id (CUDA graph, torch.cuda.MemPool) as one number: its
 * first half, or when that is 0 its second half with bit 63 set. */
static uint64_t pool_id(uint64_t a, uint64_t b)
{
    return a ? a : b ? b | 1ULL << 63 : 0;
}

/* A FREE_COMPLETED: 1 if it completes the free this thread holds (then
 * marked and published), 0 if it must be an event of its own. */
static int fold_completion(int device, uint64_t addr)
{
    struct gl_claim cl;
    struct gl_event *ev = gl_take_held(&cl);
    if (!ev)
        return 0;
    int same = ev->addr == addr && ev->device == device && ev->op == GL_OP_FREE && ev->kind == GL_KIND_BLOCK;
    if (same)
        ev->flags |= GL_EVF_COMPLETED;
    gl_publish(&cl, ev->result);
    return same;
}

/* One trace entry of an allocator with PyTorch's two layers, its api the
 * allocator's (PyTorch's caching allocator, CuPy's MemoryPool). */
static void allocator_event(uint16_t api, int action, int device, uint64_t addr, uint64_t size, uint64_t stream,
                            uint64_t pool_a, uint64_t pool_b, uint64_t extra)
{
    if (action == GPULEDGER_TORCH_FREE_COMPLETED && fold_completion(device, addr))
        return;
    if (!gl_enter()) {
        gl_leave();
        return;
    }
    int oom = action == GPULEDGER_TORCH_OOM;
    struct gl_call c = {.api = api,
                        .result = oom ? 2 /* out of memory */ : 0,
                        .device = device,
                        .addr = addr,
                        .size = size,
                        .stream = stream,
                        .pool = pool_id(pool_a, pool_b),
                        .aux = extra};
    unsigned depth = act[action].stack == ALWAYS ||
                             (act[action].stack == FREE && gl_st.cfg.free_stacks == GL_FREE_STACKS_ALL)
                         ? gl_st.cfg.stack_depth
                         : 0;
    struct gl_claim cl;
    /* a block allocated from Python: its Python frames and the innermost
     * native ones (the allocator and the op that called it); walking the
     * dispatcher's frames down to the interpreter too was most of what
     * recording cost a training step in a slow phase of the H200 host */
    unsigned native = act[action].kind == GL_KIND_BLOCK && !oom ? gl_st.cfg.torch_native_depth : depth;
    gl_claim_with_depth(&cl, &c, depth, native);
    if (cl.ev) {
        cl.ev->op = act[action].op;
        cl.ev->kind = act[action].kind;
    }
    if (action == GPULEDGER_TORCH_FREE_REQUESTED)
        gl_publish_held(&cl, c.result); /* its completion usually follows at once */
    else
        gl_publish(&cl, c.result);
    gl_leave();
}

GL_EXPORT void gpuledger_torch_event(int action, int device, uint64_t addr, uint64_t size, uint64_t stream,
                                     uint64_t pool_a, uint64_t pool_b, uint64_t extra)
{
    if (action <= 0 || action >= NACT || !act[action].api)
        return;
    allocator_event(act[action].api, action, device, addr, size, stream, pool_a, pool_b, extra);
}

GL_EXPORT void gpuledger_pool_event(int allocator, int action, int device, uint64_t addr, uint64_t size,
                                    uint64_t block_bytes)
{
    /* a pool without snapshots, OOM rows, configs or expandable segments */
    if (allocator != GPULEDGER_ALLOCATOR_CUPY || action < GPULEDGER_TORCH_ALLOC ||
        action > GPULEDGER_TORCH_SEGMENT_FREE)
        return;
    allocator_event(GL_API_cupy_pool, action, device, addr, size, 0, 0, 0, block_bytes);
}

GL_EXPORT void gpuledger_tag(int category, const uint64_t *addrs, const uint64_t *sizes, size_t n)
{
    if (!addrs || category < 1 || category >= GL_TAG_COUNT)
        return;
    if (!gl_enter()) {
        gl_leave();
        return;
    }
    for (size_t i = 0; i < n; i++) {
        struct gl_call c = {.api = GL_API_gpuledger_tag,
                            .device = -1,
                            .addr = addrs[i],
                            .size = sizes ? sizes[i] : 0,
                            .aux = (uint64_t)category};
        struct gl_claim cl;
        gl_claim_with_depth(&cl, &c, 0, 0);
        gl_publish(&cl, 0);
    }
    gl_leave();
}

/* ---- the shim -------------------------------------------------------------- */

enum { SHIM_NONE, SHIM_PENDING, SHIM_ATTACHED, SHIM_FAILED };
static _Atomic int shim_state;
static _Atomic int attaching;
static gpuledger_torch_attach_fn _Atomic shim_attach;

static int try_attach(void)
{
    if (atomic_exchange(&attaching, 1))
        return 0; /* another thread is at it */
    int saved = errno;
    char err[512] = "";
    gpuledger_torch_attach_fn fn = atomic_load(&shim_attach);
    int rc = fn ? fn(gpuledger_torch_event, err, sizeof err) : -1;
    if (rc > 0) {
        atomic_store(&shim_state, SHIM_ATTACHED);
    } else if (rc < 0) {
        atomic_store(&shim_state, SHIM_FAILED);
        err[strcspn(err, "\n")] = 0; /* a C++ exception's first line */
        gl_warn("no tensor ledger: PyTorch's allocator: %s; the segment ledger goes on", err[0] ? err : "attach failed");
    }
    atomic_store(&attaching, 0);
    errno = saved;
    return rc;
}

GL_EXPORT int gpuledger_torch_register(gpuledger_torch_attach_fn attach)
{
    if (!attach)
        return -1;
    gl_init();
    if (atomic_load(&gl_st.phase) != GL_PHASE_RECORDING)
        return -2;
    int st = atomic_load(&shim_state);
    if (st == SHIM_ATTACHED)
        return 1;
    /* the shim's own frames (the tracker's std::function) are cut off the
     * top of stacks, like ours; only the shim's: an attach function in the
     * program itself must not hide the program */
    Dl_info di;
    uintptr_t lo, hi;
    if (dladdr((const void *)(uintptr_t)attach, &di) && di.dli_fname && strstr(di.dli_fname, "gpuledger_torch_shim") &&
        gl_code_range_of((const void *)(uintptr_t)attach, &lo, &hi) == 0)
        gl_stack_add_skip_range(lo, hi);
    atomic_store(&shim_attach, attach);
    atomic_store(&shim_state, SHIM_PENDING);
    return gl_wrap_depth() == 0 ? try_attach() : 0;
}

void gl_torch_poll(void)
{
    if (atomic_load_explicit(&shim_state, memory_order_relaxed) == SHIM_PENDING && gl_wrap_depth() == 0)
        try_attach();
}
