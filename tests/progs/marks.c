/* marks.c — annotations: 6 steps, each inside gpuledger_range_push("step")
 * / _pop and ended by gpuledger_mark("step N"); per step 2 MiB of scratch
 * (freed) and 1 MiB kept by grow_cache. The annotation functions are found
 * with dlsym, so the program also runs without gpuledger. Then
 * gpuledger_set_recording: 777 bytes allocated while paused (not recorded),
 * 888 bytes after resuming. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>

typedef void (*label_fn)(const char *);
typedef void (*pop_fn)(void);

__attribute__((noinline)) static void *grow_cache(void)
{
    void *p = NULL;
    cudaMalloc(&p, 1u << 20);
    __asm__ volatile("" ::: "memory");
    return p;
}

int main(void)
{
    label_fn mark = (label_fn)dlsym(RTLD_DEFAULT, "gpuledger_mark");
    label_fn push = (label_fn)dlsym(RTLD_DEFAULT, "gpuledger_range_push");
    pop_fn pop = (pop_fn)dlsym(RTLD_DEFAULT, "gpuledger_range_pop");
    for (int s = 1; s <= 6; s++) {
        if (push)
            push("step");
        void *a = NULL, *b = NULL;
        cudaMalloc(&a, 1u << 20);
        cudaMalloc(&b, 1u << 20);
        cudaFree(a);
        cudaFree(b);
        grow_cache();
        if (pop)
            pop();
        char label[32];
        snprintf(label, sizeof label, "step %d", s);
        if (mark)
            mark(label);
    }
    int (*set_recording)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "gpuledger_set_recording");
    void *p = NULL;
    int was = set_recording ? set_recording(0) : -1;
    cudaMalloc(&p, 777);
    int paused = set_recording ? set_recording(1) : -1;
    cudaMalloc(&p, 888);
    printf("marks: %s, recording was %d then %d\n", mark ? "annotated" : "no gpuledger", was, paused);
    return 0;
}
