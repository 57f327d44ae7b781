/* ask.c — the questions of gpuledger.h about what was recorded: with
 * 4 MiB of weights live, a checkpoint; then 1 MiB and 3 MiB allocated and
 * freed (the peak: 8 MiB, 4 MiB over the start), 512 KiB leaked twice by
 * leak_twice and 1 MiB once by leak_once; a second checkpoint after that,
 * and 256 KiB more. Prints the answers (usage, the live stacks, their
 * frames). The functions are found with dlsym, so the program also runs
 * without gpuledger ("ask: no gpuledger"). */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "gpuledger.h"

__attribute__((noinline)) static void leak_twice(void)
{
    for (volatile int i = 0; i < 2; i++) { /* one call site: one stack */
        void *p = NULL;
        cudaMalloc(&p, 512u << 10);
        __asm__ volatile("" ::: "memory");
    }
}

__attribute__((noinline)) static void leak_once(void)
{
    void *p = NULL;
    cudaMalloc(&p, 1u << 20);
    __asm__ volatile("" ::: "memory");
}

static void print_usage(const char *what, int rc, const struct gpuledger_usage *u)
{
    if (rc) {
        printf("%s: no answer\n", what);
        return;
    }
    printf("%s: layer %d, live %llu, start %llu, peak %llu, new live %llu in %llu, allocated %llu in %llu, "
           "%llu frees\n",
           what, u->layer, (unsigned long long)u->live_bytes, (unsigned long long)u->start_bytes,
           (unsigned long long)u->peak_bytes, (unsigned long long)u->new_live_bytes,
           (unsigned long long)u->new_live_count, (unsigned long long)u->allocated_bytes,
           (unsigned long long)u->allocations, (unsigned long long)u->frees);
}

int main(void)
{
    uint64_t (*checkpoint)(void) = (uint64_t(*)(void))dlsym(RTLD_DEFAULT, "gpuledger_checkpoint");
    int (*usage)(uint64_t, int, struct gpuledger_usage *) =
        (int (*)(uint64_t, int, struct gpuledger_usage *))dlsym(RTLD_DEFAULT, "gpuledger_usage");
    int (*stacks)(uint64_t, int, int, struct gpuledger_stack_bytes *, int) =
        (int (*)(uint64_t, int, int, struct gpuledger_stack_bytes *, int))dlsym(RTLD_DEFAULT, "gpuledger_live_stacks");
    int (*text)(uint64_t, int, char *, size_t) =
        (int (*)(uint64_t, int, char *, size_t))dlsym(RTLD_DEFAULT, "gpuledger_stack_text");
    if (!checkpoint || !usage || !stacks || !text) {
        printf("ask: no gpuledger\n");
        return 0;
    }
    void *weights = NULL, *a = NULL, *b = NULL, *c = NULL;
    cudaMalloc(&weights, 4u << 20);
    uint64_t cp = checkpoint();
    cudaMalloc(&a, 1u << 20);
    cudaMalloc(&b, 3u << 20);
    cudaFree(a);
    cudaFree(b);
    leak_twice();
    leak_once();
    uint64_t cp2 = checkpoint();
    cudaMalloc(&c, 256u << 10);
    printf("checkpoints %llu %llu\n", (unsigned long long)cp, (unsigned long long)cp2);
    struct gpuledger_usage u;
    print_usage("since 1", usage(cp, GPULEDGER_LAYER_AUTO, &u), &u);
    print_usage("since 2", usage(cp2, GPULEDGER_LAYER_DEVICE, &u), &u);
    print_usage("since 99", usage(99, GPULEDGER_LAYER_AUTO, &u), &u);
    struct gpuledger_stack_bytes top[8];
    for (int when = GPULEDGER_NOW; when <= GPULEDGER_AT_PEAK; when++) {
        int n = stacks(cp, GPULEDGER_LAYER_AUTO, when, top, 8);
        printf("%d stacks since 1 %s\n", n, when == GPULEDGER_NOW ? "live now" : "live at the peak");
        for (int i = 0; i < n; i++) {
            char buf[4096];
            int len = text(top[i].stack_id, GPULEDGER_FRAMES_PYTHON, buf, sizeof buf);
            char *nl = len > 0 ? strchr(buf, '\n') : NULL;
            if (nl)
                *nl = 0;
            printf("  %llu bytes in %llu: %s\n", (unsigned long long)top[i].bytes, (unsigned long long)top[i].count,
                   len > 0 ? buf : "?");
        }
    }
    printf("top 1 at the peak since 2: %d\n", stacks(cp2, GPULEDGER_LAYER_DEVICE, GPULEDGER_AT_PEAK, top, 1));
    char small[8];
    printf("text in 8 bytes: %d '%s'\n", text(top[0].stack_id, 0, small, sizeof small), small);
    return 0;
}
