/* nocuda.c — a process that makes no CUDA memory call (or one, last), for
 * what gpuledger costs it; argv[1]:
 *   mem       prints "private_dirty_kb N big_anon M": the process's private
 *             dirty memory (smaps_rollup) and its anonymous mappings of
 *             8 MiB or more (where the event ring would be)
 *   mem-cuda  the same after one 1 MiB cudaMalloc and its free
 *   fork N    forks N children that _exit(0) at once, one after the other;
 *             each child first prints its "mem" line when N is 1
 *   threads N creates and joins N threads that do nothing, one at a time
 *   stderr-file FILE  closes fd 2, opens FILE (it becomes fd 2), writes
 *             "data\n", one 1 MiB cudaMalloc and its free, writes "end\n"
 *   cuda-threads N  the same, each thread making one 4 KiB cudaMalloc and
 *             its cudaFree */
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void print_mem(void)
{
    long dirty = -1, big = 0;
    char line[512];
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "Private_Dirty:", 14))
            dirty = strtol(line + 14, NULL, 10);
    if (f)
        fclose(f);
    f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi, off, inode;
        char perms[8], dev[16];
        if (sscanf(line, "%lx-%lx %7s %lx %15s %lu", &lo, &hi, perms, &off, dev, &inode) == 6 && inode == 0 &&
            !strchr(line, '[') && hi - lo >= (8ul << 20))
            big++;
    }
    if (f)
        fclose(f);
    printf("private_dirty_kb %ld big_anon %ld\n", dirty, big);
    fflush(stdout);
}

static void *nothing(void *arg)
{
    return arg;
}

static void *one_pair(void *arg)
{
    void *p = NULL;
    cudaMalloc(&p, 4096);
    cudaFree(p);
    return arg;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "mem";
    long n = argc > 2 ? strtol(argv[2], NULL, 10) : 1;
    if (!strcmp(mode, "mem") || !strcmp(mode, "mem-cuda")) {
        if (!strcmp(mode, "mem-cuda")) {
            void *p = NULL;
            cudaMalloc(&p, 1u << 20);
            cudaFree(p);
        }
        print_mem();
        return 0;
    }
    if (!strcmp(mode, "stderr-file") && argc > 2) {
        close(2);
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd != 2 || write(fd, "data\n", 5) != 5)
            return 1;
        void *p = NULL;
        cudaMalloc(&p, 1u << 20);
        cudaFree(p);
        return write(fd, "end\n", 4) == 4 ? 0 : 1;
    }
    if (!strcmp(mode, "fork")) {
        for (long i = 0; i < n; i++) {
            pid_t pid = fork();
            if (pid == 0) {
                if (n == 1)
                    print_mem();
                _exit(0);
            }
            int st;
            waitpid(pid, &st, 0);
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                return 1;
        }
        return 0;
    }
    if (!strcmp(mode, "threads") || !strcmp(mode, "cuda-threads")) {
        for (long i = 0; i < n; i++) {
            pthread_t t;
            if (pthread_create(&t, NULL, mode[0] == 'c' ? one_pair : nothing, NULL) != 0)
                return 1;
            pthread_join(t, NULL);
        }
        return 0;
    }
    return 2;
}
