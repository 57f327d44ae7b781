/* nvtx_inject.c — NVTX ranges and marks as gpuledger annotations.
 * NVTX v3 (header-only, what PyTorch's torch.cuda.nvtx and most libraries
 * use) loads NVTX_INJECTION64_PATH at its first call and calls
 * InitializeInjectionNvtx2 there; we fill the core function table with our
 * handlers for nvtxMarkA, nvtxRangePushA and nvtxRangePop. `gpuledger run`
 * sets NVTX_INJECTION64_PATH (unless it is set already). The NVTX types
 * below are its stable injection ABI (nvtx3/nvtxDetail/nvtxTypes.h). */
#include <stddef.h>
#include <stdint.h>

#include "gpuledger.h"
#include "recorder.h"

typedef void (*nvtx_fn)(void);
typedef nvtx_fn **nvtx_table;
typedef struct {
    size_t struct_size;
    int (*GetModuleFunctionTable)(int module, nvtx_table *out_table, unsigned int *out_size);
} nvtx_callbacks;
typedef const void *(*nvtx_get_export_table)(uint32_t id);

enum { NVTX_ETID_CALLBACKS = 1, NVTX_CB_MODULE_CORE = 1 };
enum { CBID_MarkA = 2, CBID_RangePushA = 9, CBID_RangePop = 11 };

#define GL_TLS __attribute__((tls_model("initial-exec")))
static __thread int nvtx_depth GL_TLS;

static void mark_a(const char *message)
{
    gpuledger_mark(message);
}

static int push_a(const char *message)
{
    gpuledger_range_push(message);
    return nvtx_depth++;
}

static int pop(void)
{
    if (nvtx_depth <= 0)
        return -1;
    gpuledger_range_pop();
    return --nvtx_depth;
}

GL_EXPORT int InitializeInjectionNvtx2(nvtx_get_export_table get)
{
    const nvtx_callbacks *cb = get ? (const nvtx_callbacks *)get(NVTX_ETID_CALLBACKS) : NULL;
    nvtx_table table = NULL;
    unsigned int size = 0;
    if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable ||
        !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) || !table)
        return 0; /* an NVTX we do not understand: NVTX goes on without a tool */
    if (size > CBID_MarkA && table[CBID_MarkA])
        *table[CBID_MarkA] = (nvtx_fn)mark_a;
    if (size > CBID_RangePushA && table[CBID_RangePushA])
        *table[CBID_RangePushA] = (nvtx_fn)push_a;
    if (size > CBID_RangePop && table[CBID_RangePop])
        *table[CBID_RangePop] = (nvtx_fn)pop;
    return 1;
}
