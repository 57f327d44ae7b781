/* nvtx.c — NVTX v3 header-only annotations around allocations, as
 * libraries and torch.cuda.nvtx make them: three "step" ranges, each with a
 * nested "forward" range around a 1 MiB cudaMalloc, and a mark per step;
 * then the Ex and wide variants: a range pushed with nvtxRangePushEx
 * (ASCII message) around a 2 MiB allocation, nvtxMarkEx, nvtxMarkW and
 * nvtxRangePushW/Pop. */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>

int main(void)
{
    for (int s = 1; s <= 3; s++) {
        nvtxRangePushA("step");
        nvtxRangePushA("forward");
        void *p = NULL;
        cudaMalloc(&p, 1u << 20);
        nvtxRangePop();
        cudaFree(p);
        nvtxRangePop();
        char label[32];
        snprintf(label, sizeof label, "step %d", s);
        nvtxMarkA(label);
    }
    nvtxEventAttributes_t at = {0};
    at.version = NVTX_VERSION;
    at.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    at.messageType = NVTX_MESSAGE_TYPE_ASCII;
    at.message.ascii = "ex range";
    nvtxRangePushEx(&at);
    void *q = NULL;
    cudaMalloc(&q, 2u << 20);
    nvtxRangePop();
    cudaFree(q);
    at.message.ascii = "ex mark";
    nvtxMarkEx(&at);
    nvtxMarkW(L"wide mark \u00e9");
    nvtxRangePushW(L"wide range");
    nvtxRangePop();
    printf("nvtx: done\n");
    return 0;
}
