// every_byte.cu — real-GPU check program for "every byte": each allocation
// path once, with known sizes. After each step it synchronises, reads the
// device's used memory (cudaMemGetInfo) and prints
//     STEP <n> <name> used=<bytes> smi=<MiB nvidia-smi shows for this pid>
// and puts a gpuledger mark "step <name>" into the database (when run under
// gpuledger; the program runs bare too). scripts/gpu-every-byte.sh compares
// the ledger's live bytes at each mark with the used delta.
//
// Leaked on purpose (what `gpuledger leaks` and compute-sanitizer should
// name): leaky_cudaMalloc 12,345 B, leaky_cudaMallocAsync 1,000 B,
// leaky_vmm 32 MiB (cuMemCreate handle, mapped, never released), leaky_array
// (cudaMalloc3DArray 512 x 512 x 22 uchar4, 22 MiB), leaky_graph_alloc (a
// graph allocation of 8 MiB never freed).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>
#include <ctime>
#include <dlfcn.h>
#include <unistd.h>

#define MiB (1ull << 20)
#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "every_byte: %s failed: %s (line %d)\n", #x, cudaGetErrorName(e_), __LINE__); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
#define CU(x)                                                                                      \
    do {                                                                                           \
        CUresult e_ = (x);                                                                         \
        if (e_ != CUDA_SUCCESS) {                                                                  \
            fprintf(stderr, "every_byte: %s failed: %d (line %d)\n", #x, (int)e_, __LINE__);        \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

__global__ void touch(char *p, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = (char)i;
}

static cudaStream_t s;
static int step_no;
static void (*mark)(const char *);

// What nvidia-smi shows for this process, in MiB (-1 if it cannot tell).
static long smi_mib()
{
    FILE *f = popen("nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null", "r");
    if (!f)
        return -1;
    long pid, mib, found = -1;
    while (fscanf(f, "%ld, %ld", &pid, &mib) == 2)
        if (pid == (long)getpid())
            found = mib;
    pclose(f);
    return found;
}

static void step(const char *name)
{
    CK(cudaDeviceSynchronize());
    size_t free_b = 0, total = 0;
    CK(cudaMemGetInfo(&free_b, &total));
    char label[128];
    snprintf(label, sizeof label, "step %s", name);
    if (mark)
        mark(label);
    printf("STEP %d %s used=%zu smi=%ld\n", step_no++, name, total - free_b, smi_mib());
    fflush(stdout);
}

__attribute__((noinline)) void *leaky_cudaMalloc(size_t n)
{
    void *p = nullptr;
    CK(cudaMalloc(&p, n));
    return p;
}

__attribute__((noinline)) void *leaky_cudaMallocAsync(size_t n)
{
    void *p = nullptr;
    CK(cudaMallocAsync(&p, n, s));
    return p;
}

__attribute__((noinline)) CUmemGenericAllocationHandle leaky_vmm(size_t n, CUdeviceptr *va)
{
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CUmemGenericAllocationHandle h;
    CU(cuMemCreate(&h, n, &prop, 0));
    CU(cuMemAddressReserve(va, n, 0, 0, 0));
    CU(cuMemMap(*va, n, 0, h, 0));
    CUmemAccessDesc acc = {};
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU(cuMemSetAccess(*va, n, &acc, 1));
    return h;
}

__attribute__((noinline)) cudaArray_t leaky_array()
{
    cudaChannelFormatDesc f = cudaCreateChannelDesc<uchar4>();
    cudaArray_t a;
    CK(cudaMalloc3DArray(&a, &f, make_cudaExtent(512, 512, 22), 0));
    return a;
}

__attribute__((noinline)) cudaGraph_t capture_scratch(size_t n)
{
    void *p;
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CK(cudaMallocAsync(&p, n, s));
    touch<<<1, 256, 0, s>>>((char *)p, 256);
    CK(cudaFreeAsync(p, s));
    CK(cudaStreamEndCapture(s, &g));
    return g;
}

__attribute__((noinline)) cudaGraph_t capture_kept(size_t n, void **kept)
{
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CK(cudaMallocAsync(kept, n, s));
    touch<<<1, 256, 0, s>>>((char *)*kept, 256);
    CK(cudaStreamEndCapture(s, &g));
    return g;
}

__attribute__((noinline)) cudaGraph_t leaky_graph_alloc(size_t n)
{
    cudaGraph_t g;
    cudaGraphNode_t node;
    cudaMemAllocNodeParams p = {};
    p.poolProps.allocType = cudaMemAllocationTypePinned;
    p.poolProps.location.type = cudaMemLocationTypeDevice;
    p.poolProps.location.id = 0;
    p.bytesize = n;
    CK(cudaGraphCreate(&g, 0));
    CK(cudaGraphAddMemAllocNode(&node, g, nullptr, 0, &p));
    return g;
}

// Nanoseconds per cudaGraphLaunch of a graph of one kernel, and of one that
// also allocates and frees 2 MiB inside: what gpuledger adds to each.
static void launch_bench(int n)
{
    char *buf;
    CK(cudaMalloc(&buf, MiB));
    cudaGraph_t plain, withmem;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    touch<<<1, 32, 0, s>>>(buf, 32);
    CK(cudaStreamEndCapture(s, &plain));
    withmem = capture_scratch(2 * MiB);
    cudaGraphExec_t e[2];
    CK(cudaGraphInstantiate(&e[0], plain, 0));
    CK(cudaGraphInstantiate(&e[1], withmem, 0));
    const char *names[2] = {"no_memory_nodes", "memory_nodes"};
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 100; i++) // warm up
            CK(cudaGraphLaunch(e[k], s));
        CK(cudaStreamSynchronize(s));
        double best = 1e30;
        for (int rep = 0; rep < 5; rep++) {
            struct timespec a, b;
            clock_gettime(CLOCK_MONOTONIC, &a);
            for (int i = 0; i < n; i++)
                CK(cudaGraphLaunch(e[k], s));
            clock_gettime(CLOCK_MONOTONIC, &b);
            CK(cudaStreamSynchronize(s));
            double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
            best = ns < best ? ns : best;
        }
        printf("LAUNCH %s %.1f ns\n", names[k], best);
    }
}

int main(int argc, char **argv)
{
    mark = (void (*)(const char *))dlsym(RTLD_DEFAULT, "gpuledger_mark");
    if (argc > 2 && !strcmp(argv[1], "--launch-bench")) {
        CK(cudaStreamCreate(&s));
        launch_bench(atoi(argv[2]));
        return 0;
    }
    CK(cudaSetDevice(0));
    CK(cudaFree(0));
    CU(cuInit(0));
    CK(cudaStreamCreate(&s));
    step("context"); // the context and module images: nothing an API shows
    char *warm;
    CK(cudaMalloc(&warm, 2 * MiB));
    touch<<<1, 256>>>(warm, 256);
    CK(cudaFree(warm));
    step("first_launch"); // local-memory reservation at the first kernel launch

    void *dev64;
    CK(cudaMalloc(&dev64, 64 * MiB));
    step("cudaMalloc_64MiB");
    void *pitched;
    size_t pitch;
    CK(cudaMallocPitch(&pitched, &pitch, 4000, 4096));
    step("cudaMallocPitch_4000x4096");
    cudaPitchedPtr p3;
    CK(cudaMalloc3D(&p3, make_cudaExtent(1000, 512, 16)));
    step("cudaMalloc3D_1000x512x16");
    char *managed, *managed2;
    CK(cudaMallocManaged(&managed, 32 * MiB));
    touch<<<(32 * MiB + 255) / 256, 256>>>(managed, 32 * MiB);
    step("cudaMallocManaged_32MiB_touched");
    // the first touch cost 96 MiB more than it touched on the H200: once, or per allocation?
    CK(cudaMallocManaged(&managed2, 32 * MiB));
    touch<<<(32 * MiB + 255) / 256, 256>>>(managed2, 32 * MiB);
    step("cudaMallocManaged_another_32MiB_touched");
    CK(cudaFree(managed));
    CK(cudaFree(managed2));
    step("cudaFree_both_managed");
    void *async48;
    CK(cudaMallocAsync(&async48, 48 * MiB, s));
    step("cudaMallocAsync_48MiB");
    CUdeviceptr va;
    CUmemGenericAllocationHandle vmm = leaky_vmm(32 * MiB, &va);
    step("cuMemCreate_map_32MiB");
    void *host;
    CK(cudaMallocHost(&host, 16 * MiB));
    step("cudaMallocHost_16MiB");

    cudaChannelFormatDesc f4 = cudaCreateChannelDesc<float>();
    cudaArray_t arr64;
    CK(cudaMallocArray(&arr64, &f4, 4096, 4096));
    step("cudaMallocArray_4096x4096_float");
    cudaArray_t arr22 = leaky_array();
    step("cudaMalloc3DArray_512x512x22_uchar4");
    cudaMipmappedArray_t mip;
    CK(cudaMallocMipmappedArray(&mip, &f4, make_cudaExtent(2048, 2048, 0), 4));
    step("cudaMallocMipmappedArray_2048sq_4levels");
    CUarray drv_arr;
    CUDA_ARRAY_DESCRIPTOR d = {};
    d.Width = 3000;
    d.Height = 1000;
    d.Format = CU_AD_FORMAT_UNSIGNED_INT8;
    d.NumChannels = 2;
    CU(cuArrayCreate(&drv_arr, &d));
    step("cuArrayCreate_3000x1000_u8x2");
    CK(cudaFreeArray(arr64));
    CK(cudaFreeMipmappedArray(mip));
    CU(cuArrayDestroy(drv_arr));
    step("arrays_freed_but_one");

    cudaGraph_t g1 = capture_scratch(64 * MiB);
    cudaGraphExec_t e1;
    CK(cudaGraphInstantiate(&e1, g1, 0));
    step("graph_captured_64MiB_not_launched");
    for (int i = 0; i < 3; i++)
        CK(cudaGraphLaunch(e1, s));
    step("graph_64MiB_launched_3x");
    void *kept;
    cudaGraph_t g2 = capture_kept(16 * MiB, &kept);
    cudaGraphExec_t e2;
    CK(cudaGraphInstantiate(&e2, g2, 0));
    CK(cudaGraphLaunch(e2, s));
    step("graph_kept_16MiB_launched");
    CK(cudaFree(kept));
    step("graph_kept_freed_with_cudaFree");
    CK(cudaDeviceGraphMemTrim(0));
    step("cudaDeviceGraphMemTrim");
    cudaGraph_t g3 = leaky_graph_alloc(8 * MiB);
    cudaGraphExec_t e3;
    CK(cudaGraphInstantiate(&e3, g3, cudaGraphInstantiateFlagAutoFreeOnLaunch));
    CK(cudaGraphLaunch(e3, s));
    CK(cudaGraphLaunch(e3, s));
    step("graph_alloc_node_8MiB_launched_2x");

    void *leak1 = leaky_cudaMalloc(12345);
    void *leak2 = leaky_cudaMallocAsync(1000);
    CK(cudaFree(dev64));
    CK(cudaFree(pitched));
    CK(cudaFree(p3.ptr));
    CK(cudaFreeAsync(async48, s));
    CK(cudaFreeHost(host));
    CK(cudaGraphExecDestroy(e1));
    CK(cudaGraphExecDestroy(e2));
    CK(cudaGraphExecDestroy(e3));
    CK(cudaGraphDestroy(g1));
    CK(cudaGraphDestroy(g2));
    CK(cudaGraphDestroy(g3));
    step("end_leaks_left");
    printf("every_byte: leaked %p %p vmm %llu at %llu array %p\n", leak1, leak2, (unsigned long long)vmm,
           (unsigned long long)va, (void *)arr22);
    return 0;
}
