/* killme.c — allocates and frees forever (until killed), appending
 * "<pairs done> <CLOCK_MONOTONIC ns>" to the file argv[1] every 500 pairs,
 * so a test can SIGKILL it at any moment and know how many events existed
 * by any given time. */
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    if (fd < 0)
        return 2;
    cudaStream_t s;
    cudaStreamCreate(&s);
    for (long n = 1;; n++) {
        void *p = NULL;
        cudaMallocAsync(&p, 4096, s);
        cudaFreeAsync(p, s);
        if (n % 500 == 0) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            char line[64];
            int len = snprintf(line, sizeof line, "%ld %lld\n", n, (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
            if (write(fd, line, (size_t)len) != len)
                return 3;
        }
    }
}
