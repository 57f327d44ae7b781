/* bench_store_blocks.c — what the writer thread spends per tensor
 * alloc+free pair of PyTorch's caching allocator: the same store code the
 * recorder's writer runs (blocks replayed, rows batched, stacks interned),
 * fed the events a CPU-bound `torch.empty(1024); del t` loop makes, with a
 * commit every 16,384 events as the writer does when it is behind.
 *
 *   bench_store_blocks [--pairs N] [--depth D] [--free-stack] [--split]
 *
 * --depth: frames of each allocation's stack (default 40: native frames
 * above the interpreter and Python frames); --free-stack: the free carries
 * the same stack; --split: the free's completion is an event of its own
 * (FREE_COMPLETED), else the free says it completed at once. Prints ns per
 * pair, wall and CPU time (callgrind-torch.sh counts its instructions). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store.h"

struct ev {
    struct gl_event e;
    uintptr_t ips[256];
};

static struct ev e;

static void event(int op, int kind, uint64_t addr, uint64_t size, unsigned depth, uint64_t *ts)
{
    memset(&e.e, 0, sizeof e.e);
    e.e.op = (uint8_t)op;
    e.e.kind = (uint8_t)kind;
    e.e.api = GL_API_torch_allocator;
    e.e.addr = addr;
    e.e.size = size;
    e.e.ts_ns = *ts += 700;
    e.e.tid = 7;
    e.e.depth = (uint16_t)depth;
}

int main(int argc, char **argv)
{
    long pairs = 200000;
    unsigned depth = 40;
    int free_stack = 0, split = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pairs") && i + 1 < argc)
            pairs = atol(argv[++i]);
        else if (!strcmp(argv[i], "--depth") && i + 1 < argc)
            depth = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--free-stack"))
            free_stack = 1;
        else if (!strcmp(argv[i], "--split"))
            split = 1;
        else {
            fprintf(stderr, "usage: %s [--pairs N] [--depth D (1..256)] [--free-stack] [--split]\n", argv[0]);
            return 2;
        }
    }
    if (pairs < 1 || depth < 1 || depth > 256)
        return 2;
    char out[] = "/tmp/gl-store-blocks-XXXXXX";
    int fd = mkstemp(out);
    if (fd < 0)
        return 1;
    close(fd);
    unlink(out);
    struct gl_run_info info = {.pid = 1, .ppid = 1, .hostname = "bench", .rank = "0", .cmdline = "bench_store_blocks",
                               .stack_depth = depth, .version = "bench"};
    char err[512];
    struct gl_store *s = gl_store_open(out, &info, 0, err, sizeof err);
    if (!s) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    for (unsigned d = 0; d < depth; d++)
        e.ips[d] = 0x400000 + (uintptr_t)d * 64;
    struct gl_run_counters c = {0, 0};
    uint64_t ts = 1000;
    const uint64_t seg = 0x7f0000000000ULL;
    event(GL_OP_ALLOC, GL_KIND_SEGMENT, seg, 2 << 20, 0, &ts);
    gl_store_add(s, &e.e);
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    long events = 0;
    for (long i = 0; i < pairs; i++) {
        event(GL_OP_ALLOC, GL_KIND_BLOCK, seg, 4096, depth, &ts);
        gl_store_add(s, &e.e);
        event(GL_OP_FREE, GL_KIND_BLOCK, seg, 4096, free_stack ? depth : 0, &ts);
        if (!split)
            e.e.flags |= GL_EVF_COMPLETED;
        gl_store_add(s, &e.e);
        events += 2;
        if (split) {
            event(GL_OP_FREE_COMPLETED, GL_KIND_BLOCK, seg, 4096, 0, &ts);
            gl_store_add(s, &e.e);
            events++;
        }
        if (events >= 16384) {
            gl_store_commit(s, &c);
            events = 0;
        }
    }
    gl_store_commit(s, &c);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    gl_store_finish(s, &c, ts, 0, 0);
    gl_store_close(s);
    unlink(out);
    char wal[64];
    snprintf(wal, sizeof wal, "%s-wal", out);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", out);
    unlink(wal);
    double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)pairs;
    double cpu = ((double)(c1.tv_sec - c0.tv_sec) * 1e9 + (double)(c1.tv_nsec - c0.tv_nsec)) / (double)pairs;
    printf("%.0f ns per pair, %.0f ns of CPU (depth %u, free stack %s, completion %s)\n", ns, cpu, depth,
           free_stack ? "yes" : "no", split ? "an event of its own" : "with the free");
    return 0;
}
