/* render_gate.c — the gate's verdict as text (a line, then the offending
 * chains and peaks) and as JUnit XML (valid against the Jenkins xUnit
 * schema, tests/junit/): one test case per check the gate made — the
 * never-freed bytes summed over the databases, and with --max-peak-bytes
 * the peak of each — and a <failure> in each that failed. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "out.h"
#include "render.h"

/* "  3.00 MiB in 2 allocations [other] a.db: f <- g <- main" for each
 * chain of g that counts. */
static void chain_lines(FILE *f, struct gl_gate_run *g)
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

void gl_render_gate_text(FILE *f, struct gl_gate_view *v)
{
    char b[32], m[32];
    fprintf(f, "gpuledger gate: %s — %s never freed (limit %s) in %d database%s%s\n", v->fail ? "FAIL" : "pass",
            gl_fmt_bytes(v->leak, b, sizeof b), gl_fmt_bytes(v->q->max_leak, m, sizeof m), v->n,
            gl_s((uint64_t)v->n), v->peak_fail ? "; peak limit broken" : "");
    for (int i = 0; v->fail && i < v->n; i++) {
        chain_lines(f, &v->runs[i]);
        if (v->runs[i].peak_fail) {
            fprintf(f, "  peak %s > %s in ", gl_fmt_bytes(v->runs[i].peak, b, sizeof b),
                    gl_fmt_bytes(v->q->max_peak, m, sizeof m));
            gl_text_str(f, v->runs[i].run->path);
            fputc('\n', f);
        }
    }
}

int gl_render_gate_junit(FILE *f, const char *path, struct gl_gate_view *v)
{
    const struct gl_gate_query *q = v->q;
    int tests = 1 + (q->have_peak ? v->n : 0), leak_fail = v->leak > q->max_leak, failures = leak_fail;
    for (int i = 0; q->have_peak && i < v->n; i++)
        failures += v->runs[i].peak_fail;
    const char *dbs = gl_s((uint64_t)v->n);
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<testsuites name=\"gpuledger gate\" tests=\"%d\" failures=\"%d\" errors=\"0\">\n"
            "  <testsuite name=\"gpuledger gate\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"0\">\n"
            "    <testcase classname=\"gpuledger.leaks\" name=\"never freed over %d database%s &lt;= %" PRIu64 " byte%s\">",
            tests, failures, tests, failures, v->n, dbs, q->max_leak, gl_s(q->max_leak));
    if (leak_fail) {
        char *text = NULL;
        size_t len = 0;
        FILE *chains = open_memstream(&text, &len);
        for (int i = 0; chains && i < v->n; i++)
            chain_lines(chains, &v->runs[i]);
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
    fputs("</testcase>\n", f);
    for (int i = 0; q->have_peak && i < v->n; i++) {
        const struct gl_gate_run *g = &v->runs[i];
        fputs("    <testcase classname=\"gpuledger.peak\" name=\"peak of ", f);
        gl_xml_str(f, g->run->path);
        fprintf(f, " &lt;= %" PRIu64 " byte%s\">", q->max_peak, gl_s(q->max_peak));
        if (g->peak_fail)
            fprintf(f, "<failure type=\"peak\" message=\"peak %" PRIu64 " byte%s on device %d (limit %" PRIu64 ")\"/>",
                    g->peak, gl_s(g->peak), g->device, q->max_peak);
        fputs("</testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    if (fclose(f) != 0) {
        fprintf(stderr, "gpuledger gate: cannot write ");
        gl_text_str(stderr, path);
        fprintf(stderr, ": %s\n", strerror(errno));
        return 2;
    }
    return 0;
}
