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
    if (strcmp(chosen, pattern_out) && !gl_st.cfg.quiet)
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
    if (gl_store_set_budget(s, gl_st.cfg.budget) != 0) /* recorded in full then: said, never fatal */
        gl_warn("GPULEDGER_BUDGET: %s; recording without a budget", gl_store_error(s));
    if (gl_st.cfg.pack && gl_st.cfg.budget)
        gl_warn("GPULEDGER_PACK: a budgeted recording keeps its rows unpacked (its steps are folded instead)");
    else if (gl_st.cfg.pack && gl_store_set_packed(s) != 0)
        gl_warn("GPULEDGER_PACK: %s; recording unpacked", gl_store_error(s));
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
#define BATCH_EVENTS 16384 /* events drained between commits' checks */

/* What the writer carries from one pass of its loop to the next. */
struct writer {
    struct gl_store *s;
    struct gl_queue *q;
    int ok;      /* the store has not failed */
    int dirty;   /* rows written since the last commit */
    int was_dry; /* the last pass found the ring empty */
    uint64_t last_commit, stop_deadline, last_probe, commit_ns;
    uint64_t held, held_since; /* a slot its thread still holds, since when */
    uint64_t usage_marks[GL_MAX_DEVICES];
    unsigned char usage_seen[GL_MAX_DEVICES];
};

/* The writer's thread: no signals, nothing recorded, a name, and a
 * descriptor table of its own. Nonzero: recording cannot go on. */
static int writer_enter(void)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    gl_thread_reset(1); /* nothing this thread does is recorded */
    prctl(PR_SET_NAME, "gpuledger-wr", 0, 0, 0);
    char why[256];
    if (gl_fd_leave_shared(why, sizeof why) != 0) {
        gl_warn("cannot give the writer a descriptor table of its own (%s), which keeps the database out of "
                "the program's reach; recording is off, the program runs on (close_range needs Linux 5.9 or "
                "later and, in a container, a seccomp profile from 2021 or later)",
                why);
        return -1;
    }
    return 0;
}

/* The next event of the ring, NULL when there is none to take now. A slot
 * its thread still holds (a PyTorch block's free, waiting for the
 * completion that usually follows at once) is settled within
 * microseconds; one still held after HOLD_WAIT_NS (its thread went quiet),
 * or at a flush, is taken as it is. */
static struct gl_event *next_event(struct writer *w, int flush)
{
    for (;;) {
        struct gl_event *ev = gl_queue_peek(w->q);
        if (ev)
            return ev;
        uint64_t h = gl_queue_held_at(w->q), t = gl_now_ns();
        if (h == UINT64_MAX)
            return NULL;
        if (h != w->held) {
            w->held = h;
            w->held_since = t;
        }
        if (!flush && t - w->held_since < HOLD_WAIT_NS)
            return NULL;
        gl_queue_steal(w->q);
    }
}

/* Store what the ring holds: everything at a flush, else at most
 * BATCH_EVENTS. Returns how many events were taken. */
static size_t drain(struct writer *w, int flush)
{
    size_t n = 0;
    struct gl_event *ev;
    while ((flush || n < BATCH_EVENTS) && (ev = next_event(w, flush)) != NULL) {
        if (ev->flags & GL_EVF_TS_NS)
            ev->flags &= ~GL_EVF_TS_NS;
        else
            ev->ts_ns = gl_stamp_to_ns(ev->stamp);
        if (w->ok && gl_store_add(w->s, ev) != 0) {
            w->ok = 0;
            store_failed(w->s);
        }
        gl_queue_release(w->q);
        n++;
    }
    return n;
}

/* Commit at least every commit_ms, at a flush, and when the ring has
 * stayed dry for a whole nap (the program went quiet). Not at each moment
 * it runs dry: a writer keeping pace with a busy program finds it dry
 * every few hundred events, and a commit per few hundred events costs it a
 * third more per event. */
static void maybe_commit(struct writer *w, size_t n, int flush, uint64_t now)
{
    int quiet = n == 0 && w->was_dry;
    w->was_dry = n == 0;
    if (!w->ok || !w->dirty || !(quiet || flush || now - w->last_commit >= w->commit_ns))
        return;
    struct gl_run_counters c;
    counters(&c);
    if (gl_store_commit(w->s, &c) != 0) {
        w->ok = 0;
        store_failed(w->s);
    }
    w->last_commit = now;
    w->dirty = 0;
}

/* One pass under the fork lock: drain, commit if due, checkpoint before an
 * exec, answer a question.
 * Returns how many events were taken. */
static size_t pass(struct writer *w, int flush, int asked, uint64_t *now)
{
    pthread_mutex_lock(&gl_st.fork_lock);
    gl_clock_anchor();
    size_t n = drain(w, flush);
    w->dirty |= n > 0;
    if (n && w->ok)
        usage_check(w->s, w->usage_marks, w->usage_seen);
    *now = gl_now_ns();
    maybe_commit(w, n, flush, *now);
    if (flush && atomic_exchange(&gl_st.checkpoint_req, 0) && w->ok && !w->dirty)
        gl_store_checkpoint(w->s); /* an exec comes: the .db file alone complete */
    if (asked)
        answer(w->s, w->ok);
    pthread_mutex_unlock(&gl_st.fork_lock);
    return n;
}

/* Mutexes are not fair: let a waiting fork have the lock. */
static void step_aside_for_fork(void)
{
    struct timespec step_aside = {0, 100000};
    while (atomic_load(&gl_st.fork_pending))
        nanosleep(&step_aside, NULL);
}

/* A CPython loaded after start-up (dlopen, embedding): look again, at most
 * once a second. */
static void probe_python(struct writer *w, uint64_t now)
{
    if (!gl_st.cfg.python || !gl_st.cfg.stack_depth || gl_py_ready() || now - w->last_probe <= 1000000000ULL)
        return;
    w->last_probe = now;
    pthread_mutex_lock(&gl_st.fork_lock);
    if (gl_py_probe(gl_st.cfg.python_depth) && w->ok)
        gl_py_meta(put_meta, w->s);
    pthread_mutex_unlock(&gl_st.fork_lock);
}

/* At a stop: go on until the slots claimed but not yet published are in,
 * or a second has passed. Nonzero: the loop ends. */
static int stop_reached(struct writer *w, uint64_t now)
{
    if (!w->stop_deadline)
        w->stop_deadline = now + 1000000000ULL;
    return gl_queue_backlog(w->q) == 0 || now > w->stop_deadline;
}

/* The run's last rows (counters, exit, unwinder figures), then close. */
static void writer_finish(struct writer *w)
{
    pthread_mutex_lock(&gl_st.fork_lock);
    if (w->ok) {
        struct gl_run_counters c;
        counters(&c);
        gl_unwind_meta(put_meta, w->s);
        if (gl_store_finish(w->s, &c, gl_now_ns(), atomic_load(&gl_st.exit_code), atomic_load(&gl_st.exit_signal)))
            store_failed(w->s);
    }
    if (!gl_st.cfg.quiet && !gl_st.cfg.manifest) {
        char peak[32];
        unsigned long long events = (unsigned long long)gl_store_event_count(w->s);
        human_bytes(peak, sizeof peak, (unsigned long long)gl_store_peak_bytes(w->s));
        gl_warn("wrote %s: %llu event%s, peak %s", gl_st.db_path, events, events == 1 ? "" : "s", peak);
    }
    gl_store_close(w->s);
    pthread_mutex_unlock(&gl_st.fork_lock);
}

static void *writer_main(void *arg)
{
    (void)arg;
    static struct writer w; /* static: a fork child starts again from zero */
    memset(&w, 0, sizeof w);
    if (writer_enter() == 0) {
        pthread_mutex_lock(&gl_st.fork_lock);
        w.s = open_store();
        pthread_mutex_unlock(&gl_st.fork_lock);
    }
    if (!w.s) {
        atomic_store(&gl_st.phase, GL_PHASE_DISABLED);
        atomic_store(&gl_st.writer_state, GL_WRITER_DONE);
        return NULL;
    }
    w.q = &gl_st.queue;
    w.ok = 1;
    w.last_commit = w.last_probe = gl_now_ns();
    w.commit_ns = (uint64_t)gl_st.cfg.commit_ms * 1000000ULL;
    w.held = UINT64_MAX;
    const struct timespec nap = {0, 500000};
    for (;;) {
        int stop = atomic_load(&gl_st.stop);
        uint64_t freq = atomic_load(&gl_st.flush_req), now;
        int asked = atomic_load(&gl_st.ask_state) == GL_ASK_ASKED;
        int flush = freq != atomic_load(&gl_st.flush_done) || stop || asked;
        size_t n = pass(&w, flush, asked, &now);
        step_aside_for_fork();
        if (flush)
            atomic_store(&gl_st.flush_done, freq);
        if (stop && stop_reached(&w, now))
            break;
        if (n == 0)
            nanosleep(&nap, NULL);
        probe_python(&w, now);
    }
    writer_finish(&w);
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
