/* capture.c — stream captures that CUDA allows, each of which gpuledger
 * must leave intact (tests/fakecuda/fake_graph.c enforces CUDA's rules on
 * potentially unsafe calls during a capture). Before each capture the
 * program waits 150 ms, so that every sample gpuledger takes at a bounded
 * rate is due at the first call inside it. Prints one line per case:
 *  1. global: a global-mode capture of cudaMallocAsync, a kernel and
 *     cudaFreeAsync (the H200's failing case, dynamic cudart), with a
 *     gpuledger_mark inside it (the program's step ends mid-capture);
 *     instantiated and launched twice;
 *  2. other_thread: while a second thread holds a global-mode capture, the
 *     main thread (not capturing, global mode) allocates and frees 64 MiB
 *     on its own stream and launches a graph with memory nodes — legal
 *     calls, during which gpuledger's samples would be illegal;
 *  3. thread_local: a thread-local-mode capture while the main thread
 *     makes a cudaMalloc (legal: thread-local captures ignore others);
 *  4. relaxed_malloc: PyTorch's caching allocator inside its captures: a
 *     cudaMalloc in relaxed thread mode, within a global-mode capture;
 *  5. unsafe_call: the program itself calls cudaMemGetInfo inside a
 *     global-mode capture: CUDA refuses it and invalidates the capture
 *     (what the fake must do with or without gpuledger);
 *  6. after: 1 MiB cudaMallocAsync and cudaFreeAsync, no capture in
 *     progress (gpuledger samples again).
 * Exit 0 when every case gives what CUDA promises. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MiB (1u << 20)

static int bad; /* failures so far */
static void (*mark)(const char *);

static void nap(void)
{
    struct timespec t = {0, 150 * 1000 * 1000};
    nanosleep(&t, NULL);
}

static const char *name(cudaError_t e)
{
    return cudaGetErrorName(e);
}

static void expect(const char *what, cudaError_t got, cudaError_t want)
{
    if (got != want) {
        printf("  %s: %s, expected %s\n", what, name(got), name(want));
        bad++;
    }
}

static void kernel(void)
{
}

static cudaError_t launch_kernel(cudaStream_t s)
{
    dim3 one = {1, 1, 1};
    return cudaLaunchKernel((const void *)kernel, one, one, NULL, 0, s);
}

/* A graph that allocates 2 MiB and frees it, captured on s. */
static cudaGraph_t scratch_graph(cudaStream_t s, enum cudaStreamCaptureMode mode)
{
    void *p = NULL;
    cudaGraph_t g = NULL;
    expect("begin", cudaStreamBeginCapture(s, mode), cudaSuccess);
    expect("captured cudaMallocAsync", cudaMallocAsync(&p, 2 * MiB, s), cudaSuccess);
    expect("captured kernel", launch_kernel(s), cudaSuccess);
    expect("captured cudaFreeAsync", cudaFreeAsync(p, s), cudaSuccess);
    expect("end", cudaStreamEndCapture(s, &g), cudaSuccess);
    return g;
}

__attribute__((noinline)) static void case_global(cudaStream_t s)
{
    int was = bad;
    void *p = NULL;
    cudaGraph_t g = NULL;
    cudaGraphExec_t e;
    nap();
    expect("begin", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    expect("captured cudaMallocAsync", cudaMallocAsync(&p, 16 * MiB, s), cudaSuccess);
    if (mark)
        mark("inside a capture");
    expect("captured kernel", launch_kernel(s), cudaSuccess);
    expect("captured cudaFreeAsync", cudaFreeAsync(p, s), cudaSuccess);
    expect("end", cudaStreamEndCapture(s, &g), cudaSuccess);
    expect("instantiate", g ? cudaGraphInstantiate(&e, g, 0) : cudaErrorInvalidValue, cudaSuccess);
    for (int i = 0; g && i < 2; i++)
        expect("launch", cudaGraphLaunch(e, s), cudaSuccess);
    expect("sync", cudaStreamSynchronize(s), cudaSuccess);
    printf("global: %s\n", bad == was ? "ok" : "failed");
}

static struct {
    pthread_mutex_t m;
    pthread_cond_t c;
    int stage; /* 1: the other thread captures; 2: the main thread is done */
    cudaStream_t s;
} other = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL};

static void wait_stage(int st)
{
    pthread_mutex_lock(&other.m);
    while (other.stage < st)
        pthread_cond_wait(&other.c, &other.m);
    pthread_mutex_unlock(&other.m);
}

static void set_stage(int st)
{
    pthread_mutex_lock(&other.m);
    other.stage = st;
    pthread_cond_broadcast(&other.c);
    pthread_mutex_unlock(&other.m);
}

static enum cudaStreamCaptureMode other_mode;

static void *capturing_thread(void *arg)
{
    (void)arg;
    void *p = NULL;
    cudaGraph_t g = NULL;
    expect("other thread: begin", cudaStreamBeginCapture(other.s, other_mode), cudaSuccess);
    set_stage(1);
    wait_stage(2);
    expect("other thread: captured cudaMallocAsync", cudaMallocAsync(&p, 4 * MiB, other.s), cudaSuccess);
    expect("other thread: captured cudaFreeAsync", cudaFreeAsync(p, other.s), cudaSuccess);
    expect("other thread: end", cudaStreamEndCapture(other.s, &g), cudaSuccess);
    if (!g)
        bad++;
    return NULL;
}

static void start_other(enum cudaStreamCaptureMode mode, pthread_t *t)
{
    other.stage = 0;
    other_mode = mode;
    if (pthread_create(t, NULL, capturing_thread, NULL))
        bad++;
    wait_stage(1);
}

__attribute__((noinline)) static void case_other_thread(cudaStream_t mine, cudaGraphExec_t with_nodes)
{
    int was = bad;
    pthread_t t;
    void *p = NULL;
    nap();
    start_other(cudaStreamCaptureModeGlobal, &t);
    expect("cudaMallocAsync on a stream not capturing", cudaMallocAsync(&p, 64 * MiB, mine), cudaSuccess);
    expect("cudaFreeAsync on it", cudaFreeAsync(p, mine), cudaSuccess);
    expect("launch of a graph with memory nodes", cudaGraphLaunch(with_nodes, mine), cudaSuccess);
    set_stage(2);
    pthread_join(t, NULL);
    expect("sync", cudaStreamSynchronize(mine), cudaSuccess);
    printf("other_thread: %s\n", bad == was ? "ok" : "failed");
}

__attribute__((noinline)) static void case_thread_local(void)
{
    int was = bad;
    pthread_t t;
    void *p = NULL;
    nap();
    start_other(cudaStreamCaptureModeThreadLocal, &t);
    expect("cudaMalloc beside a thread-local capture", cudaMalloc(&p, 8 * MiB), cudaSuccess);
    expect("cudaFree beside it", cudaFree(p), cudaSuccess);
    set_stage(2);
    pthread_join(t, NULL);
    printf("thread_local: %s\n", bad == was ? "ok" : "failed");
}

__attribute__((noinline)) static void case_relaxed_malloc(cudaStream_t s)
{
    int was = bad;
    void *seg = NULL, *p = NULL;
    cudaGraph_t g = NULL;
    nap();
    expect("begin", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    enum cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
    expect("to relaxed", cudaThreadExchangeStreamCaptureMode(&m), cudaSuccess);
    expect("cudaMalloc in relaxed mode", cudaMalloc(&seg, 32 * MiB), cudaSuccess);
    expect("back", cudaThreadExchangeStreamCaptureMode(&m), cudaSuccess);
    expect("captured cudaMallocAsync", cudaMallocAsync(&p, 2 * MiB, s), cudaSuccess);
    expect("captured cudaFreeAsync", cudaFreeAsync(p, s), cudaSuccess);
    expect("end", cudaStreamEndCapture(s, &g), cudaSuccess);
    expect("cudaFree after the capture", cudaFree(seg), cudaSuccess);
    printf("relaxed_malloc: %s\n", bad == was ? "ok" : "failed");
}

__attribute__((noinline)) static void case_unsafe_call(cudaStream_t s)
{
    int was = bad;
    void *p = NULL;
    size_t f, t;
    cudaGraph_t g = (cudaGraph_t)&g;
    expect("begin", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    expect("cudaMemGetInfo during the capture", cudaMemGetInfo(&f, &t), cudaErrorStreamCaptureUnsupported);
    expect("cudaMallocAsync after it", cudaMallocAsync(&p, MiB, s), cudaErrorStreamCaptureInvalidated);
    expect("end", cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
    if (g)
        bad++;
    printf("unsafe_call: %s\n", bad == was ? "invalidated, as CUDA does" : "failed");
}

int main(void)
{
    mark = (void (*)(const char *))dlsym(RTLD_DEFAULT, "gpuledger_mark");
    cudaStream_t s, mine;
    if (cudaStreamCreate(&s) || cudaStreamCreate(&mine) || cudaStreamCreate(&other.s))
        return 1;
    case_global(s);
    cudaGraph_t g = scratch_graph(s, cudaStreamCaptureModeGlobal);
    cudaGraphExec_t e;
    expect("instantiate", g ? cudaGraphInstantiate(&e, g, 0) : cudaErrorInvalidValue, cudaSuccess);
    case_other_thread(mine, e);
    case_thread_local();
    case_relaxed_malloc(s);
    case_unsafe_call(s);
    nap();
    void *p = NULL;
    expect("after: cudaMallocAsync", cudaMallocAsync(&p, 1 << 20, mine), cudaSuccess);
    expect("after: cudaFreeAsync", cudaFreeAsync(p, mine), cudaSuccess);
    expect("after: sync", cudaStreamSynchronize(mine), cudaSuccess);
    printf("capture: %s\n", bad ? "failed" : "ok");
    return bad;
}
