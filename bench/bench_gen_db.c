/* bench_gen_db.c — report speed on a big run. Writes a database of N
 * events (default 10 million) through the same store code the recorder
 * uses — a training-like pattern: per step, 400 tensors from 300 distinct
 * 24-frame stacks on one stream-ordered pool, all freed, plus one leaked
 * buffer per step — then times `gpuledger report`, `leaks --steps` and
 * `holes` on it and prints a Markdown table with the size per event.
 *
 *   bench_gen_db [--events N] [--stacks S] [--out FILE] [--keep] [--write-only] [--pack] [--marks]
 *
 * --stacks S: the tensors' call paths, taken in turn (default 300): a large S
 * measures what the readers pay per distinct stack.
 * --write-only: only write the database (kept), no timings: for tests that
 * need a big run.
 * --pack: a packed recording (schema 6, store/pack.h), as GPULEDGER_PACK=1.
 * --marks: a gpuledger_mark ending each step (one per 801 events), so that
 * the readers see the run's steps (leaks --steps: one slice a step). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct ev {
    struct gl_event e;
    uintptr_t ips[24];
};

int main(int argc, char **argv)
{
    long target = 10000000, stacks = 300;
    const char *out = "/tmp/gl-bench-10m.db";
    int keep = 0, write_only = 0, pack = 0, marks = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--events") && i + 1 < argc)
            target = atol(argv[++i]);
        else if (!strcmp(argv[i], "--stacks") && i + 1 < argc && atol(argv[i + 1]) > 0)
            stacks = atol(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "--keep"))
            keep = 1;
        else if (!strcmp(argv[i], "--write-only"))
            write_only = keep = 1;
        else if (!strcmp(argv[i], "--pack"))
            pack = 1;
        else if (!strcmp(argv[i], "--marks"))
            marks = 1;
        else {
            printf("usage: %s [--events N] [--stacks S] [--out FILE] [--keep] [--write-only] [--pack] [--marks]\n", argv[0]);
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    unlink(out);
    struct gl_run_info info = {.pid = 1, .ppid = 1, .hostname = "bench", .rank = "0", .cmdline = "bench_gen_db",
                               .stack_depth = 24, .version = "bench"};
    char err[512];
    double t0 = now_s();
    struct gl_store *s = gl_store_open(out, &info, 0, err, sizeof err);
    if (!s) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    if (pack && gl_store_set_packed(s)) {
        fprintf(stderr, "%s\n", gl_store_error(s));
        return 2;
    }
    struct gl_run_counters c = {0, 0};
    static struct ev e;
    uint64_t ts = 1000, live[400];
    long made = 0, step = 0, path = 0;
    const uint64_t base = 0x7f0000000000ULL;
    while (made < target) {
        uint64_t off = 0;
        for (int k = 0; k < 400 && made < target; k++, made++) {
            memset(&e.e, 0, sizeof e.e);
            e.e.op = GL_OP_ALLOC;
            e.e.api = GL_API_cudaMallocAsync;
            e.e.kind = GL_KIND_ASYNC;
            e.e.size = (uint64_t)(1 + k % 37) << 16;
            e.e.addr = live[k] = base + off;
            off += e.e.size;
            e.e.ts_ns = ts += 700;
            e.e.tid = 1 + k % 3;
            e.e.depth = 24;
            long which = stacks == 300 ? k % 300 : path++ % stacks; /* 300: the steps' own pattern */
            for (int d = 0; d < 24; d++)
                e.ips[d] = 0x400000 + (uintptr_t)(which * 64 + d) * 16;
            gl_store_add(s, &e.e);
        }
        for (int k = 0; k < 400 && made < target; k++, made++) {
            memset(&e.e, 0, sizeof e.e);
            e.e.op = GL_OP_FREE;
            e.e.api = GL_API_cudaFreeAsync;
            e.e.addr = live[k];
            e.e.ts_ns = ts += 700;
            e.e.tid = 1;
            gl_store_add(s, &e.e);
        }
        if (made < target) { /* one leaked 1 MiB buffer per step */
            memset(&e.e, 0, sizeof e.e);
            e.e.op = GL_OP_ALLOC;
            e.e.api = GL_API_cudaMalloc;
            e.e.kind = GL_KIND_DEVICE;
            e.e.size = 1 << 20;
            e.e.addr = 0x100000000000ULL + (uint64_t)step * (1 << 20);
            e.e.ts_ns = ts += 700;
            e.e.depth = 2;
            e.ips[0] = 0x999000;
            e.ips[1] = 0x999100;
            gl_store_add(s, &e.e);
            made++;
        }
        if (marks && made < target) { /* the step's end */
            memset(&e.e, 0, sizeof e.e);
            e.e.op = GL_OP_MARK;
            e.e.api = GL_API_gpuledger_mark;
            e.e.ts_ns = ts += 700;
            e.e.tid = 1;
            e.e.flags = GL_EVF_LABEL;
            memcpy(e.ips, "step", 5);
            e.e.aux = 4;
            gl_store_add(s, &e.e);
            made++;
        }
        if (++step % 100 == 0) {
            gl_store_commit(s, &c);
            if (!write_only)
                fprintf(stderr, "\rbench_gen_db: %ld of %ld events", made, target);
        }
    }
    gl_store_finish(s, &c, ts, 0, 0);
    gl_store_close(s);
    double gen = now_s() - t0;
    if (write_only)
        return 0;
    struct stat sb;
    stat(out, &sb);
    fprintf(stderr, "\n");
    char gl[4096];
    ssize_t n = readlink("/proc/self/exe", gl, sizeof gl - 1);
    gl[n > 0 ? n : 0] = 0;
    char *slash = strrchr(gl, '/');
    snprintf(slash ? slash : gl, sizeof gl - (size_t)(slash ? slash - gl : 0), "/../report/gpuledger");
    printf("## report speed on %ld events\n\n", made);
    printf("| step | seconds |\n|---|---|\n");
    printf("| write the database through the store (%.1f bytes/event, %.0f MiB) | %.2f |\n",
           (double)sb.st_size / (double)made, (double)sb.st_size / 1048576.0, gen);
    const char *verbs[][2] = {{"report", ""}, {"leaks", "--steps"}, {"holes", ""}, {"report", "--format json"}};
    for (int v = 0; v < 4; v++) {
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "%s %s %s %s > /dev/null", gl, verbs[v][0], verbs[v][1], out);
        double t1 = now_s();
        int rc = system(cmd);
        printf("| `gpuledger %s %s` | %.2f%s |\n", verbs[v][0], verbs[v][1], now_s() - t1, rc ? " (FAILED)" : "");
        fflush(stdout);
    }
    if (!keep)
        unlink(out);
    return 0;
}
