/* view_diff.c — the diff view of two runs: per stack (matched by its
 * frames' names, since addresses differ from run to run) the bytes live at
 * each run's peak and never freed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "moment.h"
#include "views.h"

static struct gl_diff_row *row_for(struct gl_diff_view *v, const char *sig)
{
    for (size_t i = 0; i < v->n; i++)
        if (!strcmp(v->rows[i].sig, sig))
            return &v->rows[i];
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 64;
        struct gl_diff_row *nv = realloc(v->rows, v->cap * sizeof *nv);
        if (!nv)
            return NULL;
        v->rows = nv;
    }
    struct gl_diff_row *r = &v->rows[v->n++];
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

/* Add groups to side's column: at the peak (leak 0) or never freed. */
static void add_groups(struct gl_diff_view *v, int side, const struct gl_groups *g, int leak)
{
    char sig[1024];
    for (size_t i = 0; i < g->n; i++) {
        gl_stack_signature(gl_stack_get(&v->stacks[side], g->v[i].stack_id), sig, sizeof sig);
        struct gl_diff_row *row = row_for(v, sig);
        if (!row)
            continue;
        int64_t *col = leak ? (side ? &row->lb : &row->la) : (side ? &row->b : &row->a);
        *col += (int64_t)g->v[i].bytes;
        *(side ? &row->stack_b : &row->stack_a) = g->v[i].stack_id;
    }
}

static int64_t absd(int64_t x)
{
    return x < 0 ? -x : x;
}

static int cmp_peak(const void *x, const void *y)
{
    const struct gl_diff_row *a = x, *b = y;
    int64_t da = absd(a->b - a->a), db = absd(b->b - b->a);
    return da < db ? 1 : da > db ? -1 : strcmp(a->sig, b->sig);
}

void gl_diff_view(struct gl_diff_view *v, struct gl_run *a, struct gl_run *b, const struct gl_moment *const *at)
{
    memset(v, 0, sizeof *v);
    v->run[0] = a;
    v->run[1] = b;
    for (int side = 0; side < 2; side++) {
        struct gl_run *r = v->run[side];
        gl_stacks_init(&v->stacks[side], r);
        const struct gl_device *d = max_dev(r);
        struct gl_groups g;
        if (at) {
            v->at[side] = at[side];
            gl_ledger_at(r, -2, at[side]->seq, &g);
            v->peak[side] = g.total_bytes;
            add_groups(v, side, &g, 0);
            gl_groups_free(&g);
        } else if (d) {
            v->peak[side] = d->peak;
            gl_ledger_at(r, d->device, d->peak_seq, &g);
            add_groups(v, side, &g, 0);
            gl_groups_free(&g);
        }
        struct gl_leak_opts lo = {0, 0, 0};
        gl_leaks(r, -2, &lo, &g);
        add_groups(v, side, &g, 1);
        gl_groups_free(&g);
    }
    for (size_t i = 0; i < v->n; i++) {
        v->leak[0] += v->rows[i].la;
        v->leak[1] += v->rows[i].lb;
    }
    if (v->n)
        qsort(v->rows, v->n, sizeof *v->rows, cmp_peak);
}

void gl_diff_view_free(struct gl_diff_view *v)
{
    for (int i = 0; i < 2; i++)
        gl_stacks_free(&v->stacks[i]);
    free(v->rows);
}
