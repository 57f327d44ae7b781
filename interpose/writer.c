/* writer.c — the writer thread: opens the database on the first event,
 * drains the queue into the store, commits at least every commit_ms (and
 * when the queue stays dry for a nap), answers flush requests, and writes the
 * final run row at shutdown. The only thread that touches SQLite. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "answers.h"
#include "outpath.h"
#include "pyframes.h"
#include "recorder.h"
#include "state.h"
#include "store.h"
#include "clock.h"
#include "fdtable.h"
#include "launcher_link.h"
#include "unwind.h"
#include "usage.h"

#ifndef GL_VERSION
#define GL_VERSION "0.0.0"
#endif

static void read_cmdline(char *buf, size_t sz)
{
    buf[0] = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, sz - 1);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = 0;
    for (ssize_t i = 0; i < n - 1; i++)
        if (!buf[i])
            buf[i] = ' ';
}

/* This process records nothing: say why, on stderr and to the launcher. */
static void cannot_record(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void cannot_record(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gl_warn("%s; the program runs on unprofiled", msg);
    gl_link_tell(gl_st.cfg.manifest, GL_LINK_FAIL, msg);
}

static void put_meta(void *store, const char *key, const char *value)
{
    gl_store_meta(store, key, value);
}

static struct gl_store *open_store(void)
{
    char host[256] = "unknown", pattern_out[PATH_MAX], chosen[PATH_MAX], abspath[PATH_MAX];
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = 0;
    const char *rank = gl_rank_from_env();
    if (gl_expand_pattern(gl_st.cfg.output, getpid(), host, rank, pattern_out, sizeof pattern_out) ||
        gl_in_directory(pattern_out, sizeof pattern_out, getpid())) {
        cannot_record("GPULEDGER_OUTPUT='%s' expands to a name that is too long", gl_st.cfg.output);
        return NULL;
    }
    if (gl_create_exclusive(pattern_out, chosen, sizeof chosen)) {
        cannot_record("cannot create %s: %s (set GPULEDGER_OUTPUT or -o to a writable path)", pattern_out,
                      strerror(errno));
        return NULL;
    }
    if (strcmp(chosen, pattern_out))
        gl_warn("%s exists already; writing %s instead", pattern_out, chosen);
    if (!realpath(chosen, abspath))
        snprintf(abspath, sizeof abspath, "%s", chosen);
    static char cmdline[8192];
    read_cmdline(cmdline, sizeof cmdline);
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    uint64_t mono = gl_now_ns();
    uint64_t unix_ns = (uint64_t)rt.tv_sec * 1000000000ULL + (uint64_t)rt.tv_nsec;
    struct gl_run_info info = {
        .pid = getpid(),
        .ppid = getppid(),
        .hostname = host,
        .rank = rank,
        .cmdline = cmdline,
        .start_ns = gl_st.start_ns,
        .start_unix_ns = unix_ns - (mono - gl_st.start_ns),
        .stack_depth = gl_st.cfg.stack_depth,
        .version = GL_VERSION,
    };
    char err[1024];
    struct gl_store *s = gl_store_open(chosen, &info, gl_st.cfg.symbolize, err, sizeof err);
    if (!s) {
        cannot_record("%s", err);
        unlink(chosen); /* we created it, empty, a moment ago */
        return NULL;
    }
    char num[64];
    snprintf(num, sizeof num, "%llu", (unsigned long long)(unix_ns - mono));
    gl_store_meta(s, "monotonic_to_unix_ns", num);
    gl_queue_meta(&gl_st.queue, put_meta, s);
    gl_config_meta(&gl_st.cfg, put_meta, s);
    gl_clock_meta(put_meta, s);
    gl_store_set_python(s, gl_py_describe);
    gl_py_meta(put_meta, s);
    snprintf(gl_st.db_path, sizeof gl_st.db_path, "%s", abspath);
    gl_link_tell(gl_st.cfg.manifest, GL_LINK_DB, abspath);
    return s;
}

static void counters(struct gl_run_counters *c)
{
    c->dropped_events = atomic_load(&gl_st.queue.dropped);
    c->truncated_stacks = atomic_load(&gl_st.truncated);
}

/* The store failed (disk full, I/O error): say so once, stop recording. */
static void store_failed(struct gl_store *s)
{
    gl_warn("writing %s failed (%s); recording stops here, the program runs on", gl_st.db_path,
            gl_store_error(s));
    int expect = GL_PHASE_RECORDING;
    atomic_compare_exchange_strong(&gl_st.phase, &expect, GL_PHASE_DISABLED);
}

/* The process's own figure is sampled when a device's ledger first has
 * memory and whenever it passes its last sampled high-water mark by 2 MiB
 * (usage.h): compared after every batch. */
#define USAGE_STEP (2ULL << 20)

static void usage_check(struct gl_store *s, uint64_t *marks, unsigned char *seen)
{
    for (int d = 0; d < GL_MAX_DEVICES; d++) {
        uint64_t peak = gl_store_device_peak(s, d);
        if (peak && (!seen[d] || peak >= marks[d] + USAGE_STEP)) {
            seen[d] = 1;
            marks[d] = peak;
            gl_usage_request(d);
        }
    }
}

/* A question the program asked (ask.c), now that everything queued before
 * it is written and committed. */
static void answer(struct gl_store *s, int ok)
{
    int expect = GL_ASK_ASKED;
    if (!atomic_compare_exchange_strong(&gl_st.ask_state, &expect, GL_ASK_TAKEN))
        return; /* withdrawn meanwhile */
    if (ok)
        gl_store_answer(s, gl_st.question);
    else
        gl_st.question->rc = -1; /* the store failed: nothing to answer from */
    atomic_store(&gl_st.ask_state, GL_ASK_ANSWERED);
}

/* "0 B", "512 B", "4.39 KiB", "82.00 MiB": as the report writes sizes */
static void human_bytes(char *out, size_t cap, unsigned long long n)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (n < 1024) {
        snprintf(out, cap, "%llu B", n);
        return;
    }
    double v = (double)n;
    unsigned u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    snprintf(out, cap, "%.2f %s", v, unit[u]);
}

#define HOLD_WAIT_NS 200000ULL

static void *writer_main(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    gl_thread_reset(1); /* nothing this thread does is recorded */
    prctl(PR_SET_NAME, "gpuledger-wr", 0, 0, 0);

    struct gl_queue *q = &gl_st.queue;
    char why[256];
    if (gl_fd_leave_shared(why, sizeof why) != 0) {
        gl_warn("cannot give the writer a descriptor table of its own (%s), which keeps the database out of "
                "the program's reach; recording is off, the program runs on (close_range needs Linux 5.9 or "
                "later and, in a container, a seccomp profile from 2021 or later)",
                why);
        atomic_store(&gl_st.phase, GL_PHASE_DISABLED);
        atomic_store(&gl_st.writer_state, GL_WRITER_DONE);
        return NULL;
    }
    pthread_mutex_lock(&gl_st.fork_lock);
    struct gl_store *s = open_store();
    pthread_mutex_unlock(&gl_st.fork_lock);
    if (!s) {
        atomic_store(&gl_st.phase, GL_PHASE_DISABLED);
        atomic_store(&gl_st.writer_state, GL_WRITER_DONE);
        return NULL;
    }
    int ok = 1, dirty = 0, was_dry = 0;
    static uint64_t usage_marks[GL_MAX_DEVICES];
    static unsigned char usage_seen[GL_MAX_DEVICES];
    memset(usage_marks, 0, sizeof usage_marks); /* a fork child starts again */
    memset(usage_seen, 0, sizeof usage_seen);
    uint64_t last_commit = gl_now_ns(), stop_deadline = 0, last_probe = last_commit;
    const uint64_t commit_ns = (uint64_t)gl_st.cfg.commit_ms * 1000000ULL;
    struct timespec nap = {0, 500000};
    uint64_t held = UINT64_MAX, held_since = 0;
    for (;;) {
        int stop = atomic_load(&gl_st.stop);
        uint64_t freq = atomic_load(&gl_st.flush_req);
        int asked = atomic_load(&gl_st.ask_state) == GL_ASK_ASKED;
        int flush = freq != atomic_load(&gl_st.flush_done) || stop || asked;
        size_t n = 0;
        struct gl_event *ev;
        pthread_mutex_lock(&gl_st.fork_lock);
        gl_clock_anchor();
        while (flush || n < 16384) {
            if ((ev = gl_queue_peek(q)) == NULL) {
                /* A slot its thread still holds (a PyTorch block's free,
                 * waiting for the completion that usually follows at once)
                 * is settled within microseconds; one still held after
                 * HOLD_WAIT_NS (its thread went quiet), or at a flush, is
                 * taken as it is. */
                uint64_t h = gl_queue_held_at(q), t = gl_now_ns();
                if (h == UINT64_MAX)
                    break;
                if (h != held) {
                    held = h;
                    held_since = t;
                }
                if (!flush && t - held_since < HOLD_WAIT_NS)
                    break;
                gl_queue_steal(q);
                continue;
            }
            if (ev->flags & GL_EVF_TS_NS)
                ev->flags &= ~GL_EVF_TS_NS;
            else
                ev->ts_ns = gl_stamp_to_ns(ev->stamp);
            if (ok && gl_store_add(s, ev) != 0) {
                ok = 0;
                store_failed(s);
            }
            gl_queue_release(q);
            n++;
        }
        dirty |= n > 0;
        if (n && ok)
            usage_check(s, usage_marks, usage_seen);
        uint64_t now = gl_now_ns();
        /* Commit at least every commit_ms, at a flush, and when the ring
         * has stayed dry for a whole nap (the program went quiet). Not at
         * each moment it runs dry: a writer keeping pace with a busy
         * program finds it dry every few hundred events, and a commit per
         * few hundred events costs it a third more per event. */
        int quiet = n == 0 && was_dry;
        was_dry = n == 0;
        if (ok && dirty && (quiet || flush || now - last_commit >= commit_ns)) {
            struct gl_run_counters c;
            counters(&c);
            if (gl_store_commit(s, &c) != 0) {
                ok = 0;
                store_failed(s);
            }
            last_commit = now;
            dirty = 0;
        }
        if (flush && atomic_exchange(&gl_st.checkpoint_req, 0) && ok && !dirty)
            gl_store_checkpoint(s); /* an exec comes: the .db file alone complete */
        if (asked)
            answer(s, ok);
        pthread_mutex_unlock(&gl_st.fork_lock);
        /* mutexes are not fair: let a waiting fork have the lock */
        struct timespec step_aside = {0, 100000};
        while (atomic_load(&gl_st.fork_pending))
            nanosleep(&step_aside, NULL);
        if (flush)
            atomic_store(&gl_st.flush_done, freq);
        if (stop) {
            /* Wait briefly for slots claimed but not yet published. */
            if (!stop_deadline)
                stop_deadline = now + 1000000000ULL;
            if (gl_queue_backlog(q) == 0 || now > stop_deadline)
                break;
        }
        if (n == 0)
            nanosleep(&nap, NULL);
        /* a CPython loaded after start-up (dlopen, embedding): look again */
        if (gl_st.cfg.python && gl_st.cfg.stack_depth && !gl_py_ready() && now - last_probe > 1000000000ULL) {
            last_probe = now;
            pthread_mutex_lock(&gl_st.fork_lock);
            if (gl_py_probe(gl_st.cfg.python_depth) && ok)
                gl_py_meta(put_meta, s);
            pthread_mutex_unlock(&gl_st.fork_lock);
        }
    }
    pthread_mutex_lock(&gl_st.fork_lock);
    if (ok) {
        struct gl_run_counters c;
        counters(&c);
        gl_unwind_meta(put_meta, s);
        if (gl_store_finish(s, &c, gl_now_ns(), atomic_load(&gl_st.exit_code), atomic_load(&gl_st.exit_signal)))
            store_failed(s);
    }
    if (!gl_st.cfg.quiet && !gl_st.cfg.manifest) {
        char peak[32];
        unsigned long long events = (unsigned long long)gl_store_event_count(s);
        human_bytes(peak, sizeof peak, (unsigned long long)gl_store_peak_bytes(s));
        gl_warn("wrote %s: %llu event%s, peak %s", gl_st.db_path, events, events == 1 ? "" : "s", peak);
    }
    gl_store_close(s);
    pthread_mutex_unlock(&gl_st.fork_lock);
    atomic_store(&gl_st.writer_state, GL_WRITER_DONE);
    return NULL;
}

int gl_writer_start(void)
{
    gl_usage_start(); /* if no driver lookup came first */
    /* the ring is mapped at the first event (before any thread can see the
     * writer running and claim a slot) */
    if (gl_queue_map(&gl_st.queue) != 0) {
        int expect_none = GL_WRITER_NONE;
        if (atomic_compare_exchange_strong(&gl_st.writer_state, &expect_none, GL_WRITER_DONE)) {
            gl_warn("cannot map the event queue (%s); the program runs on unprofiled", strerror(errno));
            atomic_store(&gl_st.phase, GL_PHASE_DISABLED);
        }
        return -1;
    }
    int expect = GL_WRITER_NONE;
    if (!atomic_compare_exchange_strong(&gl_st.writer_state, &expect, GL_WRITER_RUNNING))
        return atomic_load(&gl_st.writer_state) == GL_WRITER_RUNNING ? 0 : -1;
    int rc = pthread_create(&gl_st.writer, NULL, writer_main, NULL);
    if (rc != 0) {
        gl_warn("cannot start the writer thread (%s); the program runs on unprofiled", strerror(rc));
        atomic_store(&gl_st.phase, GL_PHASE_DISABLED);
        atomic_store(&gl_st.writer_state, GL_WRITER_DONE);
        return -1;
    }
    return 0;
}
