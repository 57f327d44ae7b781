/* threads.c — N threads (argv[1], default 8) each make M (argv[2],
 * default 2000) cudaMallocAsync/cudaFreeAsync pairs of 512 bytes at once.
 * The integration test checks that not one event is lost or unmatched. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int per_thread = 2000;

static void *worker(void *arg)
{
    (void)arg;
    cudaStream_t s;
    cudaStreamCreate(&s);
    for (int i = 0; i < per_thread; i++) {
        void *p = NULL;
        if (cudaMallocAsync(&p, 512, s) == cudaSuccess)
            cudaFreeAsync(p, s);
    }
    cudaStreamDestroy(s);
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 8;
    if (argc > 2)
        per_thread = atoi(argv[2]);
    pthread_t t[256];
    if (n > 256)
        n = 256;
    cudaFree(0);
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("threads: %d x %d pairs\n", n, per_thread);
    return 0;
}
