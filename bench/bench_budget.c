/* bench_budget.c — a bounded recording (--budget, store/fold.c) over a
 * synthetic day, replayed at full speed through the store code the
 * writer thread runs: 50,000 events per simulated second, steps of about
 * 10,000 events (5 a second) of a PyTorch-like mix (64 segments of 2 MiB made at
 * the start; per step 16 activations made in the forward and freed in the
 * backward, 4,976 short-lived blocks from 256 call paths, ranges, a mark
 * "optimizer step N"), a planted leak (a 4 KiB cudaMallocAsync kept every
 * step from step 1,000 on), a 10 GiB temporary (the peak) at a tenth of
 * the run and an OOM at three quarters of it. Prints the file's size every
 * --every simulated minutes, the writer's CPU ns per event and events/s,
 * the final size; with --compare N, the first N events recorded in full
 * and with the budget, their ns per event and whether their answers
 * (peak, leaks, OOMs, live bytes at every step end) are equal.
 *
 *   bench_budget [--hours H] [--budget SIZE] [--every MIN] [--compare N] [--keep FILE]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "config.h"
#include "store.h"

#define EVENTS_PER_S 50000ULL
#define STEP_EVENTS 10000ULL
#define LEAK_FROM 1000ULL

struct ev {
    struct gl_event e;
    uintptr_t ips[32];
};

static struct ev e;
static uint64_t ts = 400000000000000ULL, made, peak_step, oom_step;
static const uint64_t SEG = 0x7f0000000000ULL;

static void event(int op, int kind, int api, uint64_t addr, uint64_t size, unsigned path)
{
    memset(&e.e, 0, sizeof e.e);
    e.e.op = (uint8_t)op;
    e.e.kind = (uint8_t)kind;
    e.e.api = (uint16_t)api;
    e.e.addr = addr;
    e.e.size = size;
    e.e.ts_ns = ts += 1000000000ULL / EVENTS_PER_S;
    e.e.tid = 4242;
    e.e.depth = 12;
    for (unsigned d = 0; d < 12; d++)
        e.ips[d] = 0x400000 + (uintptr_t)d * 64 + (d < 8 ? (uintptr_t)((path >> d) & 1) << 20 : 0);
}

static int put(struct gl_store *s)
{
    made++;
    return gl_store_add(s, &e.e);
}

static int label(struct gl_store *s, int op, int api, const char *text)
{
    event(op, GL_KIND_NONE, api, 0, 0, 0);
    size_t n = text ? strlen(text) : 0;
    if (text)
        memcpy(e.ips, text, n + 1);
    e.e.aux = n;
    e.e.depth = 0;
    e.e.flags |= GL_EVF_LABEL;
    return put(s);
}

static int block(struct gl_store *s, int alloc, uint64_t addr, uint64_t size, unsigned path)
{
    event(alloc ? GL_OP_ALLOC : GL_OP_FREE, GL_KIND_BLOCK, GL_API_torch_allocator, addr, size, path);
    e.e.aux = (size + 511) & ~511ULL;
    if (!alloc)
        e.e.flags |= GL_EVF_COMPLETED;
    return put(s);
}

static int async(struct gl_store *s, int op, uint64_t addr, uint64_t size, unsigned path)
{
    event(op, op == GL_OP_FREE ? GL_KIND_NONE : GL_KIND_ASYNC,
          op == GL_OP_FREE ? GL_API_cudaFreeAsync : GL_API_cudaMallocAsync, addr, size, path);
    if (op == GL_OP_OOM)
        e.e.result = 2;
    return put(s);
}

/* One step of the mix (STEP_EVENTS events). */
static int step(struct gl_store *s, uint64_t k)
{
    uint64_t start = made;
    int rc = label(s, GL_OP_RANGE_PUSH, GL_API_gpuledger_range_push, "forward");
    for (unsigned a = 0; a < 16; a++) /* activations: segment 0 */
        rc |= block(s, 1, SEG + a * 0x20000, 0x1f000, 300 + a);
    rc |= label(s, GL_OP_RANGE_POP, GL_API_gpuledger_range_pop, NULL);
    rc |= label(s, GL_OP_RANGE_PUSH, GL_API_gpuledger_range_push, "backward");
    unsigned j = 0;
    while (made - start < STEP_EVENTS - 40) { /* ~10,000 events a step, 16 at a time */
        uint64_t addr = SEG + (1 + (j / 32) % 63) * 0x200000 + (j % 32) * 0x10000;
        for (unsigned i = 0; i < 8; i++, j++) /* eight live at once, then freed */
            rc |= block(s, 1, addr + i * 0x1000, 512 + 64 * (j % 32), j % 256);
        for (unsigned i = 0; i < 8; i++)
            rc |= block(s, 0, addr + i * 0x1000, 0, 0);
    }
    for (unsigned a = 0; a < 16; a++)
        rc |= block(s, 0, SEG + a * 0x20000, 0, 0);
    rc |= label(s, GL_OP_RANGE_POP, GL_API_gpuledger_range_pop, NULL);
    if (k == peak_step) {
        rc |= async(s, GL_OP_ALLOC, 0x600000000000ULL, 10ULL << 30, 400);
        rc |= async(s, GL_OP_FREE, 0x600000000000ULL, 0, 401);
    }
    if (k == oom_step)
        rc |= async(s, GL_OP_OOM, 0, 80ULL << 30, 402);
    if (k >= LEAK_FROM)
        rc |= async(s, GL_OP_ALLOC, 0x500000000000ULL + k * 0x1000, 4096, 403); /* the leak */
    char l[40];
    snprintf(l, sizeof l, "optimizer step %" PRIu64, k);
    return rc | label(s, GL_OP_MARK, GL_API_gpuledger_mark, l);
}

static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static long long file_size(const char *path)
{
    struct stat sb;
    long long n = stat(path, &sb) ? 0 : (long long)sb.st_size;
    char wal[300];
    snprintf(wal, sizeof wal, "%s-wal", path);
    return n + (stat(wal, &sb) ? 0 : (long long)sb.st_size);
}

/* Replay `events` events into path; every `every` events a size line. */
static int replay(const char *path, unsigned long long budget, uint64_t events, uint64_t every, double *ns_ev)
{
    unlink(path);
    struct gl_run_info info = {.pid = 1, .ppid = 1, .hostname = "bench", .rank = "0", .cmdline = "bench_budget",
                               .stack_depth = 12, .version = "bench"};
    char err[512];
    struct gl_store *s = gl_store_open(path, &info, 0, err, sizeof err);
    if (!s || gl_store_set_budget(s, budget)) {
        fprintf(stderr, "bench_budget: %s\n", s ? gl_store_error(s) : err);
        return -1;
    }
    struct gl_run_counters c = {0, 0};
    made = 0;
    peak_step = events / STEP_EVENTS / 10;
    oom_step = events / STEP_EVENTS * 3 / 4;
    /* the model: 64 segments of 2 MiB, made once */
    for (unsigned i = 0; i < 64; i++) {
        event(GL_OP_ALLOC, GL_KIND_SEGMENT, GL_API_torch_allocator, SEG + i * 0x200000ULL, 0x200000, 500);
        if (put(s))
            return -1;
    }
    double t0 = cpu_ns();
    uint64_t next_line = every, next_commit = 16384;
    for (uint64_t k = 0; made < events; k++) {
        if (step(s, k)) {
            fprintf(stderr, "bench_budget: %s\n", gl_store_error(s));
            return -1;
        }
        if (made >= next_commit) { /* the writer commits every 16,384 events when behind */
            if (gl_store_commit(s, &c))
                return -1;
            next_commit = made + 16384;
        }
        if (every && made >= next_line) {
            printf("  %7.1f simulated min: %lld bytes\n", (double)made / EVENTS_PER_S / 60, file_size(path));
            fflush(stdout);
            next_line += every;
        }
    }
    double t1 = cpu_ns();
    if (gl_store_finish(s, &c, ts, 0, 0))
        return -1;
    gl_store_close(s);
    *ns_ev = (t1 - t0) / (double)made;
    return 0;
}

/* The answers, as SQL over the file: peak, leaks, OOMs, and the live
 * bytes at every step end (the leaks --steps rule's input), summed. */
static void answers(const char *path, char *out, size_t sz)
{
    sqlite3 *db;
    out[0] = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
        return;
    /* the index the run's end gives up on past 1 s (schema.md): the leak query needs it */
    sqlite3_exec(db, "CREATE INDEX IF NOT EXISTS event_log_ref ON event_rows(ref_seq) WHERE ref_seq IS NOT NULL",
                 NULL, NULL, NULL);
    static const char *const q[] = {
        "SELECT group_concat(peak_bytes || '@' || peak_seq) FROM device_stats",
        "SELECT allocated_peak || '@' || allocated_peak_seq FROM block_stats",
        "SELECT count(*) || ' leaks of ' || total(size) || ' B' FROM event_rows a WHERE op = 1"
        " AND NOT EXISTS (SELECT 1 FROM event_rows f WHERE f.ref_seq = a.seq)",
        "SELECT 'OOM at ' || group_concat(seq) FROM event_rows WHERE op = 11",
        "SELECT 'live at step ends, summed: ' || total(live) FROM (SELECT op, sum(CASE op WHEN 1 THEN size"
        " WHEN 2 THEN -coalesce((SELECT a.size FROM event_rows a WHERE a.seq = e.ref_seq), 0) ELSE 0 END)"
        " OVER (ORDER BY seq) AS live FROM event_rows e) WHERE op = 13",
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, q[i], -1, &st, NULL) != SQLITE_OK) {
            snprintf(out + strlen(out), sz - strlen(out), "[%s] ", sqlite3_errmsg(db));
            continue;
        }
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
            snprintf(out + strlen(out), sz - strlen(out), "%s; ", (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
}

int main(int argc, char **argv)
{
    double hours = 24;
    unsigned long long budget = 1ULL << 30;
    double every_min = 60;
    uint64_t compare = 0;
    const char *keep = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--hours"))
            hours = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--budget") && !gl_parse_size(argv[i + 1], &budget))
            continue;
        else if (!strcmp(argv[i], "--every"))
            every_min = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--compare"))
            compare = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--keep"))
            keep = argv[i + 1];
        else {
            fprintf(stderr, "usage: %s [--hours H] [--budget SIZE] [--every MIN] [--compare N] [--keep FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    char path[300], full[310];
    snprintf(path, sizeof path, "%s", keep ? keep : "/tmp/gl-bench-budget.db");
    snprintf(full, sizeof full, "%s.full", path);
    double ns_full = 0, ns_bud = 0;
    if (compare) {
        char a[1024], b[1024];
        if (replay(full, 0, compare, 0, &ns_full) || replay(path, budget, compare, 0, &ns_bud))
            return 1;
        answers(full, a, sizeof a);
        answers(path, b, sizeof b);
        printf("first %" PRIu64 " events: writer %.0f ns/event in full (%lld bytes), %.0f ns/event budgeted (%lld bytes)\n"
               "  answers in full: %s\n  answers budgeted: %s\n  answers equal: %s\n",
               compare, ns_full, file_size(full), ns_bud, file_size(path), a, b, strcmp(a, b) ? "NO" : "yes");
        unlink(full);
    }
    if (hours > 0) {
        uint64_t events = (uint64_t)(hours * 3600 * EVENTS_PER_S);
        struct timespec w0, w1;
        clock_gettime(CLOCK_MONOTONIC, &w0);
        printf("replaying %.2f simulated hours (%" PRIu64 " events) with a budget of %llu bytes:\n", hours, events,
               budget);
        if (replay(path, budget, events, (uint64_t)(every_min * 60 * EVENTS_PER_S), &ns_bud))
            return 1;
        clock_gettime(CLOCK_MONOTONIC, &w1);
        double wall = (double)(w1.tv_sec - w0.tv_sec) + (double)(w1.tv_nsec - w0.tv_nsec) / 1e9;
        char a[1024];
        answers(path, a, sizeof a);
        printf("%.0f ns of writer CPU per event, %.2f M events/s through the writer (%.0f s wall); final file %lld "
               "bytes (budget %llu): %s\n  answers: %s\n",
               ns_bud, (double)events / wall / 1e6, wall, file_size(path), budget,
               file_size(path) <= (long long)budget ? "under" : "OVER", a);
    }
    if (!keep)
        unlink(path);
    return 0;
}
