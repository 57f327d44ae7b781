/* bench_writer.c — the writer thread's cost per event and the database's
 * bytes per event: the same store code the recorder's writer runs (rows,
 * stacks, the ledger, the block model, annotations), fed a synthetic run
 * from one thread, with a commit every 16,384 events as the writer does
 * when it is behind.
 *
 *   bench_writer [--events N] [--depth D] [--paths-bits B] [--mix malloc|torch] [--rounds R] [--keep FILE]
 *                [--layout rows|packed|both]
 *
 * --mix malloc: cudaMallocAsync/cudaFreeAsync pairs, every allocation with a
 * stack of D frames taken from 2^B distinct call paths (B = 0: one path);
 * --mix torch: the real-run mix of a PyTorch job under `--torch blocks`: a
 * 2 MiB segment per 64 blocks, blocks allocated (stack of D frames from 2^B
 * paths) and freed with their completion, a range pushed and popped every
 * 200 events and a mark (a step) every 1,000.
 * Each round writes a new database; prints, per round, ns of writer CPU
 * per event (thread CPU time, gl_store_add + commits; the finish, its index
 * included, apart) and the database's bytes per event after it is closed,
 * then the medians. --layout: one SQLite row per event (rows, the default),
 * packs of rows (packed: GPULEDGER_PACK=1, store/pack.h), or both in
 * alternating rounds, with the medians of each and of the paired rounds'
 * ratios. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_stats.h"
#include "store.h"

struct ev {
    struct gl_event e;
    uintptr_t ips[256];
};

static struct ev e;
static unsigned depth = 16, bits = 4;
static uint64_t ts; /* CLOCK_MONOTONIC ns of a host up 4.6 days (a stamp of 8 bytes, as on servers) */
#define TS0 400000000000000ULL

static void event(int op, int kind, int api, uint64_t addr, uint64_t size)
{
    memset(&e.e, 0, sizeof e.e);
    e.e.op = (uint8_t)op;
    e.e.kind = (uint8_t)kind;
    e.e.api = (uint16_t)api;
    e.e.addr = addr;
    e.e.size = size;
    e.e.ts_ns = ts += 700;
    e.e.tid = 4242;
    e.e.stream = 0x5555deadbe00ULL;
}

/* A stack of `depth` frames for call path p: the innermost frames differ
 * by path (a loop's call sites), the outer ones are shared. */
static void stack(unsigned p)
{
    e.e.depth = (uint16_t)depth;
    for (unsigned d = 0; d < depth; d++)
        e.ips[d] = 0x400000 + (uintptr_t)d * 64 + (d < bits ? (uintptr_t)((p >> d) & 1) << 20 : 0);
}

static void label(int op, int api, const char *text)
{
    event(op, GL_KIND_NONE, api, 0, 0);
    size_t n = strlen(text);
    memcpy(e.ips, text, n + 1);
    e.e.aux = n;
    e.e.flags |= GL_EVF_LABEL;
}

static double cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static long produce_malloc(struct gl_store *s, long n)
{
    long made = 0;
    const uint64_t base = 0x7f0000000000ULL;
    uint64_t k = 0;
    while (made < n) {
        unsigned p = (unsigned)(k * 2654435761u) & ((1u << bits) - 1);
        uint64_t addr = base + (k % 64) * 0x100000;
        event(GL_OP_ALLOC, GL_KIND_ASYNC, GL_API_cudaMallocAsync, addr, 4096 + (k % 7) * 512);
        stack(p);
        if (gl_store_add(s, &e.e))
            return -1;
        event(GL_OP_FREE, GL_KIND_NONE, GL_API_cudaFreeAsync, addr, 0);
        if (gl_store_add(s, &e.e))
            return -1;
        made += 2;
        k++;
    }
    return made;
}

static long produce_torch(struct gl_store *s, long n)
{
    long made = 0;
    const uint64_t base = 0x7f0000000000ULL;
    uint64_t k = 0, seg = base;
    while (made < n) {
        if (k % 64 == 0) {
            seg = base + (k / 64) * (2 << 20);
            event(GL_OP_ALLOC, GL_KIND_SEGMENT, GL_API_torch_allocator, seg, 2 << 20);
            stack(0);
            if (gl_store_add(s, &e.e))
                return -1;
            made++;
        }
        unsigned p = (unsigned)(k * 2654435761u) & ((1u << bits) - 1);
        uint64_t addr = seg + (k % 64) * 4096;
        event(GL_OP_ALLOC, GL_KIND_BLOCK, GL_API_torch_allocator, addr, 4000);
        e.e.aux = 4096;
        stack(p);
        if (gl_store_add(s, &e.e))
            return -1;
        event(GL_OP_FREE, GL_KIND_BLOCK, GL_API_torch_allocator, addr, 4000);
        e.e.aux = 4096;
        e.e.flags |= GL_EVF_COMPLETED;
        if (gl_store_add(s, &e.e))
            return -1;
        made += 2;
        if (k % 100 == 0) {
            label(k % 200 ? GL_OP_RANGE_POP : GL_OP_RANGE_PUSH,
                  k % 200 ? GL_API_gpuledger_range_pop : GL_API_gpuledger_range_push, "forward");
            if (gl_store_add(s, &e.e))
                return -1;
            made++;
        }
        if (k % 500 == 0) {
            label(GL_OP_MARK, GL_API_gpuledger_mark, "step");
            if (gl_store_add(s, &e.e))
                return -1;
            made++;
        }
        k++;
    }
    return made;
}

static int one_round(long n, int torch, int packed, const char *path, double *ns_ev, double *bytes_ev,
                     double *finish_ms)
{
    unlink(path);
    struct gl_run_info info = {.pid = 1, .ppid = 1, .hostname = "bench", .rank = "0", .cmdline = "bench_writer",
                               .stack_depth = (int)depth, .version = "bench"};
    char err[512];
    struct gl_store *s = gl_store_open(path, &info, 0, err, sizeof err);
    if (!s) {
        fprintf(stderr, "bench_writer: %s\n", err);
        return -1;
    }
    if (packed && gl_store_set_packed(s)) {
        fprintf(stderr, "bench_writer: %s\n", gl_store_error(s));
        return -1;
    }
    struct gl_run_counters c = {0, 0};
    ts = TS0;
    double t0 = cpu_ns();
    long made = 0;
    while (made < n) {
        long m = torch ? produce_torch(s, 16384) : produce_malloc(s, 16384);
        if (m < 0 || gl_store_commit(s, &c)) {
            fprintf(stderr, "bench_writer: %s\n", gl_store_error(s));
            return -1;
        }
        made += m;
    }
    double t1 = cpu_ns();
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    gl_store_finish(s, &c, ts, 0, 0);
    gl_store_close(s);
    clock_gettime(CLOCK_MONOTONIC, &w1);
    struct stat sb;
    if (stat(path, &sb))
        return -1;
    *ns_ev = (t1 - t0) / (double)made;
    *bytes_ev = (double)sb.st_size / (double)made;
    *finish_ms = (double)(w1.tv_sec - w0.tv_sec) * 1e3 + (double)(w1.tv_nsec - w0.tv_nsec) / 1e6;
    return 0;
}

int main(int argc, char **argv)
{
    long events = 1000000;
    int rounds = 5, torch = 0, layout = 0; /* 0 rows, 1 packed, 2 both */
    const char *keep = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--events") && i + 1 < argc)
            events = atol(argv[++i]);
        else if (!strcmp(argv[i], "--depth") && i + 1 < argc)
            depth = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--paths-bits") && i + 1 < argc)
            bits = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--mix") && i + 1 < argc)
            torch = !strcmp(argv[++i], "torch");
        else if (!strcmp(argv[i], "--keep") && i + 1 < argc)
            keep = argv[++i];
        else if (!strcmp(argv[i], "--layout") && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "rows") || !strcmp(argv[i + 1], "packed") || !strcmp(argv[i + 1], "both")))
            layout = !strcmp(argv[++i], "rows") ? 0 : !strcmp(argv[i], "packed") ? 1 : 2;
        else {
            fprintf(stderr,
                    "usage: %s [--events N] [--depth D (1..256)] [--paths-bits B (0..%u)] [--mix malloc|torch] "
                    "[--rounds R (1..63)] [--keep FILE] [--layout rows|packed|both]\n",
                    argv[0], depth < 24 ? depth : 24);
            return 2;
        }
    }
    if (events < 2 || depth < 1 || depth > 256 || bits > depth || bits > 24 || rounds < 1 || rounds > 63)
        return 2;
    char path[64] = "/tmp/gl-bench-writer-XXXXXX";
    if (!keep) {
        int fd = mkstemp(path);
        if (fd < 0)
            return 1;
        close(fd);
    }
    const char *db = keep ? keep : path;
    double ns[2][64], bytes[2][64], fin[2][64], ratio[2][64];
    int nl = layout == 2 ? 2 : 1;
    for (int r = 0; r < rounds; r++) {
        for (int l = 0; l < nl; l++) {
            int packed = layout == 2 ? (r + l) % 2 : layout; /* alternate which goes first */
            if (one_round(events, torch, packed, db, &ns[packed][r], &bytes[packed][r], &fin[packed][r]))
                return 1;
            printf("round %d, %s: %.0f ns of writer CPU per event, %.1f bytes per event, finish %.0f ms\n", r + 1,
                   packed ? "packed" : "rows", ns[packed][r], bytes[packed][r], fin[packed][r]);
            fflush(stdout);
        }
        if (nl == 2) {
            ratio[0][r] = ns[0][r] / ns[1][r];
            ratio[1][r] = bytes[0][r] / bytes[1][r];
        }
    }
    for (int packed = 0; packed < 2; packed++) {
        if (nl == 1 && packed != layout)
            continue;
        double mns = bench_median(ns[packed], rounds);
        printf("median, %s: %.0f ns of writer CPU per event (%.2f M events/s on one core), %.1f bytes per event, "
               "finish %.0f ms (mix %s, %ld events, depth %u, %u call paths)\n",
               packed ? "packed" : "rows", mns, 1e3 / mns, bench_median(bytes[packed], rounds),
               bench_median(fin[packed], rounds), torch ? "torch" : "malloc", events, depth, 1u << bits);
    }
    if (nl == 2)
        printf("rows / packed, median of the paired rounds: %.2fx the writer CPU, %.2fx the bytes\n",
               bench_median(ratio[0], rounds), bench_median(ratio[1], rounds));
    if (!keep) {
        unlink(db);
    }
    char side[96];
    snprintf(side, sizeof side, "%s-wal", db);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", db);
    unlink(side);
    return 0;
}
