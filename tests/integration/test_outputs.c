/* test_outputs.c — what the report verbs say, and where they write it, on
 * the inputs of issue 27: an unfinished recording (every verb says so, the
 * gate refuses to judge it), write errors (exit 2, no partial file), the
 * same database named twice, failed frees, and the small promises of the
 * command line. The launcher's Python path is here too. */
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

static void make(const char *db, const char *scenario)
{
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", db, PROG("misc"), scenario));
    assert_int_equal(r.status, 0);
}

static int exists(const char *name)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", h_dir(), name);
    return access(p, F_OK) == 0;
}

/* A recording killed after everything was stored (misc killed: 4 MiB in 2
 * allocations live, then SIGKILL): its live allocations are what
 * was live when the recording stopped, in every output; gate exits 2
 * without a verdict (and writes no JUnit), unless --allow-unfinished. */
static void test_unfinished_recording(void **state)
{
    (void)state;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "k.db", PROG("misc"), "killed"));
    assert_int_equal(r.status, 137);
    make("l3.db", "leaks3"); /* finished: 7 MiB never freed */
    h_run(&r, NULL, ARGV(GL, "summary", "k.db"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "gpuledger: k.db: 4 events, peak 5.00 MiB on device 0, 2 allocations (4.00 MiB) live "
                               "when the recording stopped; the recording did not finish (killed, disk full, or "
                               "still running)\n");
    h_run(&r, NULL, ARGV(GL, "report", "k.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "  4 events over ");
    h_expect(r.out, " s, the recording did not finish (killed, disk full, or still running)\n");
    h_expect(r.out, "\n  live when the recording stopped (it did not finish: not known to be leaks): 4.00 MiB — see "
                    "'gpuledger leaks'\n");
    assert_null(strstr(r.out, "never freed"));
    h_run(&r, NULL, ARGV(GL, "leaks", "k.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "\nWARNING: the recording did not finish (killed, disk full, or still running): these chains "
                    "were live when it stopped, not known to be leaks\n4.00 MiB live when the recording stopped in 1 "
                    "chain\n");
    assert_null(strstr(r.out, "never freed"));
    /* JSON (report, leaks) and the HTML page's data */
    static const char *const json[][4] = {{"report", "--format", "json"}, {"leaks", "--format", "json"},
                                          {"report", "--format", "html"}};
    for (int k = 0; k < 3; k++) {
        h_run(&r, NULL, ARGV(GL, json[k][0], json[k][1], json[k][2], "k.db"));
        assert_int_equal(r.status, 0);
        assert_int_equal(h_count_lines(r.out, "\"finished\":false"), 1);
        h_run(&r, NULL, ARGV(GL, json[k][0], json[k][1], json[k][2], "l3.db"));
        assert_int_equal(h_count_lines(r.out, "\"finished\":true"), 1);
    }
    h_run(&r, NULL, ARGV(GL, "export", "--format", "speedscope", "k.db"));
    h_expect(r.out, "\"name\":\"live when the recording stopped (4.00 MiB in 2 allocations)\"");
    h_run(&r, NULL, ARGV(GL, "diff", "l3.db", "k.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "note: B (k.db): the recording did not finish (killed, disk full, or still running): its 'never "
                    "freed' is what was live when it stopped\n");
    /* the gate: no verdict, no JUnit file */
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "0", "--junit", "g.xml", "l3.db", "k.db"));
    assert_int_equal(r.status, 2);
    assert_string_equal(r.out, "");
    assert_string_equal(r.err, "gpuledger gate: k.db: the recording did not finish (killed, disk full, or still "
                               "running): what was live when it stopped is no leak verdict (--allow-unfinished to "
                               "gate it anyway)\n");
    assert_false(exists("g.xml"));
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "100M", "--allow-unfinished", "k.db"));
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "gpuledger gate: pass — 4.00 MiB never freed (limit 100.00 MiB) in 1 database\n"
                               "  note: k.db: the recording did not finish (killed, disk full, or still running): "
                               "what was live when it stopped counts as never freed\n");
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "0", "--allow-unfinished", "k.db"));
    assert_int_equal(r.status, 1);
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "0", "l3.db")); /* finished: as before */
    assert_int_equal(r.status, 1);
    h_expect(r.out, "gpuledger gate: FAIL — 7.00 MiB never freed (limit 0 B) in 1 database\n");
    assert_null(strstr(r.out, "note:"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_unfinished_recording, h_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
