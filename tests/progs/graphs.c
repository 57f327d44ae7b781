/* graphs.c — CUDA-graph memory, each path once, with sizes the fake
 * driver's rules make exact (tests/fakecuda/fake_graph.c: a graph
 * allocation takes its size rounded up to 2 MiB; the pool reserves at a
 * launch the highest use the launch reaches and keeps it until a trim):
 *  1. capture_scratch: a captured graph allocating and freeing 32 MiB,
 *     launched three times: the pool reserves 32 MiB at the first launch;
 *  2. capture_kept: a captured graph allocating 8 MiB it does not free;
 *     launched once (the allocation outlives the launch), then the program
 *     frees it with cudaFree (free_after_launch): back to the pool;
 *  3. a graph with no memory node (an empty node), launched twice;
 *  4. cudaDeviceGraphMemTrim: the pool gives its 32 MiB back;
 *  5. add_node_by_hand: cudaGraphAddMemAllocNode of 3 MiB (4 MiB in the
 *     pool) without a free, instantiated with auto-free-on-launch and
 *     launched twice (the second launch frees the first's allocation
 *     first): 3 MiB left live at exit, a leak. */
#include <cuda_runtime_api.h>
#include <stdio.h>

#define MiB (1u << 20)

static int failures;
static cudaStream_t s;
#define CK(x) (failures += (x) != 0)

__attribute__((noinline)) static cudaGraph_t capture_scratch(void)
{
    void *p = NULL;
    cudaGraph_t g = NULL;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CK(cudaMallocAsync(&p, 32 * MiB, s));
    CK(cudaFreeAsync(p, s));
    CK(cudaStreamEndCapture(s, &g));
    return g;
}

__attribute__((noinline)) static cudaGraph_t capture_kept(void **kept)
{
    cudaGraph_t g = NULL;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CK(cudaMallocAsync(kept, 8 * MiB, s));
    CK(cudaStreamEndCapture(s, &g));
    return g;
}

__attribute__((noinline)) static void launch_three_times(cudaGraphExec_t e)
{
    for (int i = 0; i < 3; i++)
        CK(cudaGraphLaunch(e, s));
}

__attribute__((noinline)) static void free_after_launch(void *kept)
{
    CK(cudaStreamSynchronize(s));
    CK(cudaFree(kept));
}

__attribute__((noinline)) static cudaGraph_t add_node_by_hand(void)
{
    cudaGraph_t g = NULL;
    cudaGraphNode_t n;
    struct cudaMemAllocNodeParams p = {0};
    p.poolProps.allocType = cudaMemAllocationTypePinned;
    p.poolProps.location.type = cudaMemLocationTypeDevice;
    p.poolProps.location.id = 0;
    p.bytesize = 3 * MiB;
    CK(cudaGraphCreate(&g, 0));
    CK(cudaGraphAddMemAllocNode(&n, g, NULL, 0, &p));
    return g;
}

int main(void)
{
    CK(cudaStreamCreate(&s));
    cudaGraphExec_t e1, e2, e3, e5;
    /* 1 */
    cudaGraph_t g1 = capture_scratch();
    CK(cudaGraphInstantiate(&e1, g1, 0));
    launch_three_times(e1);
    /* 2 */
    void *kept = NULL;
    cudaGraph_t g2 = capture_kept(&kept);
    CK(cudaGraphInstantiate(&e2, g2, 0));
    CK(cudaGraphLaunch(e2, s));
    free_after_launch(kept);
    /* 3 */
    cudaGraph_t g3;
    cudaGraphNode_t empty;
    CK(cudaGraphCreate(&g3, 0));
    CK(cudaGraphAddEmptyNode(&empty, g3, NULL, 0));
    CK(cudaGraphInstantiate(&e3, g3, 0));
    CK(cudaGraphLaunch(e3, s));
    CK(cudaGraphLaunch(e3, s));
    /* 4 */
    CK(cudaDeviceGraphMemTrim(0));
    /* 5 */
    cudaGraph_t g5 = add_node_by_hand();
    CK(cudaGraphInstantiate(&e5, g5, cudaGraphInstantiateFlagAutoFreeOnLaunch));
    CK(cudaGraphLaunch(e5, s));
    CK(cudaGraphLaunch(e5, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaGraphExecDestroy(e1));
    CK(cudaGraphExecDestroy(e2));
    CK(cudaGraphExecDestroy(e3));
    CK(cudaGraphExecDestroy(e5));
    printf("graphs: %s\n", failures ? "failed" : "ok");
    return failures != 0;
}
