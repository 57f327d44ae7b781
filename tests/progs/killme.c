/* killme.c — allocates and frees forever (until killed). Every 2000 pairs
 * it asks gpuledger a question (gpuledger_checkpoint + gpuledger_usage,
 * which the writer answers only once everything recorded before is stored
 * and committed) and then appends "<pairs done>\n" to the file argv[1]: a
 * test that SIGKILLs it at any moment knows, from the last line, a number
 * of pairs the database must hold, whatever the machine's load. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gpuledger.h"

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    if (fd < 0)
        return 2;
    uint64_t (*checkpoint)(void) = (uint64_t(*)(void))dlsym(RTLD_DEFAULT, "gpuledger_checkpoint");
    int (*usage)(uint64_t, int, struct gpuledger_usage *) =
        (int (*)(uint64_t, int, struct gpuledger_usage *))dlsym(RTLD_DEFAULT, "gpuledger_usage");
    if (!checkpoint || !usage)
        return 4;
    cudaStream_t s;
    cudaStreamCreate(&s);
    for (long n = 1;; n++) {
        void *p = NULL;
        cudaMallocAsync(&p, 4096, s);
        cudaFreeAsync(p, s);
        if (n % 2000 == 0) {
            struct gpuledger_usage u;
            if (usage(checkpoint(), GPULEDGER_LAYER_DEVICE, &u) != 0)
                return 5;
            char line[32];
            int len = snprintf(line, sizeof line, "%ld\n", n);
            if (write(fd, line, (size_t)len) != len)
                return 3;
        }
    }
}
