/* marks.c — annotations: 6 steps, each inside gpuledger_range_push("step")
 * / _pop and ended by gpuledger_mark("step N"); per step 2 MiB of scratch
 * (freed) and 1 MiB kept by grow_cache. The annotation functions are found
 * with dlsym, so the program also runs without gpuledger. */
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
    printf("marks: %s\n", mark ? "annotated" : "no gpuledger");
    return 0;
}
