/* minprof.c — a minimal sampling profiler for machines without perf (the
 * GPU machine): LD_PRELOAD it; every 100 µs of process CPU time (SIGPROF)
 * the interrupted thread's program counter is kept; at exit the 40 hottest
 * module+offset pairs are printed to stderr (symbolize them with addr2line
 * -f -e MODULE OFFSET, the module's own symbols when it has no dynamic
 * ones). MINPROF_TID=main: only the main thread's samples. Not part of
 * gpuledger; a measuring aid for scripts/gpu-hotpath.sh. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#define NS (1 << 20)
static uintptr_t pcs[NS];
static volatile unsigned n;
static int main_only;

static void on_prof(int sig, siginfo_t *si, void *uc_)
{
    (void)sig;
    (void)si;
    if (main_only && syscall(SYS_gettid) != getpid())
        return;
    ucontext_t *uc = uc_;
    unsigned i = __atomic_fetch_add(&n, 1, __ATOMIC_RELAXED);
    if (i < NS)
        pcs[i] = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
}

static int cmp_pc(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return (x > y) - (x < y);
}

struct hot {
    uintptr_t pc;
    unsigned count;
};
static int cmp_hot(const void *a, const void *b)
{
    return (int)((const struct hot *)b)->count - (int)((const struct hot *)a)->count;
}

__attribute__((constructor)) static void start(void)
{
    const char *t = getenv("MINPROF_TID");
    main_only = t && !strcmp(t, "main");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_prof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval it = {{0, 100}, {0, 100}};
    setitimer(ITIMER_PROF, &it, NULL);
}

__attribute__((destructor)) static void stop(void)
{
    struct itimerval it = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &it, NULL);
    unsigned m = n < NS ? n : NS;
    qsort(pcs, m, sizeof pcs[0], cmp_pc);
    static struct hot h[NS];
    unsigned k = 0;
    for (unsigned i = 0; i < m; i++) {
        if (k && h[k - 1].pc == pcs[i])
            h[k - 1].count++;
        else
            h[k++] = (struct hot){pcs[i], 1};
    }
    /* by module+symbol (dynamic symbols) first: a function's samples together */
    qsort(h, k, sizeof h[0], cmp_hot);
    fprintf(stderr, "minprof: %u samples\n", m);
    for (unsigned i = 0; i < k && i < 40; i++) {
        Dl_info di;
        if (dladdr((void *)h[i].pc, &di) && di.dli_fname)
            fprintf(stderr, "minprof %5.2f%% %s+0x%lx %s\n", 100.0 * h[i].count / m, di.dli_fname,
                    (unsigned long)(h[i].pc - (uintptr_t)di.dli_fbase), di.dli_sname ? di.dli_sname : "");
        else
            fprintf(stderr, "minprof %5.2f%% 0x%lx\n", 100.0 * h[i].count / m, (unsigned long)h[i].pc);
    }
}
