/* poolsteps.c — steps with pool growth, for a bounded recording's gaps
 * (tests/budget/check_budget.py, docs/bounded-recording.md): a stream-
 * ordered pool on device 0; 30 steps ended by gpuledger_mark("step N"),
 * each making and freeing three 256 KiB temporaries from the pool; steps
 * 5, 15 and 25 also keep 1 MiB from it (the pool grows), freed at exit.
 * `poolsteps optimizer`: each step ends with "optimizer step N" instead,
 * after a second round of temporaries, and the program marks "forward"
 * between the two (the writer's steps are then halves of the reader's). */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef void (*label_fn)(const char *);

__attribute__((noinline)) static void temporaries(cudaMemPool_t pool, cudaStream_t s)
{
    void *t[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++)
        cudaMallocFromPoolAsync(&t[i], 256u << 10, pool, s);
    for (int i = 0; i < 3; i++)
        cudaFreeAsync(t[i], s);
}

__attribute__((noinline)) static void *grow(cudaMemPool_t pool, cudaStream_t s)
{
    void *p = NULL;
    cudaMallocFromPoolAsync(&p, 1u << 20, pool, s);
    return p;
}

int main(int argc, char **argv)
{
    int optimizer = argc > 1 && !strcmp(argv[1], "optimizer");
    label_fn mark = (label_fn)dlsym(RTLD_DEFAULT, "gpuledger_mark");
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool;
    cudaStream_t s;
    if (cudaMemPoolCreate(&pool, &props) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess)
        return 1;
    void *kept[3];
    int nkept = 0;
    for (int step = 0; step < 30; step++) {
        temporaries(pool, s);
        if (optimizer && mark)
            mark("forward");
        if (step % 10 == 5)
            kept[nkept++] = grow(pool, s);
        if (optimizer)
            temporaries(pool, s);
        char label[32];
        snprintf(label, sizeof label, optimizer ? "optimizer step %d" : "step %d", step + optimizer);
        if (mark)
            mark(label);
    }
    for (int i = 0; i < nkept; i++)
        cudaFreeAsync(kept[i], s);
    cudaStreamSynchronize(s);
    cudaMemPoolDestroy(pool);
    return 0;
}
