/* nvtx.c — NVTX v3 header-only annotations around allocations, as
 * libraries and torch.cuda.nvtx make them: three "step" ranges, each with a
 * nested "forward" range around a 1 MiB cudaMalloc, and a mark per step. */
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
    printf("nvtx: done\n");
    return 0;
}
