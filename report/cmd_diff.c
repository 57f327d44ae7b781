/* cmd_diff.c — `gpuledger diff A.db B.db`: what grew between two runs.
 * Stacks are matched across databases by their frames' names (addresses
 * differ from run to run), and compared at each run's peak and at exit. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "commands.h"
#include "out.h"
#include "reader.h"

struct row {
    char sig[1024];
    int64_t a, b;           /* bytes at the peak */
    int64_t la, lb;         /* bytes never freed */
    int64_t stack_a, stack_b;
};

struct table {
    struct row *v;
    size_t n, cap;
};

static struct row *row_for(struct table *t, const char *sig)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->v[i].sig, sig))
            return &t->v[i];
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        struct row *nv = realloc(t->v, t->cap * sizeof *nv);
        if (!nv)
            return NULL;
        t->v = nv;
    }
    struct row *r = &t->v[t->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->sig, sizeof r->sig, "%s", sig);
    return r;
}

static const struct gl_device *max_dev(const struct gl_run *r)
{
    const struct gl_device *best = NULL;
    for (int i = 0; i < r->ndevs; i++)
        if (!best || r->devs[i].peak > best->peak)
            best = &r->devs[i];
    return best;
}

static void add_run(struct table *t, struct gl_run *r, struct gl_stacks *s, int side)
{
    const struct gl_device *d = max_dev(r);
    struct gl_groups g;
    char sig[1024];
    if (d) {
        gl_ledger_at(r, d->device, d->peak_seq, &g);
        for (size_t i = 0; i < g.n; i++) {
            gl_stack_signature(gl_stack_get(s, g.v[i].stack_id), sig, sizeof sig);
            struct row *row = row_for(t, sig);
            if (!row)
                continue;
            *(side ? &row->b : &row->a) += (int64_t)g.v[i].bytes;
            *(side ? &row->stack_b : &row->stack_a) = g.v[i].stack_id;
        }
        gl_groups_free(&g);
    }
    struct gl_leak_opts lo = {0, 0, 0};
    gl_leaks(r, -2, &lo, &g);
    for (size_t i = 0; i < g.n; i++) {
        gl_stack_signature(gl_stack_get(s, g.v[i].stack_id), sig, sizeof sig);
        struct row *row = row_for(t, sig);
        if (!row)
            continue;
        *(side ? &row->lb : &row->la) += (int64_t)g.v[i].bytes;
        *(side ? &row->stack_b : &row->stack_a) = g.v[i].stack_id;
    }
    gl_groups_free(&g);
}

static int64_t absd(int64_t x)
{
    return x < 0 ? -x : x;
}

static int cmp_peak(const void *x, const void *y)
{
    const struct row *a = x, *b = y;
    int64_t da = absd(a->b - a->a), db = absd(b->b - b->a);
    return da < db ? 1 : da > db ? -1 : strcmp(a->sig, b->sig);
}

static void signed_bytes(int64_t v, char *buf, size_t sz)
{
    char b[32];
    snprintf(buf, sz, "%s%s", v < 0 ? "-" : "+", gl_fmt_bytes((uint64_t)absd(v), b, sizeof b));
}

int cmd_diff(int argc, char **argv)
{
    static const struct option opts[] = {
        {"top", required_argument, NULL, 't'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int top = 15, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 't')
            top = atoi(optarg) > 0 ? atoi(optarg) : 15;
        else if (c == 'h') {
            printf("usage: gpuledger diff [--top K] A.db B.db\n\nPeak and never-freed bytes of B against A, by "
                   "stack (matched by frame names), biggest change first.\n");
            return 0;
        } else
            return 2;
    }
    if (argc - optind != 2) {
        fprintf(stderr, "gpuledger diff: want exactly two databases, A (before) and B (after)\n");
        return 2;
    }
    struct gl_run **runs;
    if (gl_load_all(2, argv + optind, &runs))
        return 2;
    struct table t = {0};
    struct gl_stacks s[2];
    for (int i = 0; i < 2; i++) {
        gl_stacks_init(&s[i], runs[i]);
        add_run(&t, runs[i], &s[i], i);
    }
    const struct gl_device *da = max_dev(runs[0]), *db = max_dev(runs[1]);
    uint64_t pa = da ? da->peak : 0, pb = db ? db->peak : 0;
    int64_t la = 0, lb = 0;
    for (size_t i = 0; i < t.n; i++) {
        la += t.v[i].la;
        lb += t.v[i].lb;
    }
    char x[32], y[32], d[40];
    signed_bytes((int64_t)pb - (int64_t)pa, d, sizeof d);
    printf("peak:        %s -> %s (%s)\n", gl_fmt_bytes(pa, x, sizeof x), gl_fmt_bytes(pb, y, sizeof y), d);
    signed_bytes(lb - la, d, sizeof d);
    printf("never freed: %s -> %s (%s)\n", gl_fmt_bytes((uint64_t)la, x, sizeof x), gl_fmt_bytes((uint64_t)lb, y, sizeof y),
           d);
    if (t.n)
        qsort(t.v, t.n, sizeof *t.v, cmp_peak);
    printf("\nat the peak, by stack (B - A):\n");
    int shown = 0;
    for (size_t i = 0; i < t.n && shown < top; i++) {
        if (t.v[i].a == t.v[i].b)
            continue;
        signed_bytes(t.v[i].b - t.v[i].a, d, sizeof d);
        printf("  %12s  %s -> %s  ", d, gl_fmt_bytes((uint64_t)t.v[i].a, x, sizeof x),
               gl_fmt_bytes((uint64_t)t.v[i].b, y, sizeof y));
        int side = t.v[i].stack_b ? 1 : 0;
        gl_print_chain(stdout, gl_stack_get(&s[side], side ? t.v[i].stack_b : t.v[i].stack_a), 4);
        putchar('\n');
        shown++;
    }
    if (!shown)
        printf("  no change\n");
    printf("\nnever freed, by stack (B - A):\n");
    shown = 0;
    for (size_t i = 0; i < t.n && shown < top; i++) {
        if (t.v[i].la == t.v[i].lb)
            continue;
        signed_bytes(t.v[i].lb - t.v[i].la, d, sizeof d);
        printf("  %12s  ", d);
        int side = t.v[i].stack_b ? 1 : 0;
        gl_print_chain(stdout, gl_stack_get(&s[side], side ? t.v[i].stack_b : t.v[i].stack_a), 4);
        putchar('\n');
        shown++;
    }
    if (!shown)
        printf("  no change\n");
    for (int i = 0; i < 2; i++) {
        gl_stacks_free(&s[i]);
        gl_run_free(runs[i]);
    }
    free(runs);
    free(t.v);
    return 0;
}
