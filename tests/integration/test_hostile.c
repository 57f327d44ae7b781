/* test_hostile.c — programs and environments that are rough on gpuledger:
 * the modes the database files are created with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_database_mode, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
