/* nvtx_inject.c — NVTX ranges and marks as gpuledger annotations.
 * NVTX v3 (header-only, what PyTorch's torch.cuda.nvtx and most libraries
 * use) loads NVTX_INJECTION64_PATH at its first call and calls
 * InitializeInjectionNvtx2 there; we fill the core function table with our
 * handlers for nvtxMark{A,W,Ex}, nvtxRangePush{A,W,Ex} and nvtxRangePop
 * (Ex: the message of the event attributes, ASCII or wide; a registered
 * string handle, which only the domain API makes, is labelled as such). `gpuledger run`
 * sets NVTX_INJECTION64_PATH (unless it is set already). The NVTX types
 * below are its stable injection ABI (nvtx3/nvtxDetail/nvtxTypes.h). The
 * memory extension module (heaps and regions) is nvtx_mem.c. */
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "gpuledger.h"
#include "nvtx_label.h"
#include "recorder.h"

typedef void (*nvtx_fn)(void);
typedef nvtx_fn **nvtx_table;
typedef struct {
    size_t struct_size;
    int (*GetModuleFunctionTable)(int module, nvtx_table *out_table, unsigned int *out_size);
} nvtx_callbacks;
typedef const void *(*nvtx_get_export_table)(uint32_t id);

enum { NVTX_ETID_CALLBACKS = 1, NVTX_CB_MODULE_CORE = 1 };
enum {
    CBID_MarkEx = 1,
    CBID_MarkA = 2,
    CBID_MarkW = 3,
    CBID_RangePushEx = 8,
    CBID_RangePushA = 9,
    CBID_RangePushW = 10,
    CBID_RangePop = 11
};

/* nvtxEventAttributes_t (v2), as in nvtx3/nvToolsExt.h */
struct nvtx_attrs {
    uint16_t version, size;
    uint32_t category;
    int32_t color_type;
    uint32_t color;
    int32_t payload_type, reserved0;
    uint64_t payload;
    int32_t message_type; /* 1 ASCII, 2 wide, 3 registered handle */
    union {
        const char *ascii;
        const wchar_t *wide;
        const void *registered;
    } message;
};
_Static_assert(offsetof(struct nvtx_attrs, message) == 40, "nvtxEventAttributes_v2 layout");

#define LABEL_MAX GL_NVTX_LABEL_MAX

const char *gl_nvtx_from_wide(const wchar_t *w, char *buf)
{
    size_t n = 0;
    for (; w && *w && n + 4 < LABEL_MAX; w++) {
        uint32_t c = (uint32_t)*w;
        if (c < 0x80)
            buf[n++] = (char)c;
        else if (c < 0x800) {
            buf[n++] = (char)(0xC0 | (c >> 6));
            buf[n++] = (char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            buf[n++] = (char)(0xE0 | (c >> 12));
            buf[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
            buf[n++] = (char)(0x80 | (c & 0x3F));
        } else {
            buf[n++] = (char)(0xF0 | ((c >> 18) & 0x07));
            buf[n++] = (char)(0x80 | ((c >> 12) & 0x3F));
            buf[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
            buf[n++] = (char)(0x80 | (c & 0x3F));
        }
    }
    buf[n] = 0;
    return buf;
}

static const char *attrs_label(const struct nvtx_attrs *a, char *buf)
{
    if (!a || a->size < offsetof(struct nvtx_attrs, message) + sizeof a->message)
        return "";
    switch (a->message_type) {
    case 1:
        return a->message.ascii ? a->message.ascii : "";
    case 2:
        return gl_nvtx_from_wide(a->message.wide, buf);
    case 3:
        return "(registered string)";
    default:
        return "";
    }
}

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

static void mark_w(const wchar_t *message)
{
    char buf[LABEL_MAX];
    gpuledger_mark(gl_nvtx_from_wide(message, buf));
}

static void mark_ex(const struct nvtx_attrs *a)
{
    char buf[LABEL_MAX];
    gpuledger_mark(attrs_label(a, buf));
}

static int push_w(const wchar_t *message)
{
    char buf[LABEL_MAX];
    gpuledger_range_push(gl_nvtx_from_wide(message, buf));
    return nvtx_depth++;
}

static int push_ex(const struct nvtx_attrs *a)
{
    char buf[LABEL_MAX];
    gpuledger_range_push(attrs_label(a, buf));
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
    const struct {
        int id;
        nvtx_fn fn;
    } ours[] = {
        {CBID_MarkEx, (nvtx_fn)mark_ex},     {CBID_MarkA, (nvtx_fn)mark_a},          {CBID_MarkW, (nvtx_fn)mark_w},
        {CBID_RangePushEx, (nvtx_fn)push_ex}, {CBID_RangePushA, (nvtx_fn)push_a},     {CBID_RangePushW, (nvtx_fn)push_w},
        {CBID_RangePop, (nvtx_fn)pop},
    };
    for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++)
        if (size > (unsigned)ours[i].id && table[ours[i].id])
            *table[ours[i].id] = ours[i].fn;
    return 1;
}
