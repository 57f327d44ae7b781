/* test_launcher.c — what `gpuledger run` says at the end, and that it
 * leaves nothing behind: a command that is not found or not runnable (as
 * the shell says it, 127/126), recording disabled, an output that cannot
 * be created (the library's reason), processes still running in the
 * background (with or without a database so far), a program without CUDA
 * calls; no file in /tmp, also when the launcher is killed or outlived. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

static struct run_result r;

static void nap_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static void test_command_not_found(void **state)
{
    (void)state;
    h_run(&r, NULL, ARGV(GL, "run", "gl-no-such-command"));
    assert_int_equal(r.status, 127);
    assert_string_equal(r.err, "gpuledger run: gl-no-such-command: command not found\n");
    h_run(&r, NULL, ARGV(GL, "run", "./no-such-file"));
    assert_int_equal(r.status, 127);
    assert_string_equal(r.err, "gpuledger run: ./no-such-file: No such file or directory\n");
    char path[600];
    snprintf(path, sizeof path, "%s/not-executable", h_dir());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    h_run(&r, NULL, ARGV(GL, "run", "./not-executable"));
    assert_int_equal(r.status, 126);
    assert_string_equal(r.err, "gpuledger run: ./not-executable: Permission denied\n");
}

static void test_recording_disabled(void **state)
{
    (void)state;
    h_run(&r, ENV("GPULEDGER_DISABLE=1"), ARGV(GL, "run", "-o", "x.db", PROG("alloc1000")));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "gpuledger: no database written: recording is disabled (GPULEDGER_DISABLE)\n");
}

static void test_output_not_created(void **state)
{
    (void)state;
    h_run(&r, NULL, ARGV(GL, "run", "-o", "/nonexistent-dir/x.db", PROG("alloc1000")));
    assert_int_equal(r.status, 0);
    /* the library's own line, then the launcher's, with the same reason */
    assert_int_equal(h_count_lines(r.err, "gpuledger"), 2);
    assert_non_null(strstr(r.err, "gpuledger: cannot create /nonexistent-dir/x.db: No such file or directory"));
    const char *l = strstr(r.err, "gpuledger: no database for pid ");
    assert_non_null(l);
    assert_non_null(strstr(l, ": cannot create /nonexistent-dir/x.db: No such file or directory (set "
                              "GPULEDGER_OUTPUT or -o to a writable path)\n"));
}

static void test_no_cuda_calls(void **state)
{
    (void)state;
    h_run(&r, NULL, ARGV(GL, "run", "/bin/true"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "gpuledger: no database written: the program made no CUDA memory calls that were "
                               "seen (is it a CUDA program? for static cudart see README, CUDA_INJECTION64_PATH)\n");
    h_run(&r, NULL, ARGV(GL, "run", "-q", "/bin/true"));
    assert_string_equal(r.err, "");
}

/* Wait until process `pid` (not our child) has gone, up to 10 s. */
static void wait_gone(long pid)
{
    for (int i = 0; i < 1000 && kill((pid_t)pid, 0) == 0; i++)
        nap_ms(10);
    assert_int_not_equal(kill((pid_t)pid, 0), 0);
}

static int64_t events_of(const char *fmt, long pid)
{
    char name[300];
    snprintf(name, sizeof name, fmt, pid);
    sqlite3 *db = h_open(name);
    int64_t n = h_int(db, "SELECT count(*) FROM events");
    assert_true(h_int(db, "SELECT end_ns IS NOT NULL FROM run") == 1);
    sqlite3_close(db);
    return n;
}

/* The command's shell starts a background process and ends: the launcher
 * says it still runs (it allocates only later), not "no CUDA calls". */
static void test_background_process_later(void **state)
{
    (void)state;
    char sh[800];
    snprintf(sh, sizeof sh, "%s late 300 0 &", PROG("hostile"));
    h_run(&r, NULL, ARGV(GL, "run", "-o", "bg-%p.db", "/bin/sh", "-c", sh));
    assert_int_equal(r.status, 0);
    long pid = 0;
    assert_int_equal(sscanf(r.err, "gpuledger: 1 background process of /bin/sh still runs (pid %ld): each writes its "
                                   "own database (bg-%%p.db) if it makes CUDA memory calls; gpuledger run does not wait "
                                   "for them\n",
                            &pid),
                     1);
    assert_int_equal(h_count_lines(r.err, "gpuledger"), 1);
    wait_gone(pid);
    assert_int_equal(events_of("bg-%ld.db", pid), 2);
}

/* ... and one that has its database already while it still runs. */
static void test_background_process_writing(void **state)
{
    (void)state;
    char sh[800];
    snprintf(sh, sizeof sh, "%s late 0 1000 & sleep 0.4", PROG("hostile"));
    h_run(&r, NULL, ARGV(GL, "run", "-o", "bh-%p.db", "/bin/sh", "-c", sh));
    assert_int_equal(r.status, 0);
    assert_int_equal(h_count_lines(r.err, "gpuledger"), 2);
    const char *l = strstr(r.err, "\ngpuledger: ");
    assert_non_null(l);
    long pid = 0;
    char tail[200] = "";
    assert_int_equal(sscanf(strstr(l, ": pid "), ": pid %ld %199[^\n]", &pid, tail), 2);
    assert_string_equal(tail, "still runs (in the background): its database is not finished");
    char first[300];
    snprintf(first, sizeof first, "gpuledger: %s/bh-%ld.db: 2 events,", h_dir(), pid);
    assert_memory_equal(r.err, first, strlen(first));
    wait_gone(pid);
    assert_int_equal(events_of("bh-%ld.db", pid), 2);
}

/* The launcher leaves no file: processes find it through an abstract
 * socket, also a background process that outlives it. */
static void test_nothing_left_in_tmp(void **state)
{
    (void)state;
    char sh[800];
    snprintf(sh, sizeof sh, "echo \"$GPULEDGER_MANIFEST\"; %s late 300 0 & echo $!", PROG("hostile"));
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "m-%p.db", "/bin/sh", "-c", sh));
    assert_int_equal(r.status, 0);
    char manifest[400] = "";
    long pid = 0;
    assert_int_equal(sscanf(r.out, "%399s %ld", manifest, &pid), 2);
    wait_gone(pid);
    assert_int_equal(events_of("m-%ld.db", pid), 2);
    if (access(manifest, F_OK) == 0)
        fail_msg("%s was left behind", manifest);
    assert_memory_equal(manifest, "@gpuledger-run-", 15);
}

/* 1 if the database's run row is finished, 0 if not, -1 if busy. */
static int finished(const char *path)
{
    sqlite3 *d = NULL;
    sqlite3_stmt *st = NULL;
    int done = -1;
    if (sqlite3_open_v2(path, &d, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(d, "SELECT end_ns IS NOT NULL FROM run", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        done = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(d);
    return done;
}

/* Start `gpuledger run` on a shell that notes its GPULEDGER_MANIFEST in
 * m.txt and becomes a process that records one pair and holds 800 ms;
 * send the launcher `sig` once the database exists. Returns the
 * launcher's wait status; its stderr is in err.txt, the manifest's
 * value in `manifest`. */
static int signal_launcher(int sig, const char *db, char *manifest, size_t msize)
{
    char sh[800];
    snprintf(sh, sizeof sh, "echo \"$GPULEDGER_MANIFEST\" > m.txt; exec %s late 0 800", PROG("hostile"));
    pid_t l = fork();
    assert_true(l >= 0);
    if (l == 0) {
        if (chdir(h_dir()) != 0 || !freopen("err.txt", "w", stderr))
            _exit(126);
        execl(GL, GL, "run", "-o", db, "/bin/sh", "-c", sh, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 300 && access(db, F_OK) != 0; i++)
        nap_ms(10);
    nap_ms(100);
    kill(l, sig);
    int st = 0;
    assert_int_equal(waitpid(l, &st, 0), l);
    char path[700];
    snprintf(path, sizeof path, "%s/m.txt", h_dir());
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(manifest, (int)msize, f));
    fclose(f);
    manifest[strcspn(manifest, "\n")] = 0;
    return st;
}

/* The launcher's manifest is no file: nothing of it exists afterwards. */
static void assert_nothing_left(const char *manifest)
{
    if (access(manifest, F_OK) == 0)
        fail_msg("%s was left behind", manifest);
    assert_memory_equal(manifest, "@gpuledger-run-", 15);
}

/* SIGKILL of the launcher while its command records: the command goes on
 * and finishes its database; nothing is left anywhere. */
static void test_launcher_killed(void **state)
{
    (void)state;
    char db[600], manifest[400];
    snprintf(db, sizeof db, "%s/k.db", h_dir());
    int st = signal_launcher(SIGKILL, db, manifest, sizeof manifest);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    /* the orphan ends on its own; its database is complete (read while it
     * is written, a query may find it busy: ask again) */
    for (int i = 0; i < 500 && finished(db) != 1; i++)
        nap_ms(10);
    char wal[700];
    snprintf(wal, sizeof wal, "%s-wal", db);
    for (int i = 0; i < 200 && access(wal, F_OK) == 0; i++) /* closed: no -wal */
        nap_ms(10);
    sqlite3 *d = h_open(db);
    assert_int_equal(h_int(d, "SELECT end_ns IS NOT NULL FROM run"), 1);
    assert_int_equal(h_int(d, "SELECT count(*) FROM events"), 2);
    assert_int_equal(h_int(d, "SELECT exit_code FROM run"), 0);
    sqlite3_close(d);
    assert_nothing_left(manifest);
}

/* SIGTERM of the launcher: passed to the command, which finishes its
 * database and dies of it; the launcher says so, exits 143, leaves
 * nothing. */
static void test_launcher_terminated(void **state)
{
    (void)state;
    char db[600], manifest[400];
    snprintf(db, sizeof db, "%s/t.db", h_dir());
    int st = signal_launcher(SIGTERM, db, manifest, sizeof manifest);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 128 + SIGTERM);
    sqlite3 *d = h_open(db);
    assert_int_equal(h_int(d, "SELECT end_ns IS NOT NULL FROM run"), 1);
    assert_int_equal(h_int(d, "SELECT count(*) FROM events"), 2);
    sqlite3_close(d);
    char path[700], err[4096] = "";
    snprintf(path, sizeof path, "%s/err.txt", h_dir());
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(err, 1, sizeof err - 1, f);
    fclose(f);
    err[n] = 0;
    char first[700];
    snprintf(first, sizeof first, "gpuledger: %s: 2 events,", db);
    assert_memory_equal(err, first, strlen(first));
    assert_int_equal(h_count_lines(err, "gpuledger"), 2);
    assert_non_null(strstr(err, "\ngpuledger: /bin/sh was killed by signal 15 (Terminated)\n"));
    assert_nothing_left(manifest);
}

/* Where the library cannot keep its files out of the program's reach
 * (close_range and unshare refused, tests/progs/noshare.c): the launcher
 * says that, not "no CUDA calls". */
static void test_recording_impossible_here(void **state)
{
    (void)state;
    h_run(&r, NULL, ARGV(PROG("noshare"), "-u", GL, "run", "-o", "x.db", PROG("alloc1000")));
    if (r.status == 77 && strstr(r.err, "noshare: seccomp"))
        skip();
    assert_int_equal(r.status, 0);
    assert_int_equal(h_count_lines(r.err, "gpuledger"), 2); /* the library's line, the launcher's */
    assert_non_null(strstr(r.err, "gpuledger: no database written: this kernel or its seccomp profile refuses "
                                  "close_range and unshare, which gpuledger needs to keep its files out of the "
                                  "program's reach\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_command_not_found, h_teardown),
        cmocka_unit_test_teardown(test_recording_disabled, h_teardown),
        cmocka_unit_test_teardown(test_output_not_created, h_teardown),
        cmocka_unit_test_teardown(test_no_cuda_calls, h_teardown),
        cmocka_unit_test_teardown(test_recording_impossible_here, h_teardown),
        cmocka_unit_test_teardown(test_background_process_later, h_teardown),
        cmocka_unit_test_teardown(test_background_process_writing, h_teardown),
        cmocka_unit_test_teardown(test_nothing_left_in_tmp, h_teardown),
        cmocka_unit_test_teardown(test_launcher_killed, h_teardown),
        cmocka_unit_test_teardown(test_launcher_terminated, h_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
