/* test_kept_alive.c — what keeps a finding's memory alive
 * (report/analysis/diagnosis_retention.c), on retention paths written
 * down by hand: five roots, the one holding the most met fourth (a root
 * the old first-three-roots fold counted as "more" and never chose),
 * ties kept in the order met, and the finding's sentence, remedy and
 * evidence lines as exact text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "diagnosis.h"
#include "dossier.h"
#include "model_retention.h"
#include "retention.h"

#define MIB (1ull << 20)
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* diagnosis.c's, which brings the whole diagnosis with it */
void gl_finding_evidence(struct gl_finding *f, const char *fmt, ...)
{
    if (f->nevidence == GL_DIAG_EVIDENCE)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->evidence[f->nevidence++], sizeof f->evidence[0], fmt, ap);
    va_end(ap);
}

/* One path of the search at the OOM (seq 100, step 7) on block b. */
static struct gl_retention_path path(const char *text, const char *file, int line, uint64_t bytes,
                                     const struct gl_alloc *b)
{
    return (struct gl_retention_path){.seq = 100, .step = 7, .ptr = b->addr, .bytes = bytes,
                                      .moment = GL_RETENTION_OOM, .path = (char *)text, .root_file = (char *)file,
                                      .root_line = line, .complete = 1, .elapsed_us = 2500, .block = b};
}

static void kept_alive(struct gl_retention_path *paths, size_t n, struct gl_finding *f, uint64_t *addrs, size_t na)
{
    static struct gl_run run;
    static struct gl_dossier d;
    memset(&run, 0, sizeof run);
    memset(&d, 0, sizeof d);
    run.retention = paths;
    run.n_retention = n;
    d.run = &run;
    memset(f, 0, sizeof *f);
    f->kind = "oom";
    f->verdict = "growth";
    f->seq = 101;
    f->blocks = addrs;
    f->nblocks = na;
    snprintf(f->sentence, sizeof f->sentence, "Out of memory.");
    snprintf(f->remedy, sizeof f->remedy, "free what keeps the growing tensors");
    gl_finding_kept_alive(&d, f);
}

/* Five roots; the fourth met holds the most (40 MiB over two paths), the
 * first three 10, 20 and 5 MiB, the fifth 1 MiB. It is chosen, shown
 * first, and the two that do not fit are counted with their bytes. */
static void test_late_root_holds_most(void **state)
{
    (void)state;
    static struct gl_alloc blk[7];
    uint64_t addrs[7];
    for (size_t i = 0; i < N(blk); i++) {
        blk[i] = (struct gl_alloc){.seq = (int64_t)(10 + i), .addr = 0x1000 * (i + 1), .size = MIB};
        addrs[i] = blk[i].addr;
    }
    struct gl_retention_path p[] = {
        path("t.py: global a (list, 1 items) \u2192 [0] \u2192 Tensor 10 MiB", "t.py", 3, 10 * MIB, &blk[0]),
        path("t.py: global b (dict, 1 items) \u2192 ['x'] \u2192 Tensor 20 MiB", "t.py", 4, 20 * MIB, &blk[1]),
        path("t.py:9 in step: local c \u2192 Tensor 5 MiB", "t.py", 9, 5 * MIB, &blk[2]),
        path("t.py: global big (list, 2 items) \u2192 [0] \u2192 Tensor 15 MiB", "t.py", 5, 15 * MIB, &blk[3]),
        path("t.py: global big (list, 2 items) \u2192 [1] \u2192 Tensor 25 MiB", "t.py", 5, 25 * MIB, &blk[4]),
        path("t.py: global e (list, 1 items) \u2192 [0] \u2192 Tensor 1 MiB", "t.py", 6, MIB, &blk[5]),
        /* a path on a block that is not the finding's: left out */
        path("t.py: global other (list, 1 items) \u2192 [0] \u2192 Tensor 99 MiB", "t.py", 7, 99 * MIB, &blk[6]),
    };
    struct gl_finding f;
    kept_alive(p, N(p), &f, addrs, 6);
    assert_string_equal(f.sentence, "Out of memory. Kept alive by: t.py: global big (list, 2 items) \u2192 [1] \u2192 "
                                    "Tensor 25 MiB.");
    assert_string_equal(f.remedy, "drop or detach what t.py:5 keeps (t.py: global big (list, 2 items)); free what "
                                  "keeps the growing tensors");
    assert_int_equal(f.nevidence, 4);
    assert_string_equal(f.evidence[0], "kept alive (searched at the out-of-memory, after 7 optimizer steps, in 2.5 "
                                       "ms): 6 paths to 76.00 MiB of these tensors; 2 more roots than shown, holding "
                                       "6.00 MiB");
    assert_string_equal(f.evidence[1], "kept alive by: t.py: global big (list, 2 items) \u2192 [1] \u2192 Tensor 25 "
                                       "MiB (2 paths recorded, 40.00 MiB)");
    assert_string_equal(f.evidence[2], "kept alive by: t.py: global b (dict, 1 items) \u2192 ['x'] \u2192 Tensor 20 "
                                       "MiB (1 path recorded, 20.00 MiB)");
    assert_string_equal(f.evidence[3], "kept alive by: t.py: global a (list, 1 items) \u2192 [0] \u2192 Tensor 10 "
                                       "MiB (1 path recorded, 10.00 MiB)");
}

/* Three roots: all shown, nothing counted as more; equal bytes keep the
 * order met, so the first root met is the one chosen. */
static void test_three_roots_ties(void **state)
{
    (void)state;
    static struct gl_alloc blk[3];
    uint64_t addrs[3];
    for (size_t i = 0; i < N(blk); i++) {
        blk[i] = (struct gl_alloc){.seq = (int64_t)(10 + i), .addr = 0x1000 * (i + 1), .size = MIB};
        addrs[i] = blk[i].addr;
    }
    struct gl_retention_path p[] = {
        path("t.py:9 in step: local x \u2192 Tensor 4 MiB", "", 0, 4 * MIB, &blk[0]),
        path("t.py: global y (list, 1 items) \u2192 [0] \u2192 Tensor 4 MiB", "t.py", 2, 4 * MIB, &blk[1]),
        path("t.py: global z (list, 1 items) \u2192 [0] \u2192 Tensor 1 MiB", "t.py", 3, MIB, &blk[2]),
    };
    p[0].step = -1;
    p[1].step = -1;
    p[2].step = -1;
    struct gl_finding f;
    kept_alive(p, N(p), &f, addrs, 3);
    assert_string_equal(f.sentence, "Out of memory. Kept alive by: t.py:9 in step: local x \u2192 Tensor 4 MiB.");
    /* the root has no file: the remedy is left as it was */
    assert_string_equal(f.remedy, "free what keeps the growing tensors");
    assert_int_equal(f.nevidence, 4);
    assert_string_equal(f.evidence[0], "kept alive (searched at the out-of-memory, in 2.5 ms): 3 paths to 9.00 MiB "
                                       "of these tensors");
    assert_string_equal(f.evidence[1], "kept alive by: t.py:9 in step: local x \u2192 Tensor 4 MiB (1 path "
                                       "recorded, 4.00 MiB)");
    assert_string_equal(f.evidence[2], "kept alive by: t.py: global y (list, 1 items) \u2192 [0] \u2192 Tensor 4 MiB "
                                       "(1 path recorded, 4.00 MiB)");
    assert_string_equal(f.evidence[3], "kept alive by: t.py: global z (list, 1 items) \u2192 [0] \u2192 Tensor 1 MiB "
                                       "(1 path recorded, 1.00 MiB)");
}

/* No path names one of the finding's blocks: nothing added. */
static void test_no_path(void **state)
{
    (void)state;
    static struct gl_alloc blk = {.seq = 10, .addr = 0x1000, .size = MIB};
    uint64_t other = 0x9000;
    struct gl_retention_path p[] = {path("t.py: global a (list, 1 items)", "t.py", 3, MIB, &blk)};
    struct gl_finding f;
    kept_alive(p, N(p), &f, &other, 1);
    assert_string_equal(f.sentence, "Out of memory.");
    assert_int_equal(f.nevidence, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_late_root_holds_most),
        cmocka_unit_test(test_three_roots_ties),
        cmocka_unit_test(test_no_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
