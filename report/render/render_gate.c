/* render_gate.c — the gate's verdict as text (a line, then the offending
 * chains and peaks) and as JUnit XML (valid against the Jenkins xUnit
 * schema, tests/junit/): one test case per check the gate made — the
 * never-freed bytes summed over the databases, and with --max-peak-bytes
 * the peak of each — and a <failure> in each that failed. A run's chains
 * are written as text while it is loaded (gl_render_gate_chains), the rest
 * from the results kept once every run was checked. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "out.h"
#include "render.h"

/* "  3.00 MiB in 2 allocations [other] a.db: f <- g <- main" for each
 * chain of g that counts. */
static void chain_lines(FILE *f, struct gl_gate_check *g)
{
    char b[32];
    const struct gl_stack **st = calloc(g->chains.n + 1, sizeof(void *));
    int *at = calloc(g->chains.n + 1, sizeof *at);
    size_t n = 0;
    for (size_t k = 0; st && g->counted && k < g->chains.n; k++)
        if (g->counted[k])
            st[n++] = gl_stack_get(&g->stacks, g->chains.v[k].stack_id);
    if (st && at)
        gl_stacks_distinct(st, n, at);
    for (size_t k = 0, shown = 0; g->counted && k < g->chains.n; k++) {
        const struct gl_group *c = &g->chains.v[k];
        if (!g->counted[k])
            continue;
        fprintf(f, "  %s in %" PRIu64 " allocation%s [", gl_fmt_bytes(c->bytes, b, sizeof b), c->count, gl_s(c->count));
        gl_text_str(f, c->category);
        fputs("] ", f);
        gl_text_str(f, g->run->path);
        fputs(": ", f);
        gl_print_chain(f, gl_stack_get(&g->stacks, c->stack_id), 6, st && at ? at[shown] : -1);
        shown++;
        fputc('\n', f);
    }
    free(st);
    free(at);
}

char *gl_render_gate_chains(struct gl_gate_check *g)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    chain_lines(f, g);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* "  note: a.db: the recording did not finish ..." for each unfinished run
 * gated all the same (--allow-unfinished). */
static void unfinished_lines(FILE *f, const struct gl_gate_view *v)
{
    for (int i = 0; i < v->n; i++)
        if (v->runs[i].unfinished) {
            fputs("  note: ", f);
            gl_text_str(f, v->runs[i].path);
            fputs(": " GL_UNFINISHED_TEXT ": what was live when it stopped counts as never freed\n", f);
        }
}

/* A figure and its limit, "7.00 MiB" and "2.00 MiB"; in bytes when the
 * rounding makes them read the same ("2097152 bytes" against "2097151
 * bytes", not "2.00 MiB" against "2.00 MiB"). */
static void fmt_pair(uint64_t x, uint64_t limit, char *bx, char *bl, size_t sz)
{
    char a[32], l[32];
    gl_fmt_bytes(x, a, sizeof a);
    gl_fmt_bytes(limit, l, sizeof l);
    int same = x != limit && !strcmp(a, l) && limit >= 1024;
    if (same) {
        snprintf(bx, sz, "%" PRIu64 " bytes", x);
        snprintf(bl, sz, "%" PRIu64 " bytes", limit);
    } else {
        snprintf(bx, sz, "%s", a);
        snprintf(bl, sz, "%s", l);
    }
}

void gl_render_gate_text(FILE *f, const struct gl_gate_view *v)
{
    char b[64], m[64];
    const struct gl_gate_query *q = v->q;
    fmt_pair(v->leak, q->max_leak, b, m, sizeof b);
    if (q->have_leak)
        fprintf(f, "gpuledger gate: %s — %s never freed (limit %s) in %d database%s%s\n", v->fail ? "FAIL" : "pass", b,
                m, v->n, gl_s((uint64_t)v->n), v->peak_fail ? "; peak limit broken" : "");
    else
        fprintf(f, "gpuledger gate: %s — peaks %s the limit of %s in %d database%s (never freed: %s, not gated)\n",
                v->fail ? "FAIL" : "pass", v->peak_fail ? "above" : "within",
                gl_fmt_bytes(q->max_peak, m, sizeof m), v->n, gl_s((uint64_t)v->n), gl_fmt_bytes(v->leak, b, sizeof b));
    unfinished_lines(f, v);
    for (int i = 0; v->fail && i < v->n; i++) {
        if (q->have_leak && v->runs[i].chains)
            fputs(v->runs[i].chains, f);
        if (v->runs[i].peak_fail) {
            fmt_pair(v->runs[i].peak, q->max_peak, b, m, sizeof b);
            fprintf(f, "  peak %s > %s in ", b, m);
            gl_text_str(f, v->runs[i].path);
            fputc('\n', f);
        }
    }
}

void gl_render_gate_junit(FILE *f, const struct gl_gate_view *v)
{
    const struct gl_gate_query *q = v->q;
    int tests = q->have_leak + (q->have_peak ? v->n : 0), leak_fail = q->have_leak && v->leak > q->max_leak,
        failures = leak_fail;
    for (int i = 0; q->have_peak && i < v->n; i++)
        failures += v->runs[i].peak_fail;
    const char *dbs = gl_s((uint64_t)v->n);
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<testsuites name=\"gpuledger gate\" tests=\"%d\" failures=\"%d\" errors=\"0\">\n"
            "  <testsuite name=\"gpuledger gate\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"0\">\n",
            tests, failures, tests, failures);
    if (q->have_leak)
        fprintf(f, "    <testcase classname=\"gpuledger.leaks\" name=\"never freed over %d database%s &lt;= %" PRIu64
                   " byte%s\">",
                v->n, dbs, q->max_leak, gl_s(q->max_leak));
    if (leak_fail) {
        char *text = NULL;
        size_t len = 0;
        FILE *chains = open_memstream(&text, &len);
        if (chains)
            unfinished_lines(chains, v);
        for (int i = 0; chains && i < v->n; i++)
            if (v->runs[i].chains)
                fputs(v->runs[i].chains, chains);
        if (chains)
            fclose(chains);
        fprintf(f,
                "<failure type=\"leak\" message=\"%" PRIu64 " byte%s never freed over %d database%s (limit %" PRIu64
                ")\">",
                v->leak, gl_s(v->leak), v->n, dbs, q->max_leak);
        gl_xml_str(f, text); /* text-escaped already: now for XML */
        fputs("</failure>", f);
        free(text);
    }
    if (q->have_leak)
        fputs("</testcase>\n", f);
    for (int i = 0; q->have_peak && i < v->n; i++) {
        const struct gl_gate_result *g = &v->runs[i];
        fputs("    <testcase classname=\"gpuledger.peak\" name=\"peak of ", f);
        gl_xml_str(f, g->path);
        fprintf(f, " &lt;= %" PRIu64 " byte%s\">", q->max_peak, gl_s(q->max_peak));
        if (g->peak_fail)
            fprintf(f, "<failure type=\"peak\" message=\"peak %" PRIu64 " byte%s on device %d (limit %" PRIu64 ")\"/>",
                    g->peak, gl_s(g->peak), g->device, q->max_peak);
        fputs("</testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
}
