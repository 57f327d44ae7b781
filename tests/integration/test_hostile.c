/* test_hostile.c — programs and environments that are rough on gpuledger:
 * the modes the database files are created with, an output pattern that
 * names a directory. */
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

static int teardown(void **state)
{
    (void)state;
    h_cleanup();
    return 0;
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
        cmocka_unit_test_teardown(test_database_mode, teardown),
        cmocka_unit_test_teardown(test_output_directory, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
