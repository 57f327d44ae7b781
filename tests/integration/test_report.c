/* test_report.c — the report verbs on databases made by scripted programs
 * against the fake runtime, with exact expected numbers: a known peak and
 * its ledger, three planted leak chains, a growing-per-step leak, a
 * planted fragmentation pattern, gate exit codes, a diff, exports, HTML,
 * several databases at once, and bad or corrupted input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"


static struct run_result r;

static void make(const char *db, const char *scenario, const char *arg)
{
    if (arg)
        h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", db, PROG("misc"), scenario, arg));
    else if (!strcmp(scenario, "demo"))
        h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", db, PROG("demo")));
    else
        h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", db, PROG("misc"), scenario));
    assert_int_equal(r.status, 0);
}

static void test_peak_ledger_and_oom(void **state)
{
    (void)state;
    make("demo.db", "demo", NULL);
    h_run(&r, NULL, ARGV(GL, "report", "--format", "json", "demo.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "\"devices\":[{\"device\":0,\"peak\":{\"bytes\":85983232,");
    h_expect(r.out, "\"ledger\":[{\"stack_id\":1,\"category\":\"other\",\"bytes\":67108864,\"count\":1,\"frames\":[{\"symbol\":"
                  "\"load_weights\"");
    h_expect(r.out, "\"bytes\":15728640,\"count\":1,\"frames\":[{\"symbol\":\"forward_activations\"");
    h_expect(r.out, "\"bytes\":3145728,\"count\":3,\"frames\":[{\"symbol\":\"scratch_workspace\"");
    h_expect(r.out, "\"categories\":[{\"category\":\"other\",\"bytes\":70254592,\"count\":4},{\"category\":\"activations\","
                  "\"bytes\":15728640,\"count\":1}]");
    h_expect(r.out, "\"live_end_bytes\":2097152,\"leak_bytes\":2097152,\"cached_bytes\":0");
    h_expect(r.out, "\"oom\":[{\"seq\":32,");
    h_expect(r.out, "\"size\":1125899906842624,\"api\":\"cudaMalloc\",\"result\":2,\"live_bytes\":69206016,\"frames\":[{"
                  "\"symbol\":\"try_huge_buffer\"");
    h_expect(r.out, "\"api_counts\":{\"cudaMalloc\":10,\"cudaFree\":7,\"cudaMallocAsync\":8,\"cudaFreeAsync\":8}");
    h_run(&r, NULL, ARGV(GL, "report", "demo.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "device 0: peak 82.00 MiB");
    h_expect(r.out, "64.00 MiB  78.0%      1x  other            load_weights <- main");
    h_expect(r.out, "OUT OF MEMORY at");
    h_expect(r.out, "cudaMalloc 1024.00 TiB failed (error 2) with 66.00 MiB live; try_huge_buffer");
}

static void test_three_leak_chains(void **state)
{
    (void)state;
    make("l3.db", "leaks3", NULL);
    h_run(&r, NULL, ARGV(GL, "leaks", "l3.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "7.00 MiB never freed in 3 leak chains");
    h_expect(r.out, "#1    3.00 MiB in 1 allocation");
    h_expect(r.out, "#2    2.00 MiB in 2 allocations");
    h_expect(r.out, "#3    2.00 MiB in 4 allocations");
    h_run(&r, NULL, ARGV(GL, "leaks", "--format", "json", "l3.db"));
    h_expect(r.out, "\"leak_bytes\":7340032");
    h_expect(r.out, "{\"bytes\":3145728,\"count\":1,\"cached\":false,\"category\":\"other\"");
    const char *b = strstr(r.out, "\"bytes\":3145728");
    assert_non_null(b);
    h_expect(b, "{\"symbol\":\"leak_one\"");
    h_expect(b, "},{\"symbol\":\"leak_b\"");
    h_expect(r.out, "{\"bytes\":2097152,\"count\":2,");
    h_expect(r.out, "{\"bytes\":2097152,\"count\":4,");
    /* --min-bytes keeps only the 3 MiB chain */
    h_run(&r, NULL, ARGV(GL, "leaks", "--min-bytes", "2.5M", "l3.db"));
    h_expect(r.out, "3.00 MiB never freed in 1 leak chain");
}

static void test_growing_leak_found_by_steps(void **state)
{
    (void)state;
    make("g10.db", "grow", "10");
    h_run(&r, NULL, ARGV(GL, "leaks", "--steps=5", "--format", "json", "g10.db"));
    assert_int_equal(r.status, 0);
    const char *g = strstr(r.out, "\"growing\":[{");
    assert_non_null(g);
    h_expect(g, "\"steps\":[");
    h_expect(g, ",10485760],"); /* 10 x 1 MiB live at the end */
    h_expect(g, "{\"symbol\":\"leak_one\"");
    h_expect(g, "},{\"symbol\":\"grow_cache\"");
    assert_null(strstr(g, "scratch")); /* the steady 4 MiB per step is not a leak */
    const char *first = strstr(g, "\"growth_bytes\"");
    assert_non_null(first);
    assert_null(strstr(first + 1, "\"growth_bytes\"")); /* exactly one growing stack */
    h_run(&r, NULL, ARGV(GL, "leaks", "--steps", "g10.db"));
    h_expect(r.out, "growing step after step (10 slices of 5 allocations): 1 stack");
    h_expect(r.out, "1 stack");
}

static void test_fragmentation_ratio(void **state)
{
    (void)state;
    make("fr.db", "frag", NULL);
    h_run(&r, NULL, ARGV(GL, "holes", "fr.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "end   +");
    h_expect(r.out, "reserved 2.00 MiB, live 1.00 MiB, free 1.00 MiB in 3 holes, largest 512.00 KiB, external "
                  "fragmentation 0.500");
    h_expect(r.out, "the pool itself reported up to 2.00 MiB reserved");
    h_run(&r, NULL, ARGV(GL, "report", "--format", "json", "fr.db"));
    h_expect(r.out, "\"reserved\":2097152,\"live\":1048576,\"free\":1048576,\"largest_free\":524288,"
                  "\"external_fragmentation\":0.500000,\"largest_free_ratio\":0.500000,\"holes\":3");
    /* the pool's own state, sampled after the first stream-ordered call */
    sqlite3 *db = h_open("fr.db");
    assert_int_equal(h_int(db, "SELECT reserved FROM pool_samples ORDER BY ts_ns LIMIT 1"), 2097152);
    assert_int_equal(h_int(db, "SELECT used FROM pool_samples ORDER BY ts_ns LIMIT 1"), 262144);
    assert_int_equal(h_int(db, "SELECT total FROM device_samples LIMIT 1"), 17179869184LL);
    sqlite3_close(db);
}

static void test_gate_exit_codes_and_junit(void **state)
{
    (void)state;
    make("l3.db", "leaks3", NULL);
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "7M", "l3.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "gpuledger gate: pass — 7.00 MiB never freed (limit 7.00 MiB)");
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "6M", "--junit", "j.xml", "l3.db"));
    assert_int_equal(r.status, 1);
    h_expect(r.out, "gpuledger gate: FAIL — 7.00 MiB never freed (limit 6.00 MiB)");
    h_expect(r.out, "3.00 MiB in 1 allocation [other] l3.db: leak_one <- leak_b <- main");
    h_expect(r.out, "2.00 MiB in 4 allocations [other] l3.db: leak_one <- leak_c <- main");
    char p[512];
    snprintf(p, sizeof p, "%s/j.xml", h_dir());
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char xml[4096] = "";
    size_t n = fread(xml, 1, sizeof xml - 1, f);
    xml[n] = 0;
    fclose(f);
    h_expect(xml, "<failure type=\"leak\" message=\"7340032 bytes never freed over 1 database (limit 6291456)\">");
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "4M", "--ignore", "leak_b", "l3.db"));
    assert_int_equal(r.status, 0);
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "100M", "--max-peak-bytes", "8M", "l3.db"));
    assert_int_equal(r.status, 1);
    h_expect(r.out, "peak limit broken");
    h_run(&r, NULL, ARGV(GL, "gate", "l3.db"));
    assert_int_equal(r.status, 2);
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "1M", "missing.db"));
    assert_int_equal(r.status, 2);
    h_expect(r.err, "missing.db: No such file or directory");
}

static void test_diff_two_runs(void **state)
{
    (void)state;
    make("g5.db", "grow", "5");
    make("g10.db", "grow", "10");
    h_run(&r, NULL, ARGV(GL, "diff", "g5.db", "g10.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "peak:        8.00 MiB -> 13.00 MiB (+5.00 MiB)");
    h_expect(r.out, "never freed: 5.00 MiB -> 10.00 MiB (+5.00 MiB)");
    h_expect(r.out, "+5.00 MiB  leak_one <- grow_cache <- main");
    h_run(&r, NULL, ARGV(GL, "diff", "g5.db"));
    assert_int_equal(r.status, 2);
}

/* report --at and diff --at, with the exact ledger at an event, a mark, a
 * range, a time and an OOM. marks: 6 steps of 8 events each (push, two 1 MiB
 * allocations, their frees, grow_cache's 1 MiB kept, pop, mark "step N"). */
static void test_report_at(void **state)
{
    (void)state;
    h_run(&r, NULL, ARGV(GL, "run", "-q", "-o", "m.db", PROG("marks")));
    assert_int_equal(r.status, 0);
    /* a mark: after step 3, grow_cache's three MiB */
    h_run(&r, NULL, ARGV(GL, "report", "--format", "json", "--at", "step 3", "m.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "\"at\":{\"when\":\"step 3\",\"why\":\"mark 'step 3'\",\"seq\":24,");
    h_expect(r.out, ",\"bytes\":3145728,\"ledger\":[{\"stack_id\":");
    h_expect(r.out, "\"category\":\"other\",\"bytes\":3145728,\"count\":3,\"frames\":[{\"symbol\":\"grow_cache\"");
    h_expect(r.out, "\"categories\":[{\"category\":\"other\",\"bytes\":3145728,\"count\":3}]}");
    /* an event: step 3 with both scratch buffers live */
    h_run(&r, NULL, ARGV(GL, "report", "--format", "json", "--at", "#19", "m.db"));
    h_expect(r.out, "\"at\":{\"when\":\"#19\",\"why\":\"\",\"seq\":19,");
    h_expect(r.out, ",\"bytes\":4194304,\"ledger\":[");
    h_expect(r.out, "\"bytes\":2097152,\"count\":2,\"frames\":[{\"symbol\":\"grow_cache\"");
    h_expect(r.out, "\"bytes\":2097152,\"count\":2,\"frames\":[{\"symbol\":\"main\"");
    /* a range's 2nd occurrence: its highest point (1 kept + 2 scratch) */
    h_run(&r, NULL, ARGV(GL, "report", "--format", "json", "--at", "step@2", "m.db"));
    h_expect(r.out, "\"why\":\"the highest point inside range 'step' (its 2nd occurrence)\",\"seq\":11,");
    h_expect(r.out, ",\"bytes\":3145728,\"ledger\":[");
    /* text */
    h_run(&r, NULL, ARGV(GL, "report", "--at", "step 3", "m.db"));
    h_expect(r.out, "  at event #24 (+");
    h_expect(r.out, "), mark 'step 3': 3.00 MiB live\n  by category: other 3.00 MiB (100%)\n  ledger (1 stack):\n"
                  "      3.00 MiB 100.0%      3x  other            grow_cache <- main");
    /* a time: the golden copy has an event every millisecond from +0 */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/tests/golden/db/marks.db", getenv("GL_SOURCE_ROOT"));
    h_run(&r, NULL, ARGV("/bin/cp", cmd, "g.db"));
    assert_int_equal(r.status, 0);
    h_run(&r, NULL, ARGV(GL, "report", "--format", "json", "--at", "20ms", "g.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "\"at\":{\"when\":\"20ms\",\"why\":\"the last event at or before 20ms\",\"seq\":21,"
                  "\"ts_ns\":1021000000,\"bytes\":2097152,");
    /* oom: just before the failure, what the OOM ledger shows */
    make("demo.db", "demo", NULL);
    h_run(&r, NULL, ARGV(GL, "report", "--format", "json", "--at", "oom", "demo.db"));
    h_expect(r.out, "\"why\":\"just before the 1st out-of-memory failure\",\"seq\":32,");
    h_expect(r.out, ",\"bytes\":69206016,\"ledger\":[{\"stack_id\":");
    h_expect(r.out, "\"bytes\":67108864,\"count\":1,\"frames\":[{\"symbol\":\"load_weights\"");
    h_expect(r.out, "\"bytes\":2097152,\"count\":2,\"frames\":[{\"symbol\":\"scratch_workspace\"");
    /* the HTML page opens at that moment */
    h_run(&r, NULL, ARGV(GL, "report", "--format", "html", "--at", "step 3", "m.db"));
    h_expect(r.out, "\"selected\":{\"seq\":24,");
    /* what is wrong, said in one line, exit 2 */
    h_run(&r, NULL, ARGV(GL, "report", "--at", "nosuch", "m.db"));
    assert_int_equal(r.status, 2);
    h_expect(r.err, "gpuledger report: m.db: no mark or range labelled 'nosuch' (labels in this run: 'step', 'step 1',");
    h_run(&r, NULL, ARGV(GL, "report", "--at", "#0", "m.db"));
    assert_int_equal(r.status, 2);
    h_expect(r.err, "m.db: there is no event #0 (events are numbered 1 to ");
    h_run(&r, NULL, ARGV(GL, "report", "--at", "oom", "m.db"));
    assert_int_equal(r.status, 2);
    h_expect(r.err, "m.db: the run has no out-of-memory failure");
    h_run(&r, NULL, ARGV(GL, "report", "--at", "step 9", "m.db"));
    assert_int_equal(r.status, 2);
    h_expect(r.err, "no mark or range labelled 'step 9'");
    /* diff: two moments of one run */
    h_run(&r, NULL, ARGV(GL, "diff", "--at", "step 1", "--at", "step 5", "m.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, "A: event #8 (+");
    h_expect(r.out, "live:        1.00 MiB -> 5.00 MiB (+4.00 MiB)\n\nat those moments, by stack (B - A):\n"
                  "     +4.00 MiB  1.00 MiB -> 5.00 MiB  grow_cache <- main");
    assert_null(strstr(r.out, "never freed"));
    h_run(&r, NULL, ARGV(GL, "diff", "--at", "step 1", "m.db"));
    assert_int_equal(r.status, 2);
}

/* Rows whose stacks share their first frames read apart: the frame where
 * each differs is shown; a short run's times have microseconds. */
static void test_chains_tell_rows_apart(void **state)
{
    (void)state;
    make("deep.db", "deep", NULL);
    h_run(&r, NULL, ARGV(GL, "report", "deep.db"));
    assert_int_equal(r.status, 0);
    /* op, its caller (the op is the user's own frame), the frame that differs, the outermost */
    h_expect(r.out, "      3.00 MiB  60.0%      1x  other            layer5 <- layer4 <- ... <- from_loader <- main\n");
    h_expect(r.out, "      2.00 MiB  40.0%      1x  other            layer5 <- layer4 <- ... <- from_trainer <- main\n");
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "0", "deep.db"));
    h_expect(r.out, "deep.db: layer5 <- layer4 <- ... <- from_loader <- main\n");
    /* rows that already differ in what is shown are printed as before */
    make("l3.db", "leaks3", NULL);
    h_run(&r, NULL, ARGV(GL, "gate", "--max-leak-bytes", "0", "l3.db"));
    h_expect(r.out, "l3.db: leak_one <- leak_b <- main\n");
    assert_null(strstr(r.out, "... <- leak_"));
    /* the run took well under a second: times to the microsecond */
    h_run(&r, NULL, ARGV(GL, "report", "deep.db"));
    h_expect(r.out, " events over 0.");
    const char *at = strstr(r.out, "peak 5.00 MiB at +0.");
    assert_non_null(at);
    char digits[16] = "", unit = 0;
    assert_int_equal(sscanf(at, "peak 5.00 MiB at +0.%15[0-9]%c", digits, &unit), 2);
    assert_int_equal(strlen(digits), 6); /* +0.dddddds */
    assert_int_equal(unit, 's');
}

static void test_exports(void **state)
{
    (void)state;
    make("demo.db", "demo", NULL);
    h_run(&r, NULL, ARGV(GL, "export", "--format", "folded", "demo.db"));
    assert_int_equal(r.status, 0);
    h_expect(r.out, ";main;load_weights 67108864\n");
    h_expect(r.out, ";main;forward_activations 15728640\n");
    h_expect(r.out, ";main;scratch_workspace 3145728\n");
    assert_int_equal(h_count_lines(r.out, " "), 3);
    h_run(&r, NULL, ARGV(GL, "export", "--format", "folded", "--what", "leaks", "demo.db"));
    h_expect(r.out, ";main;scratch_workspace 2097152\n");
    h_run(&r, NULL, ARGV(GL, "export", "--format", "csv", "demo.db"));
    assert_int_equal(h_count_lines(r.out, ",0,"), 17); /* 17 allocations on device 0 */
    h_expect(r.out, "id,device,api,kind,addr,size,alloc_ns,free_ns,stack_id,allocated_in\n");
    h_run(&r, NULL, ARGV(GL, "export", "--format", "perfetto", "demo.db"));
    h_expect(r.out, "\"name\":\"OOM: cudaMalloc failed\",\"ph\":\"i\"");
    h_expect(r.out, "\"args\":{\"bytes\":85983232}");
    h_run(&r, NULL, ARGV(GL, "export", "--format", "svg", "demo.db"));
    assert_int_equal(r.status, 2);
}

static void test_html_is_self_contained(void **state)
{
    (void)state;
    make("demo.db", "demo", NULL);
    h_run(&r, NULL, ARGV(GL, "report", "--format", "html", "-o", "r.html", "demo.db"));
    assert_int_equal(r.status, 0);
    char p[512];
    snprintf(p, sizeof p, "%s/r.html", h_dir());
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    static char html[1 << 20];
    size_t n = fread(html, 1, sizeof html - 1, f);
    html[n] = 0;
    fclose(f);
    assert_true(n < sizeof html - 1);
    /* nothing may be fetched: a policy that forbids it, and no address */
    h_expect(html, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; ");
    assert_null(strstr(html, "http://"));
    assert_null(strstr(html, "https://"));
    assert_null(strstr(html, "<link"));
    assert_null(strstr(html, " src="));
    /* the data (html_data.h): the peak, its moment, leaks, the OOM and its ledger */
    h_expect(html, "<script type=\"application/json\" id=gl-data>\n{\"format\":\"gpuledger-report\",\"version\":1,");
    h_expect(html, "\"devices\":[{\"device\":0,\"peak\":[29,");
    h_expect(html, ",85983232],\"peak_step\":null,\"end_bytes\":2097152,\"buckets\":1000,\"moments\":[[1,0,67108864],");
    h_expect(html, "\"leak_bytes\":2097152,\"cached_bytes\":0,");
    h_expect(html, "\"api\":\"cudaMalloc\",\"size\":1125899906842624,\"result\":2,\"live\":69206016,");
    h_expect(html, "\"frames\":[[\"load_weights\",");
    /* exactly one data element and one script, each closed once */
    const char *s = html;
    int closes = 0;
    while ((s = strstr(s, "</script>")) != NULL) {
        closes++;
        s++;
    }
    assert_int_equal(closes, 2);
    h_expect(html, "GL.Timeline = (function () {");
}

static void test_several_databases(void **state)
{
    (void)state;
    make("a.db", "leaks3", NULL);
    make("b.db", "devices", NULL);
    h_run(&r, NULL, ARGV(GL, "report", "--format", "json", "a.db", "b.db"));
    assert_int_equal(r.status, 0);
    /* a.db peaks at 14 MiB on device 0 and leaks 7; b.db peaks at and leaks
     * 4 MiB on each of devices 0 and 1 */
    h_expect(r.out, "\"total\":{\"processes\":2,\"peak_bytes\":23068672,\"leak_bytes\":15728640}");
    h_run(&r, NULL, ARGV(GL, "report", "a.db", "b.db"));
    h_expect(r.out, "total over 2 processes: sum of per-device peaks 22.00 MiB");
    h_run(&r, NULL, ARGV(GL, "report", "--device", "1", "--format", "json", "b.db"));
    h_expect(r.out, "\"devices\":[{\"device\":1,\"peak\":{\"bytes\":4194304,");
}

static void test_bad_and_corrupted_input(void **state)
{
    (void)state;
    const char *verbs[] = {"report", "leaks", "holes", "summary"};
    char p[512];
    snprintf(p, sizeof p, "%s/text.db", h_dir());
    FILE *f = fopen(p, "w");
    fputs("not a database\n", f);
    fclose(f);
    for (size_t i = 0; i < 4; i++) {
        h_run(&r, NULL, ARGV(GL, verbs[i], "text.db"));
        assert_int_equal(r.status, 2);
        assert_int_equal(h_count_lines(r.err, "text.db"), 1);
        h_run(&r, NULL, ARGV(GL, verbs[i], "nope.db"));
        assert_int_equal(r.status, 2);
    }
    /* a little fuzzing: copies of a real database with bytes overwritten at
     * pseudo-random places, and cut short. Never a crash: 0 or 2. */
    make("good.db", "leaks3", NULL);
    snprintf(p, sizeof p, "%s/good.db", h_dir());
    FILE *in = fopen(p, "rb");
    static unsigned char img[1 << 20];
    size_t n = fread(img, 1, sizeof img, in);
    fclose(in);
    unsigned seed = 12345;
    for (int k = 0; k < 40; k++) {
        static unsigned char copy[1 << 20];
        memcpy(copy, img, n);
        size_t len = k % 5 == 4 ? n * (size_t)(k % 7 + 1) / 9 : n;
        for (int j = 0; j < 16; j++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = 100 + (seed >> 4) % (n - 100);
            copy[at] = (unsigned char)(seed >> 20);
        }
        char q[512];
        snprintf(q, sizeof q, "%s/fuzz.db", h_dir());
        FILE *o = fopen(q, "wb");
        fwrite(copy, 1, len, o);
        fclose(o);
        h_run(&r, NULL, ARGV(GL, verbs[k % 3], "fuzz.db"));
        if (r.status != 0 && r.status != 2)
            fail_msg("fuzz case %d: exit status %d\n%s", k, r.status, r.err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_peak_ledger_and_oom, h_teardown),
        cmocka_unit_test_teardown(test_three_leak_chains, h_teardown),
        cmocka_unit_test_teardown(test_growing_leak_found_by_steps, h_teardown),
        cmocka_unit_test_teardown(test_fragmentation_ratio, h_teardown),
        cmocka_unit_test_teardown(test_gate_exit_codes_and_junit, h_teardown),
        cmocka_unit_test_teardown(test_diff_two_runs, h_teardown),
        cmocka_unit_test_teardown(test_exports, h_teardown),
        cmocka_unit_test_teardown(test_report_at, h_teardown),
        cmocka_unit_test_teardown(test_chains_tell_rows_apart, h_teardown),
        cmocka_unit_test_teardown(test_html_is_self_contained, h_teardown),
        cmocka_unit_test_teardown(test_several_databases, h_teardown),
        cmocka_unit_test_teardown(test_bad_and_corrupted_input, h_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
