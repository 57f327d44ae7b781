/* test_reliability.c — gpuledger under abuse: SIGKILL at random moments
 * (the database opens, passes integrity_check and holds every event up to
 * the last commit), abort/_exit, exec, 64 threads, dlclose of the runtime,
 * two processes on one output path, a queue too small for the producers
 * (drops counted, never silent), a full disk. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"


static struct run_result r;

/* The last "<pairs>" line of killme's progress file: pairs the writer had
 * committed (killme writes a line only after gpuledger answered it). */
static long committed_pairs(const char *progress)
{
    FILE *f = fopen(progress, "r");
    long n, last = 0;
    while (f && fscanf(f, "%ld", &n) == 1)
        last = n;
    if (f)
        fclose(f);
    return last;
}

static void test_sigkill_twenty_times(void **state)
{
    (void)state;
    char lib[600], out[600], prog[600], progress[600];
    snprintf(lib, sizeof lib, "LD_PRELOAD=%s", h_build("interpose/libgpuledger.so"));
    unsigned seed = 4242;
    for (int k = 0; k < 20; k++) {
        snprintf(out, sizeof out, "%s/kill%d.db", h_dir(), k);
        snprintf(progress, sizeof progress, "%s/progress%d", h_dir(), k);
        snprintf(prog, sizeof prog, "%s", PROG("killme"));
        pid_t pid = fork();
        if (pid == 0) {
            putenv(lib);
            setenv("GPULEDGER_OUTPUT", out, 1);
            setenv("GPULEDGER_QUIET", "1", 1);
            execl(prog, prog, progress, (char *)NULL);
            _exit(127);
        }
        /* the random moment is one while recording: from the database's
         * creation on (a loaded machine may take a while to get there) */
        for (int i = 0; i < 2000 && access(out, F_OK) != 0; i++) {
            struct timespec poll = {0, 5000000L};
            nanosleep(&poll, NULL);
        }
        seed = seed * 1103515245u + 12345u;
        long delay_ms = 150 + (long)((seed >> 8) % 450);
        struct timespec d = {0, delay_ms * 1000000L};
        nanosleep(&d, NULL);
        kill(pid, SIGKILL);
        int st;
        waitpid(pid, &st, 0);
        assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        /* no timing in what is checked: every pair committed before the
         * last progress line is there (the line comes after gpuledger's
         * answer), and no more pairs than the program can have made before
         * the next line */
        long committed = committed_pairs(progress);
        sqlite3 *db = h_open(out);
        assert_string_equal(h_text(db, "PRAGMA integrity_check"), "ok");
        int64_t events = h_int(db, "SELECT count(*) FROM events");
        if (events < 2 * committed || events > 2 * (committed + 2000))
            fail_msg("kill %d after %ld ms: %lld events in the database; %ld pairs were committed before the "
                     "last progress line, at most %ld made",
                     k, delay_ms, (long long)events, committed, committed + 2000);
        assert_int_equal(h_int(db, "SELECT count(*) FROM run WHERE end_ns IS NULL"), 1);
        sqlite3_close(db);
    }
}

static void test_abort_and__exit(void **state)
{
    (void)state;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "a.db", PROG("misc"), "abort"));
    if (!getenv("GL_SANITIZED"))
        assert_int_equal(r.status, 128 + SIGABRT);
    sqlite3 *db = h_open("a.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events"), 1);
    if (!getenv("GL_SANITIZED"))
        assert_int_equal(h_int(db, "SELECT exit_signal FROM run"), SIGABRT);
    sqlite3_close(db);
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "e.db", PROG("misc"), "_exit", "9"));
    assert_int_equal(r.status, 9);
    db = h_open("e.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events"), 1);
    assert_int_equal(h_int(db, "SELECT exit_code FROM run"), 9);
    sqlite3_close(db);
}

static void test_exec_keeps_events(void **state)
{
    (void)state;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "x-%p.db", PROG("execself")));
    assert_int_equal(r.status, 0);
    /* same pid, two images: x-PID.db from the first, x-PID.1.db from the second */
    char cmd[800];
    snprintf(cmd, sizeof cmd,
             "cd %s && for d in x-*.db; do sqlite3 $d 'SELECT sum(size) FROM allocations'; done | sort | tr '\\n' ' ' "
             "> sums",
             h_dir());
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/sums", h_dir());
    FILE *f = fopen(cmd, "r");
    char sums[128] = "";
    assert_non_null(fgets(sums, sizeof sums, f));
    fclose(f);
    assert_string_equal(sums, "1048576 2097152 ");
}

static void test_sixty_four_threads(void **state)
{
    (void)state;
    h_run(&r, ENV("GPULEDGER_FULL_WAIT_MS=5000"), ARGV(GL, "run", "-q", "-o", "t.db", PROG("threads"), "64", "500"));
    assert_int_equal(r.status, 0);
    sqlite3 *db = h_open("t.db");
    /* every event stored or counted; none dropped unless a sanitizer slows
     * the writer past the bounded wait */
    assert_int_equal(h_int(db, "SELECT count(*) FROM events") + h_int(db, "SELECT dropped_events FROM run"), 64000);
    if (!getenv("GL_SANITIZED")) {
        assert_int_equal(h_int(db, "SELECT count(*) FROM events"), 64000);
        assert_int_equal(h_int(db, "SELECT count(DISTINCT tid) FROM events"), 64);
        assert_int_equal(h_int(db, "SELECT count(*) FROM allocations WHERE free_ns IS NULL"), 0);
        assert_int_equal(h_int(db, "SELECT unmatched_frees FROM run"), 0);
    }
    sqlite3_close(db);
}

static void test_fork_while_recording(void **state)
{
    (void)state;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "s-%p.db", PROG("misc"), "forkstorm"));
    const char *p = strstr(r.out, "forkstorm: ");
    assert_non_null(p);
    int failed = atoi(p + strlen("forkstorm: "));
    if (getenv("GL_SANITIZED")) {
        /* Under GCC 12's AddressSanitizer a child forked while another thread
         * is inside the sanitizer's allocator now and then hangs (its alarm
         * fires); the same test fails the same way with the library as it
         * was before (measured 1 in 8) and never without the sanitizer
         * (0 in 12): the sanitizer's fork handling, not ours. Tolerate one. */
        assert_true(failed <= 1);
    } else {
        assert_int_equal(r.status, 0);
        assert_int_equal(failed, 0);
    }
    char cmd[800];
    snprintf(cmd, sizeof cmd,
             "cd %s && n=0; for d in s-*.db; do sqlite3 $d 'SELECT count(*) FROM events' >/dev/null || exit 1; "
             "n=$((n+1)); done; test $n -ge %d",
             h_dir(), 11 - failed);
    assert_int_equal(system(cmd), 0);
}

static void test_dlclose_of_the_runtime(void **state)
{
    (void)state;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "d.db", PROG("dlclose_prog")));
    assert_int_equal(r.status, 0);
    sqlite3 *db = h_open("d.db");
    assert_string_equal(h_text(db, "SELECT group_concat(size, ',') FROM allocations"), "4096,8192,12288,4096,8192,12288");
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations WHERE free_ns IS NULL"), 0);
    sqlite3_close(db);
}

static void test_two_processes_one_path(void **state)
{
    (void)state;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cd %s && (%s run -q -o same.db %s exit 0 & %s run -q -o same.db %s exit 0 & wait)",
             h_dir(), GL, PROG("misc"), GL, PROG("misc"));
    assert_int_equal(system(cmd), 0);
    sqlite3 *db = h_open("same.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events"), 1);
    sqlite3_close(db);
    db = h_open("same.1.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events"), 1);
    sqlite3_close(db);
}

static void test_overflow_is_counted_never_silent(void **state)
{
    (void)state;
    h_run(&r, ENV("GPULEDGER_QUEUE_SLOTS=64", "GPULEDGER_FULL_WAIT_MS=0"),
          ARGV(GL, "run", "-q", "-o", "o.db", PROG("threads"), "8", "4000"));
    assert_int_equal(r.status, 0);
    sqlite3 *db = h_open("o.db");
    int64_t written = h_int(db, "SELECT count(*) FROM events"), dropped = h_int(db, "SELECT dropped_events FROM run");
    assert_true(dropped > 0);
    assert_int_equal(written + dropped, 64000); /* every event either stored or counted */
    sqlite3_close(db);
    h_run(&r, NULL, ARGV(GL, "report", "o.db"));
    assert_non_null(strstr(r.out, "events were dropped (queue full): figures are lower bounds"));
    /* with a bounded wait longer than any writer hiccup on a loaded 2-core
     * machine, the same load on the same tiny ring loses nothing */
    h_run(&r, ENV("GPULEDGER_QUEUE_SLOTS=64", "GPULEDGER_FULL_WAIT_MS=2000"),
          ARGV(GL, "run", "-q", "-o", "w.db", PROG("threads"), "8", "4000"));
    db = h_open("w.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events"), 64000);
    assert_int_equal(h_int(db, "SELECT dropped_events FROM run"), 0);
    sqlite3_close(db);
}

static void test_full_disk(void **state)
{
    (void)state;
    char mnt[600];
    snprintf(mnt, sizeof mnt, "%s/small", h_dir());
    char cmd[700];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", mnt);
    assert_int_equal(system(cmd), 0);
    if (mount("tmpfs", mnt, "tmpfs", 0, "size=512k") != 0)
        skip(); /* not allowed here (no CAP_SYS_ADMIN) */
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "small/full.db", PROG("threads"), "2", "20000"));
    umount(mnt);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "threads: 2 x 20000 pairs"));
    assert_int_equal(h_count_lines(r.err, "gpuledger:"), 1);
    assert_non_null(strstr(r.err, "recording stops here, the program runs on"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_sigkill_twenty_times, h_teardown),
        cmocka_unit_test_teardown(test_abort_and__exit, h_teardown),
        cmocka_unit_test_teardown(test_exec_keeps_events, h_teardown),
        cmocka_unit_test_teardown(test_sixty_four_threads, h_teardown),
        cmocka_unit_test_teardown(test_fork_while_recording, h_teardown),
        cmocka_unit_test_teardown(test_dlclose_of_the_runtime, h_teardown),
        cmocka_unit_test_teardown(test_two_processes_one_path, h_teardown),
        cmocka_unit_test_teardown(test_overflow_is_counted_never_silent, h_teardown),
        cmocka_unit_test_teardown(test_full_disk, h_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
