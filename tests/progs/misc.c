/* misc.c — small scenarios selected by argv[1]:
 *   exit N      allocate, leak one 4 KiB buffer, exit(N)
 *   return N    the same, returning N from main
 *   fork        parent and child each allocate 1 MiB and free it
 *   reset       three cudaMalloc, then cudaDeviceReset
 *   pool        private pool: 3 x 1 MiB from cudaMallocFromPoolAsync, free the
 *               middle one, trim to 0
 *   managed     managed + pinned host + pitch allocations, all freed
 *   devices     1 MiB on device 0 and 2 MiB on device 1, both leaked
 *   forkstorm   a thread allocates without pause while main forks 10 children
 *               that allocate 1 MiB and exit; exit 0 only if all of them end
 *               within 10 s (a child inheriting a held lock would hang)
 *   crash       allocate, then SIGSEGV
 *   abort       allocate, then abort()
 *   _exit N     allocate, then _exit(N)
 *   leaks3      three leak chains: leak_a 2 x 1 MiB, leak_b 3 MiB, leak_c 4 x 512 KiB;
 *               everything else freed
 *   grow N      N steps of 20 ms: 4 MiB of scratch allocated and freed, and a
 *               1 MiB buffer kept by grow_cache (grows every step)
 *   frag        8 x 256 KiB from the stream-ordered pool, then frees #1,#3,#4,#6:
 *               3 holes (256K, 512K, 256K) in a 2 MiB region
 *   ptsz        1 MiB from cudaMallocAsync_ptsz on stream 0 (the per-thread
 *               default stream), freed by cudaFreeAsync_ptsz
 *   deep        two leaks whose stacks share their five innermost frames
 *               (layer5 <- ... <- layer1) and differ only in the caller:
 *               from_loader 3 MiB, from_trainer 2 MiB
 *   badfree     on device 1: 1 MiB allocated and freed twice (the second
 *               fails), and a cudaFree of an address never allocated
 *               (fails); exit 0 if both failures were returned
 *   tagged      two cudaMallocAsync from one line (1 MiB, 2 MiB), tagged
 *               parameters and optimizer_state (gpuledger_tag), both kept
 *   killed      3 MiB and 1 MiB kept, 2 MiB freed, then waits until gpuledger
 *               has stored it (gpuledger_checkpoint), then SIGKILL: an
 *               unfinished database
 *   failed      1 MiB on device 0, freed; then on device 1 a 2 MiB
 *               cudaMalloc that fails (run with FAKECUDA_FAIL_ALLOC=2) and
 *               two cudaFree that fail: a pointer never allocated and the
 *               device-0 buffer again (exit 0 when all three failed)
 *   many N      N allocations of 256 bytes from one line, all kept, and
 *               one of 1 MiB from another */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdint.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

/* the per-thread default stream entry points (what nvcc
 * --default-stream per-thread makes of cudaMallocAsync / cudaFreeAsync) */
cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t stream);
cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t stream);

__attribute__((noinline)) static void *leak_one(size_t n)
{
    void *p = NULL;
    cudaMalloc(&p, n);
    __asm__ volatile("" ::: "memory");
    return p;
}

static int do_fork(void)
{
    void *p = NULL;
    cudaMalloc(&p, 1u << 20);
    pid_t pid = fork();
    if (pid == 0) {
        void *q = NULL;
        cudaMalloc(&q, 1u << 20);
        cudaFree(q);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    cudaFree(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}

static volatile int storm_stop;

static void *storm(void *arg)
{
    (void)arg;
    cudaStream_t s;
    cudaStreamCreate(&s);
    while (!storm_stop) {
        void *p = NULL;
        cudaMallocAsync(&p, 4096, s);
        cudaFreeAsync(p, s);
    }
    return NULL;
}

static int do_forkstorm(void)
{
    pthread_t t;
    cudaFree(0);
    pthread_create(&t, NULL, storm, NULL);
    int bad = 0;
    for (int i = 0; i < 10; i++) {
        struct timespec nap = {0, 5 * 1000 * 1000};
        nanosleep(&nap, NULL);
        pid_t pid = fork();
        if (pid == 0) {
            alarm(10); /* a hung child dies of SIGALRM instead of hanging the test */
            void *q = NULL;
            cudaMalloc(&q, 1u << 20);
            cudaFree(q);
            _exit(0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        bad += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
            fprintf(stderr, "forkstorm: child %d: %s %d\n", i, WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    }
    storm_stop = 1;
    pthread_join(t, NULL);
    printf("forkstorm: %d of 10 children failed\n", bad);
    return bad ? 1 : 0;
}

static int do_pool(void)
{
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool;
    if (cudaMemPoolCreate(&pool, &props) != cudaSuccess)
        return 1;
    cudaStream_t s;
    cudaStreamCreate(&s);
    void *p[3];
    for (int i = 0; i < 3; i++)
        cudaMallocFromPoolAsync(&p[i], 1u << 20, pool, s);
    cudaFreeAsync(p[1], s);
    cudaMemPoolTrimTo(pool, 0);
    cudaFreeAsync(p[0], s);
    cudaFreeAsync(p[2], s);
    cudaStreamSynchronize(s);
    return 0;
}

__attribute__((noinline)) static void *leak_a(void)
{
    return leak_one(1u << 20);
}

__attribute__((noinline)) static void *leak_b(void)
{
    return leak_one(3u << 20);
}

__attribute__((noinline)) static void *leak_c(void)
{
    return leak_one(512u << 10);
}

__attribute__((noinline)) static void *grow_cache(void)
{
    return leak_one(1u << 20);
}

__attribute__((noinline)) static void scratch(void)
{
    void *p[4];
    for (int i = 0; i < 4; i++)
        cudaMalloc(&p[i], 1u << 20);
    for (int i = 0; i < 4; i++)
        cudaFree(p[i]);
}

/* five layers every allocation of `deep` goes through */
__attribute__((noinline)) static void *layer5(size_t n)
{
    void *p = NULL;
    cudaMalloc(&p, n);
    __asm__ volatile("" ::: "memory");
    return p;
}
#define LAYER(k, next)                                                                                        \
    __attribute__((noinline)) static void *layer##k(size_t n)                                                 \
    {                                                                                                         \
        void *p = next(n);                                                                                    \
        __asm__ volatile("" ::: "memory"); /* no tail call: the frame stays */                                \
        return p;                                                                                             \
    }
LAYER(4, layer5)
LAYER(3, layer4)
LAYER(2, layer3)
LAYER(1, layer2)

__attribute__((noinline)) static void *from_loader(void)
{
    void *p = layer1(3u << 20);
    __asm__ volatile("" ::: "memory");
    return p;
}

__attribute__((noinline)) static void *from_trainer(void)
{
    void *p = layer1(2u << 20);
    __asm__ volatile("" ::: "memory");
    return p;
}

static int do_leaks3(void)
{
    void *keep = leak_one(7u << 20);
    leak_a();
    leak_a();
    leak_b();
    for (int i = 0; i < 4; i++)
        leak_c();
    cudaFree(keep);
    return 0;
}

static int do_grow(int steps)
{
    struct timespec nap = {0, 20 * 1000 * 1000};
    for (int s = 0; s < steps; s++) {
        scratch();
        grow_cache();
        nanosleep(&nap, NULL);
    }
    return 0;
}

/* What PyTorch's cudaMallocAsync backend gives: tensors from one line
 * that the gpuledger package tags by what they are. */
static int do_tagged(void)
{
    void (*tag)(int, const uint64_t *, const uint64_t *, size_t) =
        (void (*)(int, const uint64_t *, const uint64_t *, size_t))dlsym(RTLD_DEFAULT, "gpuledger_tag");
    static volatile int n = 2; /* one call site: the loop is not unrolled */
    cudaStream_t s;
    cudaStreamCreate(&s);
    void *p[2];
    for (int i = 0; i < n; i++)
        cudaMallocAsync(&p[i], (size_t)(i + 1) << 20, s);
    static const int cat[2] = {1, 3}; /* GPULEDGER_TAG_PARAMETERS, _OPTIMIZER_STATE */
    for (int i = 0; tag && i < 2; i++) {
        uint64_t addr = (uint64_t)(uintptr_t)p[i], size = (uint64_t)(i + 1) << 20;
        tag(cat[i], &addr, &size, 1);
    }
    return 0;
}

static int do_frag(void)
{
    cudaStream_t s;
    cudaStreamCreate(&s);
    void *p[8];
    for (int i = 0; i < 8; i++)
        cudaMallocAsync(&p[i], 256u << 10, s);
    int gone[] = {1, 3, 4, 6};
    for (int i = 0; i < 4; i++)
        cudaFreeAsync(p[gone[i]], s);
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    int n = argc > 2 ? atoi(argv[2]) : 0;
    if (!strcmp(what, "exit") || !strcmp(what, "return")) {
        leak_one(4096);
        if (!strcmp(what, "exit"))
            exit(n);
        return n;
    }
    if (!strcmp(what, "fork"))
        return do_fork();
    if (!strcmp(what, "reset")) {
        for (int i = 0; i < 3; i++)
            leak_one(1u << 20);
        return cudaDeviceReset() == cudaSuccess ? 0 : 1;
    }
    if (!strcmp(what, "pool"))
        return do_pool();
    if (!strcmp(what, "managed")) {
        void *m, *h, *d;
        size_t pitch;
        cudaMallocManaged(&m, 1u << 20, cudaMemAttachGlobal);
        cudaMallocHost(&h, 8192);
        cudaMallocPitch(&d, &pitch, 1000, 10);
        cudaFree(m);
        cudaFreeHost(h);
        cudaFree(d);
        return 0;
    }
    if (!strcmp(what, "devices")) { /* back and forth: each switch must be seen */
        for (int round = 0; round < 2; round++) {
            cudaSetDevice(0);
            leak_one(1u << 20);
            leak_one(1u << 20);
            cudaSetDevice(1);
            leak_one(2u << 20);
        }
        return 0;
    }
    if (!strcmp(what, "leaks3"))
        return do_leaks3();
    if (!strcmp(what, "deep"))
        return from_loader() && from_trainer() ? 0 : 1;
    if (!strcmp(what, "grow"))
        return do_grow(n > 0 ? n : 10);
    if (!strcmp(what, "badfree")) {
        void *p = NULL;
        cudaSetDevice(1);
        if (cudaMalloc(&p, 1u << 20) != cudaSuccess || cudaFree(p) != cudaSuccess)
            return 1;
        int twice = cudaFree(p) != cudaSuccess;
        int never = cudaFree((void *)(uintptr_t)0x7e57000) != cudaSuccess;
        return twice && never ? 0 : 1;
    }
    if (!strcmp(what, "tagged"))
        return do_tagged();
    if (!strcmp(what, "frag"))
        return do_frag();
    if (!strcmp(what, "ptsz")) {
        void *p = NULL;
        if (cudaMallocAsync_ptsz(&p, 1u << 20, 0) != cudaSuccess)
            return 1;
        return cudaFreeAsync_ptsz(p, 0) == cudaSuccess ? 0 : 1;
    }
    if (!strcmp(what, "forkstorm"))
        return do_forkstorm();
    if (!strcmp(what, "abort")) {
        leak_one(4096);
        abort();
    }
    if (!strcmp(what, "_exit")) {
        leak_one(4096);
        _exit(n);
    }
    if (!strcmp(what, "killed")) {
        leak_one(3u << 20);
        cudaFree(leak_one(2u << 20));
        leak_one(1u << 20);
        uint64_t (*checkpoint)(void) = (uint64_t(*)(void))dlsym(RTLD_DEFAULT, "gpuledger_checkpoint");
        if (checkpoint)
            checkpoint();
        raise(SIGKILL);
        return 0;
    }
    if (!strcmp(what, "failed")) {
        void *p = NULL, *q = NULL;
        if (cudaMalloc(&p, 1u << 20) != cudaSuccess || cudaFree(p) != cudaSuccess)
            return 1;
        cudaSetDevice(1);
        int failed = cudaMalloc(&q, 2u << 20) != cudaSuccess;
        failed += cudaFree((void *)(uintptr_t)0x7f00dead0000) != cudaSuccess;
        failed += cudaFree(p) != cudaSuccess;
        return failed == 3 ? 0 : 1;
    }
    if (!strcmp(what, "many")) {
        for (int i = 0; i < n; i++)
            leak_one(256);
        void *big = NULL;
        return cudaMalloc(&big, 1u << 20) == cudaSuccess ? 0 : 1;
    }
    if (!strcmp(what, "crash")) {
        leak_one(4096);
        raise(SIGSEGV);
        return 0;
    }
    fprintf(stderr, "misc: unknown scenario '%s'\n", what);
    return 2;
}
