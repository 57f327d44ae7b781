/* test_jobsafety.c — what a program sees of gpuledger must be what it sees
 * without it (issue 27): its signal dispositions (CPython's Ctrl-C, a C
 * program's sigaction), while the database is still finished on those
 * signals; its own descriptors; its cost in memory when it never calls
 * CUDA; exec in every form keeping what the first image recorded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static struct run_result r;

static const char *source(const char *rel)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", getenv("GL_SOURCE_ROOT"), rel);
    return buf[k];
}

static void expect_finished(const char *db_path, int exit_signal, int events)
{
    sqlite3 *db = h_open(db_path);
    assert_int_equal(h_int(db, "SELECT count(*) FROM run WHERE end_ns IS NOT NULL"), 1);
    assert_int_equal(h_int(db, "SELECT coalesce(exit_signal, 0) FROM run"), exit_signal);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events"), events);
    sqlite3_close(db);
}

/* A C program reads the default for all nine signals, through sigaction,
 * signal and sigset, as it does bare. */
static void test_sigaction_sees_the_defaults(void **state)
{
    (void)state;
    if (getenv("GL_SANITIZED")) /* the sanitizer's programs catch SIGSEGV, SIGBUS and SIGFPE bare too */
        skip();
    /* the test runner may start us with some of them ignored (inherited) */
    const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM, SIGINT, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
    static struct run_result bare;
    h_run(&bare, NULL, ARGV(PROG("sigprobe"), "probe"));
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "p.db", PROG("sigprobe"), "probe"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, bare.out);
    assert_int_equal(h_count_lines(r.out, " dfl flags=0 signal=dfl sigset=dfl"), 9);
    expect_finished("p.db", 0, 1);
}

/* The default set again with flags and a mask reads back as set; the
 * signal still ends the process as bare, and the database is finished. */
static void test_default_kept_underneath(void **state)
{
    (void)state;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "t.db", PROG("sigprobe"), "term"));
    assert_int_equal(r.status, 128 + SIGTERM);
    assert_string_equal(r.out, "flags=restart mask=usr1\n");
    expect_finished("t.db", SIGTERM, 1);
    /* the program's own handler runs; the default set again (signal())
     * returns it, and the next SIGINT still finishes the database */
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "o.db", PROG("sigprobe"), "own"));
    assert_int_equal(r.status, 128 + SIGINT);
    assert_string_equal(r.out, "caught 1\nback own\n");
    expect_finished("o.db", SIGINT, 1);
}

/* CPython installs its SIGINT handler (it finds the default): Ctrl-C is a
 * KeyboardInterrupt, except and finally run, and the uncaught one ends the
 * process by SIGINT as bare, with the database finished. Every CPython 3
 * on the machine (GL_TEST_PYTHONS as in test_python). */
static void test_python_ctrl_c(void **state)
{
    (void)state;
    glob_t g;
    memset(&g, 0, sizeof g);
    const char *list = getenv("GL_TEST_PYTHONS");
    char pattern[2048];
    snprintf(pattern, sizeof pattern, "%s", list ? list : "/root/.pyenv/versions/3.1*/bin/python3 /usr/bin/python3");
    for (char *save = NULL, *tok = strtok_r(pattern, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
        glob(tok, g.gl_pathc ? GLOB_APPEND : 0, NULL, &g);
    int ran = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *py = g.gl_pathv[i];
        if (access(py, X_OK) != 0)
            continue;
        char db[64];
        snprintf(db, sizeof db, "py%zu.db", i);
        h_run(&r, NULL,
              ARGV(GL, "run", "-q", "-o", db, py, source("tests/progs/py_sigint.py"),
                   h_build("tests/fakecuda/libcudart.so.13")));
        if (r.status != 128 + SIGINT ||
            strcmp(r.out, "default_int_handler: True\nKeyboardInterrupt caught\nfinally ran\n") != 0)
            fail_msg("%s: exit %d, stdout:\n%s", py, r.status, r.out);
        expect_finished(db, SIGINT, 1);
        ran++;
    }
    globfree(&g);
    if (!ran)
        fail_msg("no python3 found");
}

/* TSC stamps re-anchored every 200 us (the writer re-anchors between its
 * batches: events stamped before are converted after): no thread's events
 * go back in time, so nothing is skipped and nothing is left live. */
static void test_tsc_reanchoring_keeps_order(void **state)
{
    (void)state;
    h_run(&r, ENV("GL_TEST_CLOCK_CHECK_US=200", "GPULEDGER_FULL_WAIT_MS=5000"),
          ARGV(GL, "run", "-q", "-o", "th.db", PROG("threads"), "4", "300000"));
    assert_int_equal(r.status, 0);
    sqlite3 *db = h_open("th.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events"), 2400000);
    assert_int_equal(h_int(db, "SELECT count(*) FROM (SELECT ts_ns, lag(ts_ns) OVER (PARTITION BY tid ORDER BY seq) "
                               "AS p FROM events) WHERE ts_ns < p"),
                     0);
    sqlite3_close(db);
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "0", "th.db"));
    assert_int_equal(r.status, 0);
    h_run(&r, NULL, ARGV(GL, "report", "th.db"));
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.out, "skipped"));
}

static long field(const char *out, const char *name)
{
    const char *p = strstr(out, name);
    if (!p)
        fail_msg("no '%s' in: %s", name, out);
    return strtol(p + strlen(name), NULL, 10);
}

/* A process that makes no CUDA memory call has no event ring mapped (no
 * anonymous mapping of 8 MiB or more) and at most 1 MiB more private dirty
 * memory than bare, also with a ring of a million slots; the ring appears
 * at the first event. */
static void test_no_ring_before_the_first_event(void **state)
{
    (void)state;
    if (getenv("GL_SANITIZED")) /* the sanitizer's shadow memory is mapped bare too */
        skip();
    static struct run_result bare;
    h_run(&bare, NULL, ARGV(PROG("nocuda"), "mem"));
    assert_int_equal(bare.status, 0);
    assert_int_equal(field(bare.out, "big_anon "), 0);
    const char *const *envs[] = {NULL, ENV("GPULEDGER_QUEUE_SLOTS=1048576")};
    for (int k = 0; k < 2; k++) {
        h_run(&r, envs[k], ARGV(GL, "run", "-q", "-o", "n.db", PROG("nocuda"), "mem"));
        assert_int_equal(r.status, 0);
        assert_int_equal(field(r.out, "big_anon "), 0);
        long extra = field(r.out, "private_dirty_kb ") - field(bare.out, "private_dirty_kb ");
        if (extra > 1024)
            fail_msg("%ld KiB of private dirty memory more than bare (%s)", extra, r.out);
    }
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "c.db", PROG("nocuda"), "mem-cuda"));
    assert_int_equal(r.status, 0);
    assert_true(field(r.out, "big_anon ") >= 1);
}

/* GPULEDGER_QUEUE_SLOTS is bounded by the memory a full ring takes: one
 * line says so, and the ring made is the most that fits in 1 GiB. */
static void test_queue_slots_bounded_by_memory(void **state)
{
    (void)state;
    h_run(&r, ENV("GPULEDGER_QUEUE_SLOTS=16777216", "GPULEDGER_STACK_DEPTH=48"),
          ARGV(GL, "run", "-q", "-o", "q.db", PROG("nocuda"), "mem-cuda"));
    assert_int_equal(r.status, 0);
    assert_int_equal(h_count_lines(r.err, "gpuledger: GPULEDGER_QUEUE_SLOTS=16777216: 16777216 slots of "), 1);
    h_expect(r.err, "more than the 1024 MiB allowed; using 1048576 slots (");
    sqlite3 *db = h_open("q.db");
    assert_string_equal(h_text(db, "SELECT value FROM meta WHERE key = 'queue_slots'"), "1048576");
    sqlite3_close(db);
}

static const char *slurp(const char *rel)
{
    static char buf[4096];
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", h_dir(), rel);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
    return buf;
}

/* A program that closed its stderr and opened a data file (fd 2 again)
 * finds only its own bytes there: the library's lines ("exists already",
 * "wrote ...") go to the stderr the process started with, or nowhere. */
static void test_no_line_into_a_reused_fd2(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/s.db", h_dir());
    FILE *f = fopen(path, "w"); /* so that the library has a line to say */
    fclose(f);
    snprintf(path, sizeof path, "%s/data.txt", h_dir());
    h_run(&r, NULL, ARGV(GL, "run", "-o", "s.db", PROG("nocuda"), "stderr-file", path));
    assert_int_equal(r.status, 0);
    assert_string_equal(slurp("data.txt"), "data\nend\n");
    sqlite3 *db = h_open("s.1.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events"), 2);
    sqlite3_close(db);
}

/* The library's own last line (preloaded without gpuledger run): "1
 * event", sizes as the report writes them. */
static void test_exit_line(void **state)
{
    (void)state;
    char pre[700], out[700];
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", h_build("interpose/libgpuledger.so"));
    snprintf(out, sizeof out, "GPULEDGER_OUTPUT=%s/one.db", h_dir());
    h_run(&r, ENV(pre, out), ARGV(PROG("sigprobe"), "term"));
    assert_int_equal(r.status, 128 + SIGTERM);
    char want[800];
    snprintf(want, sizeof want, "gpuledger: wrote %s/one.db: 1 event, peak 1.00 MiB\n", h_dir());
    assert_string_equal(r.err, want);
    snprintf(out, sizeof out, "GPULEDGER_OUTPUT=%s/many.db", h_dir());
    h_run(&r, ENV(pre, out), ARGV(PROG("alloc1000")));
    assert_int_equal(r.status, 0);
    snprintf(want, sizeof want, "gpuledger: wrote %s/many.db: 1997 events, peak 1.43 MiB\n", h_dir());
    assert_string_equal(r.err, want);
}

/* Every exec entry point keeps what the first image recorded, in its .db
 * file alone (a copy without the -wal): the WAL is checkpointed before the
 * exec. posix_spawn runs the second image as a child (its own database). */
static void test_every_exec_keeps_the_first_image(void **state)
{
    (void)state;
    const char *how[] = {"execv", "execve", "execvp", "execl", "execle", "execlp", "fexecve", "execveat",
                         "posix_spawn", "posix_spawnp"};
    for (size_t i = 0; i < sizeof how / sizeof how[0]; i++) {
        char sub[700], cmd[2000];
        snprintf(sub, sizeof sub, "%s/%s", h_dir(), how[i]);
        snprintf(cmd, sizeof cmd, "mkdir -p %s", sub);
        assert_int_equal(system(cmd), 0);
        h_run_in(&r, sub, NULL, ARGV(GL, "run", "-q", "-o", "x-%p.db", PROG("execself"), how[i]));
        if (r.status != 0)
            fail_msg("%s: exit %d: %s", how[i], r.status, r.err);
        /* each database file copied alone, then read */
        snprintf(cmd, sizeof cmd,
                 "cd %s && for d in x-*.db; do cp $d alone.db && sqlite3 alone.db 'SELECT sum(size) FROM "
                 "allocations'; rm -f alone.db; done | sort | tr '\\n' ' ' > sums",
                 sub);
        assert_int_equal(system(cmd), 0);
        snprintf(cmd, sizeof cmd, "%s/sums", how[i]);
        if (strcmp(slurp(cmd), "1048576 2097152 ") != 0)
            fail_msg("%s: the .db files alone hold '%s', not '1048576 2097152 '", how[i], slurp(cmd));
    }
}

/* Failed frees: recorded on the device they were made on (not -1) and
 * counted as unmatched frees. */
static void test_failed_frees(void **state)
{
    (void)state;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "b.db", PROG("misc"), "badfree"));
    assert_int_equal(r.status, 0);
    sqlite3 *db = h_open("b.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE op = 'free' AND result != 0"), 2);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE device != 1"), 0);
    assert_int_equal(h_int(db, "SELECT unmatched_frees FROM run"), 2);
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_sigaction_sees_the_defaults, h_teardown),
        cmocka_unit_test_teardown(test_default_kept_underneath, h_teardown),
        cmocka_unit_test_teardown(test_python_ctrl_c, h_teardown),
        cmocka_unit_test_teardown(test_tsc_reanchoring_keeps_order, h_teardown),
        cmocka_unit_test_teardown(test_no_ring_before_the_first_event, h_teardown),
        cmocka_unit_test_teardown(test_queue_slots_bounded_by_memory, h_teardown),
        cmocka_unit_test_teardown(test_no_line_into_a_reused_fd2, h_teardown),
        cmocka_unit_test_teardown(test_exit_line, h_teardown),
        cmocka_unit_test_teardown(test_every_exec_keeps_the_first_image, h_teardown),
        cmocka_unit_test_teardown(test_failed_frees, h_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
