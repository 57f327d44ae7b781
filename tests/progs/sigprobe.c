/* sigprobe.c — what a program sees of the signals gpuledger finishes its
 * database on, selected by argv[1]:
 *   probe   prints, for SIGSEGV SIGBUS SIGILL SIGFPE SIGABRT SIGTERM SIGINT
 *           SIGHUP SIGQUIT, "SIG dfl|other flags=N" as sigaction reads it, and
 *           what signal() and sigset() return, after one 1 MiB cudaMalloc
 *   term    1 MiB cudaMalloc; SIGTERM set to the default with SA_RESTART and a
 *           mask of SIGUSR1, read back ("flags=restart mask=usr1"), raised
 *   own     1 MiB cudaMalloc; its own SIGINT handler, raised ("caught 1");
 *           signal(SIGINT, SIG_DFL) returns that handler ("back own"); raised */
#include <cuda_runtime_api.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM, SIGINT, SIGHUP, SIGQUIT};
static volatile sig_atomic_t caught;

static void own(int sig)
{
    (void)sig;
    caught++;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "probe";
    void *p = NULL;
    cudaMalloc(&p, 1u << 20);
    if (!strcmp(mode, "probe")) {
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
            struct sigaction sa;
            sigaction(sigs[i], NULL, &sa);
            sighandler_t s = signal(sigs[i], SIG_DFL);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
            sighandler_t v = sigset(sigs[i], SIG_DFL);
#pragma GCC diagnostic pop
            printf("%s %s flags=%d signal=%s sigset=%s\n", strsignal(sigs[i]),
                   sa.sa_handler == SIG_DFL ? "dfl" : "other", sa.sa_flags, s == SIG_DFL ? "dfl" : "other",
                   v == SIG_DFL ? "dfl" : "other");
        }
        return 0;
    }
    if (!strcmp(mode, "term")) {
        struct sigaction sa, back;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_DFL;
        sigemptyset(&sa.sa_mask);
        sigaddset(&sa.sa_mask, SIGUSR1);
        sa.sa_flags = SA_RESTART;
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGTERM, NULL, &back);
        printf("flags=%s mask=%s\n", back.sa_flags == SA_RESTART ? "restart" : "other",
               sigismember(&back.sa_mask, SIGUSR1) ? "usr1" : "other");
        fflush(stdout);
        raise(SIGTERM);
        return 1;
    }
    if (!strcmp(mode, "own")) {
        signal(SIGINT, own);
        raise(SIGINT);
        printf("caught %d\n", (int)caught);
        printf("back %s\n", signal(SIGINT, SIG_DFL) == own ? "own" : "other");
        fflush(stdout);
        raise(SIGINT);
        return 1;
    }
    return 2;
}
