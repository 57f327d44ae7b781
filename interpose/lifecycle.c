/* lifecycle.c — start-up, fork, exec, exit and fatal signals for the
 * preloaded library: everything that decides when recording starts and how
 * the database is finished, so that an exit, an exec or a crash still leaves
 * a complete, committed file behind. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture_gate.h"
#include "clock.h"
#include "errout.h"
#include "real.h"
#include "relay.h"
#include "signals.h"
#include "recorder.h"
#include "pyframes.h"
#include "stack.h"
#include "state.h"
#include "unwind.h"
#include "usage.h"

static void warn_config(const char *msg)
{
    gl_warn("%s", msg);
}

/* ---- fatal signals ------------------------------------------------------ */

static void gl_finish(unsigned timeout_ms, int join);

static void on_fatal_signal(int sig)
{
    int saved = errno;
    atomic_store(&gl_st.exit_signal, sig);
    gl_finish(2000, 0); /* the process is ending: write the final run row */
    /* Back to the default action and deliver the signal again: the process
     * ends exactly as it would have without us. */
    gl_signals_default(sig);
    errno = saved;
    raise(sig);
}

/* ---- start-up ----------------------------------------------------------- */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static int fork_locked;

static void fork_prepare(void)
{
    /* no thread may be reading unwind rules (inside dl_iterate_phdr, under
     * the loader's lock) while the process forks */
    gl_unwind_fork_prepare();
    /* wait for the writer to leave SQLite/the loader (a batch, milliseconds) */
    if (atomic_load(&gl_st.writer_state) == GL_WRITER_RUNNING) {
        atomic_store(&gl_st.fork_pending, 1);
        pthread_mutex_lock(&gl_st.fork_lock);
        atomic_store(&gl_st.fork_pending, 0);
        fork_locked = 1;
    }
}

static void fork_parent(void)
{
    gl_unwind_fork_parent();
    if (fork_locked) {
        fork_locked = 0;
        pthread_mutex_unlock(&gl_st.fork_lock);
    }
}

static void fork_child(void)
{
    fork_locked = 0;
    pthread_mutex_init(&gl_st.fork_lock, NULL);
    gl_py_after_fork();
    gl_unwind_after_fork();
    gl_capture_gate_after_fork();
    /* Only the forking thread exists here. The parent's SQLite connection
     * must never be used (nor closed) in the child: leave it, and start a
     * fresh database of the child's own on its first event. */
    gl_thread_reset(0);
    if (atomic_load(&gl_st.phase) != GL_PHASE_RECORDING)
        return;
    gl_queue_reset(&gl_st.queue);
    atomic_store(&gl_st.writer_state, GL_WRITER_NONE);
    atomic_store(&gl_st.stop, 0);
    atomic_store(&gl_st.flush_req, 0);
    atomic_store(&gl_st.flush_done, 0);
    pthread_mutex_init(&gl_st.ask_lock, NULL);
    atomic_store(&gl_st.ask_state, GL_ASK_IDLE);
    gl_st.question = NULL;
    atomic_store(&gl_st.truncated, 0);
    atomic_store(&gl_st.congested, 0);
    atomic_store(&gl_st.exit_code, -1);
    atomic_store(&gl_st.exit_signal, 0);
    gl_st.db_path[0] = 0;
    gl_st.start_ns = gl_now_ns();
    gl_st.pid = getpid();
}

/* GPULEDGER_QUEUE_SLOTS, bounded by the memory the ring takes when full
 * (GL_RING_MAX_BYTES): the slots, rounded up to a power of two, or the
 * most that fit, said once. */
#define GL_RING_MAX_BYTES (1024ULL << 20)

static size_t ring_slots(size_t want, uint32_t words)
{
    size_t slot = gl_queue_slot_bytes(words), cap = 2;
    while (cap < want)
        cap <<= 1;
    if ((unsigned long long)cap * slot <= GL_RING_MAX_BYTES)
        return cap;
    size_t fit = 2;
    while ((unsigned long long)fit * 2 * slot <= GL_RING_MAX_BYTES)
        fit <<= 1;
    gl_warn("GPULEDGER_QUEUE_SLOTS=%zu: %zu slots of %zu bytes (stack depth %u) would take %llu MiB when full, "
            "more than the 1024 MiB allowed; using %zu slots (%llu MiB)",
            want, cap, slot, gl_st.cfg.stack_depth, (unsigned long long)cap * slot >> 20, fit,
            (unsigned long long)fit * slot >> 20);
    return fit;
}

static void init_once_fn(void)
{
    gl_stderr_remember();
    gl_st.start_ns = gl_now_ns();
    gl_st.pid = getpid();
    gl_config_load(&gl_st.cfg, warn_config);
    gl_real_init();
    if (gl_st.cfg.disable) {
        atomic_store(&gl_st.phase, GL_PHASE_DISABLED);
        return;
    }
    /* for tests: re-anchor the TSC mapping this often (microseconds) */
    const char *check_us = getenv("GL_TEST_CLOCK_CHECK_US");
    if (check_us)
        gl_clock_set_check_ns(strtoull(check_us, NULL, 10) * 1000ULL);
    gl_clock_init(gl_st.cfg.clock_tsc);
    gl_stack_init();
    gl_stack_use_fast(gl_st.cfg.unwind);
    /* a Python process: room in each slot for its frames too */
    unsigned py_room = 0;
    if (gl_st.cfg.python && gl_st.cfg.stack_depth && gl_py_probe(gl_st.cfg.python_depth))
        py_room = gl_st.cfg.python_depth;
    uint32_t words = gl_st.cfg.stack_depth + GL_STACK_SLACK + py_room;
    gl_queue_init(&gl_st.queue, ring_slots(gl_st.cfg.queue_slots, words), words);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    gl_signals_arm(on_fatal_signal);
    atomic_store(&gl_st.phase, GL_PHASE_RECORDING);
}

void gl_init(void)
{
    int saved = errno;
    pthread_once(&init_once, init_once_fn);
    errno = saved;
}

__attribute__((constructor)) static void gl_constructor(void)
{
    gl_init();
}

/* ---- flush and shutdown ------------------------------------------------- */

int gl_flush_sync(unsigned timeout_ms)
{
    if (atomic_load(&gl_st.writer_state) != GL_WRITER_RUNNING)
        return 0;
    uint64_t req = atomic_fetch_add(&gl_st.flush_req, 1) + 1;
    struct timespec nap = {0, 200000};
    for (unsigned waited = 0; waited < timeout_ms * 5; waited++) {
        if (atomic_load(&gl_st.flush_done) >= req || atomic_load(&gl_st.writer_state) != GL_WRITER_RUNNING) {
            gl_relay_flush();
            return 0;
        }
        nanosleep(&nap, NULL);
    }
    return -1;
}

/* Stop recording and let the writer drain, write the final run row and
 * close. Waits up to timeout_ms; joins the writer only when `join` (never
 * from a signal handler). */
static void gl_finish(unsigned timeout_ms, int join)
{
    static _Atomic int done;
    if (atomic_exchange(&done, 1))
        return;
    int saved = errno;
    atomic_store(&gl_st.phase, GL_PHASE_STOPPED);
    if (atomic_load(&gl_st.writer_state) == GL_WRITER_RUNNING) {
        atomic_store(&gl_st.stop, 1);
        struct timespec nap = {0, 1000000};
        for (unsigned i = 0; i < timeout_ms && atomic_load(&gl_st.writer_state) == GL_WRITER_RUNNING; i++)
            nanosleep(&nap, NULL);
        if (atomic_load(&gl_st.writer_state) != GL_WRITER_DONE)
            gl_warn("the writer did not finish within %u ms; %s may lack the last events", timeout_ms,
                    gl_st.db_path);
        else if (join)
            pthread_join(gl_st.writer, NULL);
    }
    gl_relay_flush();
    errno = saved;
}

void gl_cupti_shutdown(void);

void gl_shutdown(void)
{
#ifdef GL_HAVE_CUPTI
    gl_cupti_shutdown(); /* CUPTI delivers buffered activity records only on a flush */
#endif
    gl_finish(10000, 1);
}

__attribute__((destructor)) static void gl_destructor(void)
{
    gl_shutdown();
}

/* ---- exit status ---------------------------------------------------------
 * main's return value reaches exit() inside libc, where no wrapper sees it,
 * so __libc_start_main is wrapped to learn it. exit, _exit and _Exit called
 * by the program are wrapped too. */

typedef int (*main_fn)(int, char **, char **);
static main_fn real_main;

static int main_wrapper(int argc, char **argv, char **envp)
{
    int rc = real_main(argc, argv, envp);
    atomic_store(&gl_st.exit_code, rc & 0xff);
    gl_usage_at_exit(); /* before exit handlers tear CUDA down */
    return rc;
}

GL_EXPORT int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end)
{
    typedef int (*lsm_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *);
    lsm_fn real = (lsm_fn)gl_real_next("__libc_start_main");
    real_main = main;
    return real(main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}

GL_EXPORT void exit(int status)
{
    typedef void (*exit_fn)(int);
    atomic_store(&gl_st.exit_code, status & 0xff);
    gl_usage_at_exit();
    exit_fn real = (exit_fn)gl_real_next("exit");
    real(status);
    __builtin_unreachable();
}

GL_EXPORT void _exit(int status)
{
    typedef void (*exit_fn)(int);
    /* A vfork child shares our memory but not our pid: it must not stop
     * the parent's recording. */
    if (getpid() == gl_st.pid) {
        atomic_store(&gl_st.exit_code, status & 0xff);
        gl_shutdown();
    }
    exit_fn real = (exit_fn)gl_real_next("_exit");
    real(status);
    __builtin_unreachable();
}

GL_EXPORT void _Exit(int status)
{
    _exit(status);
}

/* ---- exec ----------------------------------------------------------------
 * exec replaces the image without running exit handlers: commit what is
 * queued first, and checkpoint the WAL so that the first image's .db file
 * alone holds it. If the exec fails the program goes on, still recorded.
 * libc's own exec family calls its internal execve, out of our reach: each
 * entry point is wrapped (execl, execle, execlp build their argv here).
 * posix_spawn replaces only the child's image: nothing of ours is lost. */

static void exec_flush(void)
{
    int saved = errno;
    atomic_store(&gl_st.checkpoint_req, 1);
    gl_flush_sync(2000);
    errno = saved;
}

GL_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    typedef int (*fn)(const char *, char *const[], char *const[]);
    exec_flush();
    return ((fn)gl_real_next("execve"))(path, argv, envp);
}

GL_EXPORT int execv(const char *path, char *const argv[])
{
    typedef int (*fn)(const char *, char *const[]);
    exec_flush();
    return ((fn)gl_real_next("execv"))(path, argv);
}

GL_EXPORT int execvp(const char *file, char *const argv[])
{
    typedef int (*fn)(const char *, char *const[]);
    exec_flush();
    return ((fn)gl_real_next("execvp"))(file, argv);
}

GL_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    typedef int (*fn)(const char *, char *const[], char *const[]);
    exec_flush();
    return ((fn)gl_real_next("execvpe"))(file, argv, envp);
}

GL_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    typedef int (*fn)(int, char *const[], char *const[]);
    exec_flush();
    return ((fn)gl_real_next("fexecve"))(fd, argv, envp);
}

GL_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
    typedef int (*fn)(int, const char *, char *const[], char *const[], int);
    exec_flush();
    return ((fn)gl_real_next("execveat"))(dirfd, path, argv, envp, flags);
}

/* The arguments of execl/execle/execlp after `arg`, up to the NULL, as an
 * argv (in `small` when they fit, else malloc'd: exec is no hot path);
 * *envp receives the pointer after the NULL when want_env. NULL if out of
 * memory (errno ENOMEM). */
#define SMALL_ARGV 256
static char **collect_args(const char *arg, va_list ap, char **small, char ***envp, int want_env)
{
    va_list count;
    va_copy(count, ap);
    size_t n = 1;
    if (arg)
        while (va_arg(count, char *) != NULL)
            n++;
    va_end(count);
    char **argv = n + 1 <= SMALL_ARGV ? small : malloc((n + 1) * sizeof *argv);
    if (!argv) {
        errno = ENOMEM;
        return NULL;
    }
    argv[0] = (char *)arg;
    for (size_t i = 1; arg && i < n; i++)
        argv[i] = va_arg(ap, char *);
    argv[arg ? n : 0] = NULL;
    if (arg)
        (void)va_arg(ap, char *); /* the NULL */
    if (want_env)
        *envp = va_arg(ap, char **);
    return argv;
}

extern char **environ;

GL_EXPORT int execl(const char *path, const char *arg, ...)
{
    char *small[SMALL_ARGV];
    va_list ap;
    va_start(ap, arg);
    char **argv = collect_args(arg, ap, small, NULL, 0);
    va_end(ap);
    if (!argv)
        return -1;
    int rc = execve(path, argv, environ);
    int saved = errno;
    if (argv != small)
        free(argv);
    errno = saved;
    return rc;
}

GL_EXPORT int execle(const char *path, const char *arg, ...)
{
    char *small[SMALL_ARGV];
    char **envp = NULL;
    va_list ap;
    va_start(ap, arg);
    char **argv = collect_args(arg, ap, small, &envp, 1);
    va_end(ap);
    if (!argv)
        return -1;
    int rc = execve(path, argv, envp);
    int saved = errno;
    if (argv != small)
        free(argv);
    errno = saved;
    return rc;
}

GL_EXPORT int execlp(const char *file, const char *arg, ...)
{
    char *small[SMALL_ARGV];
    va_list ap;
    va_start(ap, arg);
    char **argv = collect_args(arg, ap, small, NULL, 0);
    va_end(ap);
    if (!argv)
        return -1;
    int rc = execvp(file, argv);
    int saved = errno;
    if (argv != small)
        free(argv);
    errno = saved;
    return rc;
}
