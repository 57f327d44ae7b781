/* test_hostile.c — programs and environments that are rough on gpuledger:
 * a program that closes or replaces every descriptor from 3 up while it is
 * recorded (its files must hold exactly what it wrote, the database every
 * event), the modes the database files are created with, an output pattern
 * that names a directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

static struct run_result r;

/* What hostile.c writes: chunk k of file i. */
#define CHUNK 4096
#define ROUNDS 20
static void hostile_chunk(int i, int k, char *buf)
{
    memset(buf, 'a' + i, CHUNK);
    int n = snprintf(buf, CHUNK, "file %d chunk %d\n", i, k);
    buf[n] = '\n';
}

/* The four files hold exactly what the program wrote, and nothing else. */
static void assert_files_intact(void)
{
    static char want[CHUNK], got[CHUNK * ROUNDS + 1];
    for (int i = 0; i < 4; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/files/f%d", h_dir(), i);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        size_t n = fread(got, 1, sizeof got, f);
        fclose(f);
        if (n != (size_t)CHUNK * ROUNDS)
            fail_msg("%s: %zu bytes, want %d (starts \"%.16s\")", path, n, CHUNK * ROUNDS, got);
        for (int k = 0; k < ROUNDS; k++) {
            hostile_chunk(i, k, want);
            if (memcmp(want, got + (size_t)k * CHUNK, CHUNK))
                fail_msg("%s: chunk %d is not what the program wrote (starts \"%.16s\")", path, k,
                         got + (size_t)k * CHUNK);
        }
    }
}

static void assert_all_events(const char *db_name)
{
    sqlite3 *db = h_open(db_name);
    assert_string_equal(h_text(db, "PRAGMA integrity_check"), "ok");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events"), 2 * 2100);
    assert_int_equal(h_int(db, "SELECT count(*) FROM allocations WHERE free_ns IS NULL"), 0);
    assert_int_equal(h_int(db, "SELECT dropped_events FROM run"), 0);
    assert_int_equal(h_int(db, "SELECT exit_code FROM run"), 0);
    sqlite3_close(db);
}

enum how_run { LAUNCHER, PRELOADED, NO_CLOSE_RANGE, NO_UNSHARE };

/* hostile ARGS (NULL-terminated, at most 5) under gpuledger: through the
 * launcher, preloaded, or preloaded where close_range (and unshare) are
 * refused (noshare.c). Skips the test where seccomp is not allowed. */
static void run_hostile(enum how_run how, const char *db, const char *const *args)
{
    char pre[700], out[700];
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", h_build("interpose/libgpuledger.so"));
    snprintf(out, sizeof out, "GPULEDGER_OUTPUT=%s", db);
    const char *argv[16];
    int n = 0;
    if (how == LAUNCHER) {
        argv[n++] = GL;
        argv[n++] = "run";
        argv[n++] = "-q";
        argv[n++] = "-o";
        argv[n++] = db;
    } else if (how != PRELOADED) {
        argv[n++] = PROG("noshare");
        if (how == NO_UNSHARE)
            argv[n++] = "-u";
    }
    argv[n++] = PROG("hostile");
    for (int i = 0; args[i]; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    h_run(&r, how == LAUNCHER ? NULL : ENV(pre, out, "GPULEDGER_QUIET=1"), argv);
    if (r.status == 77 && strstr(r.err, "noshare: seccomp"))
        skip();
}

static void closefds(const char *how, enum how_run run)
{
    char files[600], db[600];
    snprintf(files, sizeof files, "%s/files", h_dir());
    assert_int_equal(mkdir(files, 0755), 0);
    snprintf(db, sizeof db, "%s/c.db", h_dir());
    run_hostile(run, db, ARGV("closefds", how, files, db));
    if (r.status != 0)
        fail_msg("hostile closefds %s exited %d: %s", how, r.status, r.err);
    if (h_count_lines(r.err, "gpuledger"))
        fail_msg("gpuledger said something: %s", r.err);
    assert_files_intact();
    assert_all_events("c.db");
}

static void test_close_loop(void **state)
{
    (void)state;
    closefds("loop", LAUNCHER);
}

static void test_close_loop_preloaded(void **state)
{
    (void)state;
    closefds("loop", PRELOADED);
}

static void test_close_range(void **state)
{
    (void)state;
    closefds("close_range", LAUNCHER);
}

static void test_closefrom(void **state)
{
    (void)state;
    closefds("closefrom", LAUNCHER);
}

static void test_dup2_over_ours(void **state)
{
    (void)state;
    closefds("dup2", LAUNCHER);
}

/* Before Linux 5.9 (no close_range): unshare(CLONE_FILES), and the
 * writer's copies of the program's descriptors are closed at once. */
static void test_close_loop_without_close_range(void **state)
{
    (void)state;
    closefds("loop", NO_CLOSE_RANGE);
}

/* A pipe whose write end the program closes reaches EOF: no copy of it
 * lingers in the writer's table. */
static void test_pipe_eof(void **state)
{
    (void)state;
    char db[600];
    snprintf(db, sizeof db, "%s/p.db", h_dir());
    run_hostile(PRELOADED, db, ARGV("pipe-eof", db));
    assert_string_equal(r.out, "hostile: pipe-eof: EOF\n");
    assert_int_equal(r.status, 0);
    run_hostile(NO_CLOSE_RANGE, db, ARGV("pipe-eof", db));
    assert_string_equal(r.out, "hostile: pipe-eof: EOF\n");
    assert_int_equal(r.status, 0);
}

/* Neither close_range nor unshare allowed: nothing is recorded, one line
 * says why, the program's files are intact. */
static void test_no_table_of_its_own(void **state)
{
    (void)state;
    char files[600], db[600];
    snprintf(files, sizeof files, "%s/files", h_dir());
    assert_int_equal(mkdir(files, 0755), 0);
    snprintf(db, sizeof db, "%s/c.db", h_dir());
    run_hostile(NO_UNSHARE, db, ARGV("closefds", "loop", files, db));
    assert_int_equal(r.status, 0);
    assert_int_equal(h_count_lines(r.err, "gpuledger"), 1);
    assert_non_null(strstr(r.err, "gpuledger: cannot give the writer a descriptor table of its own (close_range: "
                                  "Function not implemented; unshare: Operation not permitted)"));
    assert_non_null(strstr(r.err, "recording is off, the program runs on"));
    assert_int_equal(access(db, F_OK), -1);
    assert_files_intact();
}

/* A user's own interposer of cudaMalloc/cudaFree (tests/shim/countshim.c:
 * real = dlsym(RTLD_NEXT, ...) inside the call), preloaded before or after
 * gpuledger: both see every call, nothing recurses. */
static void with_shim(int shim_first)
{
    char pre[1400], ours[600], shim[600];
    snprintf(ours, sizeof ours, "%s", h_build("interpose/libgpuledger.so"));
    snprintf(shim, sizeof shim, "%s", h_build("tests/shim/libcountshim.so"));
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s:%s", shim_first ? shim : ours, shim_first ? ours : shim);
    h_run(&r, ENV(pre, "GPULEDGER_OUTPUT=s.db", "GPULEDGER_QUIET=1"), ARGV(PROG("alloc1000")));
    if (r.status != 0)
        fail_msg("alloc1000 with %s exited %d: %s", pre, r.status, r.err);
    assert_string_equal(r.err, "countshim: 1000 cudaMalloc, 997 cudaFree\n");
    sqlite3 *db = h_open("s.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE api = 'cudaMalloc'"), 1000);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE api = 'cudaFree'"), 997);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events"), 1997);
    sqlite3_close(db);
    /* the same functions fetched with dlsym(RTLD_DEFAULT, ...) */
    h_run(&r, ENV(pre, "GPULEDGER_OUTPUT=d.db", "GPULEDGER_QUIET=1"), ARGV(PROG("hostile"), "dlsym-default", "300"));
    if (r.status != 0)
        fail_msg("hostile dlsym-default with %s exited %d: %s", pre, r.status, r.err);
    assert_string_equal(r.err, "countshim: 300 cudaMalloc, 300 cudaFree\n");
    db = h_open("d.db");
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE api = 'cudaMalloc'"), 300);
    assert_int_equal(h_int(db, "SELECT count(*) FROM events WHERE api = 'cudaFree'"), 300);
    sqlite3_close(db);
}

static void test_other_interposer_after_us(void **state)
{
    (void)state;
    with_shim(0);
}

static void test_other_interposer_before_us(void **state)
{
    (void)state;
    with_shim(1);
}

/* The database holds the command line, host name and paths: 0600, also its
 * -wal and -shm, unless the umask is stricter. */
static void test_database_mode(void **state)
{
    (void)state;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cd %s && umask 022 && %s run -q -o p.db %s perm p.db > modes", h_dir(), GL,
             PROG("hostile"));
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "cd %s && umask 077 && %s run -q -o q.db %s perm q.db >> modes && "
             "umask 002 && %s run -q -o s.db %s perm s.db >> modes", h_dir(), GL, PROG("hostile"), GL,
             PROG("hostile"));
    assert_int_equal(system(cmd), 0);
    char path[600], buf[256] = "";
    snprintf(path, sizeof path, "%s/modes", h_dir());
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    assert_string_equal(buf, "600 600 600\n600 600 600\n600 600 600\n");
}

/* The one file in DIR, which must be DIR/gpuledger-<pid>.db; its event count. */
static int64_t events_in(const char *dir)
{
    char cmd[800], path[700];
    snprintf(cmd, sizeof cmd, "cd %s && ls -A %s > listing && ls -A > top", h_dir(), dir);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/listing", h_dir());
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char name[256] = "", more[256];
    assert_non_null(fgets(name, sizeof name, f));
    int extra = fgets(more, sizeof more, f) != NULL;
    fclose(f);
    name[strcspn(name, "\n")] = 0;
    if (extra || strncmp(name, "gpuledger-", 10) || strcmp(name + strlen(name) - 3, ".db"))
        fail_msg("%s holds '%s'%s, not one gpuledger-PID.db", dir, name, extra ? " and more" : "");
    snprintf(path, sizeof path, "%s/%s", dir, name);
    sqlite3 *db = h_open(path);
    int64_t n = h_int(db, "SELECT count(*) FROM events");
    sqlite3_close(db);
    return n;
}

/* -o DIR (an existing directory) and GPULEDGER_OUTPUT=DIR/ write
 * DIR/gpuledger-<pid>.db, never a DIR.1 beside it. */
static void test_output_directory(void **state)
{
    (void)state;
    char dir[600];
    snprintf(dir, sizeof dir, "%s/out", h_dir());
    assert_int_equal(mkdir(dir, 0755), 0);
    h_run(&r, NULL, ARGV(GL, "run", "-o", "out", PROG("alloc1000")));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "/out/gpuledger-"));
    assert_int_equal(events_in("out"), 1997);
    char top[600], buf[256] = "";
    snprintf(top, sizeof top, "%s/top", h_dir());
    FILE *f = fopen(top, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    assert_string_equal(buf, ".stderr\n.stdout\nlisting\nout\ntop\n"); /* no out.1 */

    snprintf(dir, sizeof dir, "%s/env", h_dir());
    assert_int_equal(mkdir(dir, 0755), 0);
    char pre[700];
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", h_build("interpose/libgpuledger.so"));
    h_run(&r, ENV(pre, "GPULEDGER_OUTPUT=env/"), ARGV(PROG("alloc1000")));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "/env/gpuledger-"));
    assert_int_equal(events_in("env"), 1997);

    /* a directory that does not exist: one line, the program runs on */
    h_run(&r, NULL, ARGV(GL, "run", "-o", "nowhere/", PROG("alloc1000")));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "cannot create nowhere/gpuledger-"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_close_loop, h_teardown),
        cmocka_unit_test_teardown(test_close_loop_preloaded, h_teardown),
        cmocka_unit_test_teardown(test_close_range, h_teardown),
        cmocka_unit_test_teardown(test_closefrom, h_teardown),
        cmocka_unit_test_teardown(test_dup2_over_ours, h_teardown),
        cmocka_unit_test_teardown(test_close_loop_without_close_range, h_teardown),
        cmocka_unit_test_teardown(test_pipe_eof, h_teardown),
        cmocka_unit_test_teardown(test_no_table_of_its_own, h_teardown),
        cmocka_unit_test_teardown(test_other_interposer_after_us, h_teardown),
        cmocka_unit_test_teardown(test_other_interposer_before_us, h_teardown),
        cmocka_unit_test_teardown(test_database_mode, h_teardown),
        cmocka_unit_test_teardown(test_output_directory, h_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
