/* execself.c — allocates 1 MiB (leaked), then execs itself with "again",
 * which allocates 2 MiB and exits. The first image's event must reach its
 * database before exec replaces it. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    void *p = NULL;
    if (argc > 1 && !strcmp(argv[1], "again")) {
        cudaMalloc(&p, 2u << 20);
        return 0;
    }
    cudaMalloc(&p, 1u << 20);
    char *const args[] = {argv[0], "again", NULL};
    execv("/proc/self/exe", args);
    perror("execv");
    return 1;
}
