/* torchalloc.c — PyTorch's allocator as the tensor ledger sees it, without
 * torch: drives fakealloc.c (the stand-in caching allocator) through one
 * scenario and prints what the allocator itself counted, for
 * tests/integration/test_torch.c to compare with the database.
 *
 *   torchalloc basic       small and large blocks, splits and merges, a free
 *                          delayed by record_stream completed on another
 *                          thread, identity tags, empty_cache
 *   torchalloc pending     a free delayed by record_stream, never completed
 *   torchalloc late        blocks made before gpuledger attaches (snapshot)
 *   torchalloc expandable  expandable segments: pages mapped, then unmapped
 *   torchalloc frag        an OOM with 33 MiB cached free in 9 holes, the
 *                          largest 5 MiB, for 8 MiB (FAKECUDA_MEM_BYTES=64 MiB)
 *   torchalloc demand      an OOM for 100 MiB with nothing cached (same)
 *   torchalloc train       four training steps as the gpuledger package
 *                          sees them (ranges "forward" and "optimizer.step",
 *                          identity tags after each step, a mark "optimizer
 *                          step N"), a batch kept every step and never
 *                          freed, and a workspace outside the allocator
 *   torchalloc long N      N training steps of the PyTorch-like mix (20
 *                          temporaries a step, ranges, tags, a mark each),
 *                          a batch kept from step N/4 on (growth starts
 *                          there), a 24 MiB temporary at step N/2 (the
 *                          peak), an OOM for 1 GiB at step 3N/4, for the
 *                          bounded recording (tests/budget)
 *   torchalloc graph       torch.cuda.graph's pattern: blocks allocated
 *                          during a global-mode stream capture, their
 *                          segments made in relaxed mode, the first of them
 *                          (where gpuledger attaches) inside the capture;
 *                          prints "capture ok" when the capture survives
 * Output: "stats allocated_peak=N requested_peak=N reserved_peak=N
 * block_bytes=N allocs=N" (block_bytes: the sizes of all blocks handed out,
 * summed). */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakealloc.h"
#include "gpuledger.h"

#define KiB 1024ULL
#define MiB (1024ULL * 1024)

static uint64_t live[256];
static int nlive;

static uint64_t take(uint64_t size)
{
    uint64_t p = fa_malloc(size, 0, NULL);
    if (p)
        live[nlive++] = p;
    return p;
}

static void give(int i)
{
    fa_free(live[i]);
    live[i] = 0;
}

static void tag(int category, uint64_t addr, uint64_t size)
{
    void (*t)(int, const uint64_t *, const uint64_t *, size_t) =
        (void (*)(int, const uint64_t *, const uint64_t *, size_t))dlsym(RTLD_DEFAULT, "gpuledger_tag");
    if (t)
        t(category, &addr, &size, 1);
}

/* another thread's allocation completes the delayed free (process_events) */
static void *other_thread(void *arg)
{
    (void)arg;
    fa_streams_done();
    uint64_t p = fa_malloc(700, 0, NULL);
    fa_free(p);
    return NULL;
}

static void basic(void)
{
    fa_init(0, 0);
    fa_register(); /* before CUDA is used: attaches at the first segment */
    take(100);                 /* 0: 512 in a new 2 MiB segment */
    take(1000);                /* 1: 1024 */
    take(513);                 /* 2: 1024 */
    take(1572865);             /* 3: 1.5 MiB + 1 -> 1573376 in a new 20 MiB segment */
    take(18 * MiB);            /* 4: the rest of it (523776 B would remain): 19398144 */
    take(30 * MiB);            /* 5: 30 MiB in a 30 MiB segment */
    tag(GPULEDGER_TAG_PARAMETERS, live[5], 30 * MiB);
    tag(GPULEDGER_TAG_OPTIMIZER_STATE, live[0], 100);
    /* record_stream: requested now, completed by another thread later */
    fa_record_stream(live[1]);
    give(1);
    pthread_t t;
    pthread_create(&t, NULL, other_thread, NULL);
    pthread_join(t, NULL);
    tag(GPULEDGER_TAG_GRADIENTS, live[2] + 256, 513); /* inside the block */
    give(4);
    give(3); /* merges: the 20 MiB segment is free again */
    fa_empty_cache(); /* gives it back */
}

/* a free whose stream is still busy when the program ends: requested,
 * never completed within the recording */
static void pending(void)
{
    fa_init(0, 0);
    fa_register();
    take(100);  /* 0: 512 in a new 2 MiB segment */
    take(1000); /* 1: 1024 */
    fa_record_stream(live[1]);
    give(1);
}

static void late(void)
{
    fa_init(0, 0);
    take(4096);    /* 0 */
    take(8192);    /* 1 */
    take(3 * MiB); /* 2 */
    give(1);
    fa_register(); /* CUDA is in use: a snapshot now, then attached */
    give(0);       /* a block from the snapshot */
    take(2000);    /* 3: carved from the free space the snapshot showed */
    take(5 * MiB); /* 4 */
}

static void expandable(void)
{
    fa_init(1, 0);
    fa_register();
    take(100);      /* 0: maps a 2 MiB page of the small pool */
    take(30 * MiB); /* 1: maps 2 x 20 MiB pages of the large pool, splits */
    take(5 * MiB);  /* 2: from the 10 MiB left */
    take(8 * MiB);  /* 3: 5 MiB left: maps one more page, merged with it */
    give(3);
    give(2);
    fa_empty_cache(); /* unmaps the free pages at the end */
}

static void frag(void)
{
    fa_init(0, 0);
    fa_register();
    for (int i = 0; i < 18; i++) /* 3 segments of 20 MiB: 6 x 3 MiB + 2 MiB free each */
        take(3 * MiB);
    for (int i = 1; i < 18; i += 2)
        give(i);
    take(8 * MiB); /* 33 MiB cached free, largest 5 MiB: fragmentation */
}

static void demand(void)
{
    fa_init(0, 0);
    fa_register();
    take(12 * MiB);
    take(20 * MiB);
    take(100 * MiB); /* nothing cached: demand */
}

static void annotate(const char *fn, const char *label)
{
    void (*f)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, fn);
    if (f)
        f(label);
}

/* the leak: a batch kept every step (appended to a list), never freed */
static __attribute__((noinline)) void keep_batch(void)
{
    fa_malloc(256 * KiB, 0, NULL);
}

static __attribute__((noinline)) void *cublas_workspace(void)
{
    void *p = NULL;
    cudaMalloc(&p, 8 * MiB);
    return p;
}

static __attribute__((noinline)) void train(void)
{
    fa_init(0, 0);
    fa_register();
    uint64_t w1 = fa_malloc(4 * MiB, 0, NULL), w2 = fa_malloc(MiB, 0, NULL); /* the model */
    tag(GPULEDGER_TAG_PARAMETERS, w1, 4 * MiB);
    tag(GPULEDGER_TAG_PARAMETERS, w2, MiB);
    uint64_t s1 = 0, s2 = 0;
    for (int step = 0; step < 4; step++) {
        annotate("gpuledger_range_push", "forward");
        uint64_t act = fa_malloc(6 * MiB, 0, NULL); /* saved for backward */
        fa_free(fa_malloc(512 * KiB, 0, NULL));     /* a temporary of the forward */
        annotate("gpuledger_range_pop", NULL);
        uint64_t g1 = fa_malloc(4 * MiB, 0, NULL), g2 = fa_malloc(MiB, 0, NULL); /* backward */
        fa_free(fa_malloc(2 * MiB, 0, NULL)); /* a temporary of the backward */
        fa_free(act);
        annotate("gpuledger_range_push", "optimizer.step");
        if (!s1) { /* the state, made at the first step */
            s1 = fa_malloc(4 * MiB, 0, NULL);
            s2 = fa_malloc(MiB, 0, NULL);
        }
        fa_free(fa_malloc(4 * MiB, 0, NULL)); /* the optimizer's temporary */
        annotate("gpuledger_range_pop", NULL);
        tag(GPULEDGER_TAG_GRADIENTS, g1, 4 * MiB);
        tag(GPULEDGER_TAG_GRADIENTS, g2, MiB);
        if (!step) {
            tag(GPULEDGER_TAG_OPTIMIZER_STATE, s1, 4 * MiB);
            tag(GPULEDGER_TAG_OPTIMIZER_STATE, s2, MiB);
        }
        char label[32];
        snprintf(label, sizeof label, "optimizer step %d", step);
        annotate("gpuledger_mark", label);
        fa_free(g1); /* zero_grad(set_to_none=True) */
        fa_free(g2);
        keep_batch();
        if (step == 1)
            cublas_workspace();
    }
}

/* one temporary of the mix: its own line (stack) per kind of op */
static __attribute__((noinline)) void temp_small(int i)
{
    fa_free(fa_malloc((uint64_t)(64 + 32 * (i % 8)) * KiB, 0, NULL));
}

static __attribute__((noinline)) void temp_big(void)
{
    fa_free(fa_malloc(24 * MiB, 0, NULL));
}

static void long_train(int steps)
{
    fa_init(0, 0);
    fa_register();
    uint64_t w1 = fa_malloc(4 * MiB, 0, NULL), w2 = fa_malloc(MiB, 0, NULL), s1 = 0;
    tag(GPULEDGER_TAG_PARAMETERS, w1, 4 * MiB);
    tag(GPULEDGER_TAG_PARAMETERS, w2, MiB);
    for (int step = 0; step < steps; step++) {
        annotate("gpuledger_range_push", "forward");
        uint64_t act = fa_malloc(6 * MiB, 0, NULL);
        for (int i = 0; i < 10; i++)
            temp_small(i);
        annotate("gpuledger_range_pop", NULL);
        uint64_t g1 = fa_malloc(4 * MiB, 0, NULL);
        for (int i = 0; i < 10; i++)
            temp_small(i + 3);
        if (step == steps / 2)
            temp_big();
        if (step == steps * 3 / 4)
            fa_malloc(1024 * MiB, 0, NULL); /* out of memory */
        fa_free(act);
        annotate("gpuledger_range_push", "optimizer.step");
        if (!s1)
            s1 = fa_malloc(4 * MiB, 0, NULL);
        fa_free(fa_malloc(4 * MiB, 0, NULL));
        annotate("gpuledger_range_pop", NULL);
        tag(GPULEDGER_TAG_GRADIENTS, g1, 4 * MiB);
        if (!step)
            tag(GPULEDGER_TAG_OPTIMIZER_STATE, s1, 4 * MiB);
        char label[32];
        snprintf(label, sizeof label, "optimizer step %d", step);
        annotate("gpuledger_mark", label);
        fa_free(g1);
        if (step >= steps / 4)
            keep_batch();
    }
}

static void graph(void)
{
    fa_init(0, 0);
    fa_register(); /* attaches at the first segment: made inside the capture */
    cudaStream_t s;
    cudaGraph_t g = NULL;
    int bad = cudaStreamCreate(&s) != cudaSuccess;
    fa_capture_stream(s);
    bad |= cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess;
    take(3 * MiB); /* 0: a new 20 MiB segment */
    take(100);     /* 1: a new 2 MiB segment */
    take(1000);    /* 2: from it */
    give(2);
    bad |= cudaStreamEndCapture(s, &g) != cudaSuccess || !g;
    printf("capture %s\n", bad ? "failed" : "ok");
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "basic";
    if (!strcmp(what, "basic"))
        basic();
    else if (!strcmp(what, "late"))
        late();
    else if (!strcmp(what, "pending"))
        pending();
    else if (!strcmp(what, "expandable"))
        expandable();
    else if (!strcmp(what, "frag"))
        frag();
    else if (!strcmp(what, "demand"))
        demand();
    else if (!strcmp(what, "train"))
        train();
    else if (!strcmp(what, "long"))
        long_train(argc > 2 ? atoi(argv[2]) : 400);
    else if (!strcmp(what, "graph"))
        graph();
    else
        return 2;
    struct fa_stats st;
    fa_stats(&st);
    printf("stats allocated_peak=%llu requested_peak=%llu reserved_peak=%llu block_bytes=%llu allocs=%llu oom_free=%llu\n",
           (unsigned long long)st.allocated_peak, (unsigned long long)st.requested_peak,
           (unsigned long long)st.reserved_peak, (unsigned long long)st.block_bytes_total,
           (unsigned long long)st.allocs, (unsigned long long)st.oom_free);
    return 0;
}
