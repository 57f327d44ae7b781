/* signals.c — our handler for the signals that end a process, kept
 * underneath what the program sees (signals.h).
 *
 * Where one of the nine signals is at its default when recording starts,
 * our handler is installed for real, and a shadow disposition (the default,
 * as the program last set or read it) is what sigaction and its relatives
 * report. A program (CPython, for SIGINT) that finds the default and
 * installs a handler gets that handler installed for real and ours is gone
 * for that signal; a program that sets the default again gets ours back
 * underneath (so CPython's exit on an uncaught KeyboardInterrupt, which sets
 * SIGINT to the default and raises it, still finishes the database). The
 * nine signals' shadows change under a lock taken with every signal blocked,
 * so a handler calling sigaction cannot deadlock against its own thread. */
#include "signals.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "real.h"
#include "recorder.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM, SIGINT, SIGHUP, SIGQUIT};
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])

static _Atomic(sigaction_fn) real_sa;
static void (*fatal_cb)(int);
static atomic_flag lock = ATOMIC_FLAG_INIT;

/* Per signal number: ours is installed for real (1) or not (0); what the
 * program believes the disposition is while ours is (shadow). */
static _Atomic int armed[NSIG];
static struct sigaction shadow[NSIG];
/* signal()'s flags: SA_RESTART unless siginterrupt(sig, 1) (as glibc) */
static _Atomic int interrupting[NSIG];

static sigaction_fn real_sigaction(void)
{
    sigaction_fn f = atomic_load_explicit(&real_sa, memory_order_acquire);
    if (!f) {
        gl_real_init();
        f = (sigaction_fn)gl_real_next("sigaction");
        atomic_store_explicit(&real_sa, f, memory_order_release);
    }
    return f;
}

static int is_fatal(int sig)
{
    for (size_t i = 0; i < NFATAL; i++)
        if (fatal_signals[i] == sig)
            return 1;
    return 0;
}

static void on_signal(int sig)
{
    if (fatal_cb)
        fatal_cb(sig);
}

static void lock_all(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, old);
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
        ;
}

static void unlock_all(const sigset_t *old)
{
    atomic_flag_clear_explicit(&lock, memory_order_release);
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

static void ours(struct sigaction *sa)
{
    memset(sa, 0, sizeof *sa);
    sa->sa_handler = on_signal;
    sigemptyset(&sa->sa_mask);
    sa->sa_flags = SA_RESTART;
}

void gl_signals_arm(void (*on_fatal)(int sig))
{
    sigaction_fn real = real_sigaction();
    if (!real)
        return;
    fatal_cb = on_fatal;
    sigset_t old;
    lock_all(&old);
    for (size_t i = 0; i < NFATAL; i++) {
        int sig = fatal_signals[i];
        struct sigaction now, sa;
        if (real(sig, NULL, &now) != 0 || now.sa_handler != SIG_DFL || (now.sa_flags & SA_SIGINFO))
            continue; /* the program (or its launcher) has its own: leave it */
        ours(&sa);
        if (real(sig, &sa, NULL) == 0) {
            shadow[sig] = now;
            atomic_store(&armed[sig], 1);
        }
    }
    unlock_all(&old);
}

void gl_signals_default(int sig)
{
    sigaction_fn real = real_sigaction();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    if (real)
        real(sig, &sa, NULL);
    atomic_store(&armed[sig], 0);
}

static int is_default(const struct sigaction *act)
{
    return act->sa_handler == SIG_DFL && !(act->sa_flags & SA_SIGINFO);
}

GL_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
    sigaction_fn real = real_sigaction();
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    if (sig <= 0 || sig >= NSIG || !fatal_cb || !is_fatal(sig))
        return real(sig, act, oact);
    sigset_t old;
    lock_all(&old);
    int rc = 0, err = errno;
    struct sigaction before;
    memset(&before, 0, sizeof before);
    if (atomic_load(&armed[sig])) {
        before = shadow[sig];
        if (act && is_default(act)) {
            shadow[sig] = *act; /* ours stays underneath */
        } else if (act) {
            rc = real(sig, act, NULL);
            if (rc == 0)
                atomic_store(&armed[sig], 0);
            else
                err = errno;
        }
    } else if (act && is_default(act)) {
        /* the default again: ours goes back underneath */
        struct sigaction sa;
        ours(&sa);
        rc = real(sig, &sa, &before);
        if (rc == 0) {
            shadow[sig] = *act;
            atomic_store(&armed[sig], 1);
        } else {
            err = errno;
        }
    } else {
        rc = real(sig, act, &before);
        if (rc != 0)
            err = errno;
    }
    unlock_all(&old);
    if (rc == 0 && oact)
        *oact = before;
    errno = err;
    return rc;
}

/* The BSD / System V interfaces, as glibc builds them on sigaction (its
 * own calls to sigaction are internal and would not reach the one above). */

static sighandler_t set_handler(int sig, sighandler_t h, int flags, int mask_self)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    memset(&old, 0, sizeof old);
    sa.sa_handler = h;
    sigemptyset(&sa.sa_mask);
    if (mask_self && sig > 0 && sig < NSIG)
        sigaddset(&sa.sa_mask, sig);
    sa.sa_flags = flags;
    if (h == SIG_ERR || sig <= 0 || sig >= NSIG) {
        errno = EINVAL;
        return SIG_ERR;
    }
    if (sigaction(sig, &sa, &old) < 0)
        return SIG_ERR;
    return old.sa_handler;
}

static int bsd_flags(int sig)
{
    return sig > 0 && sig < NSIG && atomic_load(&interrupting[sig]) ? 0 : SA_RESTART;
}

GL_EXPORT sighandler_t signal(int sig, sighandler_t h)
{
    return set_handler(sig, h, bsd_flags(sig), 1);
}

GL_EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
{
    return set_handler(sig, h, bsd_flags(sig), 1);
}

GL_EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
    return set_handler(sig, h, (int)(SA_RESETHAND | SA_NODEFER), 0);
}

GL_EXPORT sighandler_t __sysv_signal(int sig, sighandler_t h)
{
    return sysv_signal(sig, h);
}

GL_EXPORT int siginterrupt(int sig, int flag)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    if (sig <= 0 || sig >= NSIG) {
        errno = EINVAL;
        return -1;
    }
    if (sigaction(sig, NULL, &sa) < 0)
        return -1;
    atomic_store(&interrupting[sig], flag != 0);
    if (flag)
        sa.sa_flags &= ~SA_RESTART;
    else
        sa.sa_flags |= SA_RESTART;
    return sigaction(sig, &sa, NULL);
}

GL_EXPORT int sigignore(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    return sigaction(sig, &sa, NULL);
}

GL_EXPORT sighandler_t sigset(int sig, sighandler_t disp)
{
    if (sig <= 0 || sig >= NSIG || disp == SIG_ERR) {
        errno = EINVAL;
        return SIG_ERR;
    }
    sigset_t one, old;
    sigemptyset(&one);
    sigaddset(&one, sig);
    if (disp == SIG_HOLD) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        if (sigprocmask(SIG_BLOCK, &one, &old) < 0 || sigaction(sig, NULL, &sa) < 0)
            return SIG_ERR;
        return sigismember(&old, sig) ? SIG_HOLD : sa.sa_handler;
    }
    struct sigaction sa, prev;
    memset(&sa, 0, sizeof sa);
    memset(&prev, 0, sizeof prev);
    sa.sa_handler = disp;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &prev) < 0 || sigprocmask(SIG_UNBLOCK, &one, &old) < 0)
        return SIG_ERR;
    return sigismember(&old, sig) ? SIG_HOLD : prev.sa_handler;
}
