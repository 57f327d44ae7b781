/* export_perfetto.c — `export --format perfetto`: the run as Chrome
 * trace-event JSON, which ui.perfetto.dev and chrome://tracing open:
 *
 *   counters  "device D live bytes" {bytes}: all memory counted on device D;
 *             "device D: CATEGORY" {bytes}: one counter track per category
 *             of the ledger's rows (the category of each allocation, by the
 *             same rules as the report; with PyTorch's blocks, the tensors'
 *             categories, and the caching allocator's free and pending
 *             blocks as allocator_cache, as the report's ledger has them),
 *             changed at every allocation, free and block completion
 *   slices    each range (gpuledger_range_push/pop, NVTX) on the thread that
 *             opened it; each mark as a slice on the "marks" track from the
 *             mark before (or the start) to it, named by its label, so
 *             marks that end steps read as the steps
 *   instants  each failed allocation ("OOM: cudaMalloc failed"), with its
 *             size, error, device and the innermost frames of its stack
 *
 * Times are microseconds since the run's first event. The format's fields
 * used here are checked against tests/schemas/trace_event.schema.json. */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "ledger_layers.h"
#include "model_annot.h"
#include "model_block_facts.h"
#include "render.h"
#include "sweep.h"
#include "u64map.h"

#define MARKS_TID 0 /* no thread of a process has tid 0: the marks track */
#define MAX_CATS 64

static double us(const struct gl_run *r, int64_t ts)
{
    return (double)gl_ns_since(ts, r->first_ns) / 1e3;
}

static void counter(struct gl_json *j, const struct gl_run *r, const char *name, double ts, int64_t bytes)
{
    gl_jw_obj(j, NULL);
    gl_jw_str(j, "name", name);
    gl_jw_str(j, "ph", "C");
    gl_jw_num(j, "ts", "%.3f", ts);
    gl_jw_i64(j, "pid", r->pid);
    gl_jw_obj(j, "args");
    gl_jw_i64(j, "bytes", bytes);
    gl_jw_end(j);
    gl_jw_end(j);
}

struct cats {
    const char *name[MAX_CATS];
    int64_t live[GL_MAX_DEVICES + 1][MAX_CATS]; /* by device + 1: -1 is "unknown" */
    int n;
};

static int cat_index(struct cats *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->name[i], name))
            return i;
    if (c->n == MAX_CATS)
        return MAX_CATS - 1; /* more categories than a trace wants: the last takes the rest */
    c->name[c->n] = name;
    return c->n++;
}

/* What the counters follow: CUDA memory and the ledger's items (PyTorch's
 * blocks too). */
static int replayed(const struct gl_alloc *a)
{
    return gl_kind_counts_on_device(a->kind) || gl_is_item(a);
}

struct ctr {
    struct gl_json *j;
    struct gl_run *r;
    struct cats *cs;
    struct gl_layers lay[GL_MAX_DEVICES + 1];
    int64_t live[GL_MAX_DEVICES + 1];
    int cache; /* category index of allocator_cache, -1: no blocks */
};

/* One change on device k at time t: the total, the category ci of the
 * allocation (-1: none), the allocator's cache (with layers). */
static void emit(struct ctr *x, int k, double t, int ci, int layers)
{
    char name[128];
    snprintf(name, sizeof name, "device %d live bytes", k - 1);
    counter(x->j, x->r, name, t, x->live[k]);
    for (int pass = 0; pass < 2; pass++) {
        int c = pass ? (layers && x->lay[k].on && ci != x->cache ? x->cache : -1) : ci;
        if (c < 0)
            continue;
        int64_t v = x->cs->live[k][c];
        if (c == x->cache && x->lay[k].on)
            v += gl_layers_cached(&x->lay[k]) + x->lay[k].pending;
        snprintf(name, sizeof name, "device %d: %s", k - 1, x->cs->name[c]);
        counter(x->j, x->r, name, t, v);
    }
}

static int counters(struct gl_json *j, struct gl_run *r, const struct gl_rules *rules, struct gl_stacks *s)
{
    struct gl_sweep sw = {NULL, 0};
    struct ctr *x = calloc(1, sizeof *x);
    struct cats *cs = calloc(1, sizeof *cs);
    struct gl_layers_done *done = NULL;
    size_t ndone = 0;
    struct gl_block_fact *facts = r->has_blocks ? gl_block_facts_load(r) : NULL;
    if (!x || !cs || (r->has_blocks && !facts) || gl_sweep_build(r, &sw, replayed) ||
        gl_layers_done_list(r, &done, &ndone)) {
        free(x);
        free(cs);
        free(facts);
        gl_sweep_free(&sw);
        return -1;
    }
    *x = (struct ctr){.j = j, .r = r, .cs = cs, .cache = -1};
    for (int k = 0; k < r->ndevs; k++)
        if (r->devs[k].blocks && r->devs[k].device >= -1 && r->devs[k].device < GL_MAX_DEVICES)
            x->lay[r->devs[k].device + 1].on = 1;
    if (r->has_blocks)
        x->cache = cat_index(cs, "allocator_cache");
    struct gl_u64map site; /* stack, api, kind, identity category -> category index + 1 */
    gl_u64map_init(&site);
    size_t di = 0;
    for (size_t i = 0; i <= sw.n; i++) {
        int64_t seq = i < sw.n ? gl_sweep_seq(r, sw.ev[i]) : INT64_MAX;
        for (; di < ndone && done[di].seq < seq; di++) { /* blocks reusable again: pending to cached */
            const struct gl_alloc *a = &r->allocs[done[di].idx];
            if (a->device < -1 || a->device >= GL_MAX_DEVICES)
                continue;
            gl_layers_complete(&x->lay[a->device + 1], a);
            emit(x, a->device + 1, us(r, facts ? facts[done[di].idx].done_ns : a->free_ns), -1, 1);
        }
        if (i == sw.n)
            break;
        const struct gl_alloc *a = gl_sweep_alloc(r, sw.ev[i]);
        if (a->device < -1 || a->device >= GL_MAX_DEVICES)
            continue; /* -1 (unknown) .. GL_MAX_DEVICES - 1: the model keeps no other */
        int k = a->device + 1, is_free = gl_sweep_is_free(sw.ev[i]);
        int64_t delta = is_free ? -(int64_t)a->size : (int64_t)a->size;
        int ci = -1;
        if (gl_is_item(a)) {
            uint64_t key = (uint64_t)a->stack_id << 32 | (uint64_t)a->api << 16 | (uint64_t)a->kind << 8 | a->cat, c;
            if (!gl_u64map_get(&site, key, &c)) {
                c = (uint64_t)cat_index(cs, gl_categorize(rules, s, a)) + 1;
                gl_u64map_put(&site, key, c);
            }
            ci = (int)c - 1;
            cs->live[k][ci] += delta;
        }
        if (gl_kind_counts_on_device(a->kind))
            x->live[k] += delta;
        gl_layers_apply(&x->lay[k], a, is_free);
        emit(x, k, us(r, gl_sweep_ts(r, sw.ev[i])), ci, (a->flags & GL_AF_ALLOCATOR) || a->kind == GL_KIND_BLOCK);
    }
    gl_u64map_free(&site);
    free(x);
    free(cs);
    free(done);
    free(facts);
    gl_sweep_free(&sw);
    return 0;
}

static void thread_name(struct gl_json *j, const struct gl_run *r, int tid, const char *name)
{
    gl_jw_obj(j, NULL);
    gl_jw_str(j, "name", "thread_name");
    gl_jw_str(j, "ph", "M");
    gl_jw_i64(j, "pid", r->pid);
    gl_jw_i64(j, "tid", tid);
    gl_jw_obj(j, "args");
    gl_jw_str(j, "name", name);
    gl_jw_end(j);
    gl_jw_end(j);
}

static int slices(struct gl_json *j, struct gl_run *r)
{
    struct gl_annots an;
    char err[256], name[64];
    if (gl_annots_load(r, &an, err, sizeof err))
        return 0; /* the report said so already; the trace goes on without them */
    struct gl_u64map named; /* tids given a name */
    gl_u64map_init(&named);
    int64_t prev = r->first_ns;
    for (size_t i = 0; i < an.n; i++) {
        const struct gl_annot *x = &an.v[i];
        int mark = x->op == GL_OP_MARK, tid = mark ? MARKS_TID : x->tid;
        uint64_t one;
        if (!gl_u64map_get(&named, (uint64_t)(uint32_t)tid, &one)) {
            gl_u64map_put(&named, (uint64_t)(uint32_t)tid, 1);
            snprintf(name, sizeof name, "thread %d ranges", tid);
            thread_name(j, r, tid, mark ? "marks" : name);
        }
        int64_t start = mark ? prev : x->ts_ns;
        int64_t end = mark ? x->ts_ns : x->end_seq ? x->end_ns : r->last_ns;
        gl_jw_obj(j, NULL);
        gl_jw_str(j, "name", x->label);
        gl_jw_str(j, "cat", mark ? "mark" : "range");
        gl_jw_str(j, "ph", "X");
        gl_jw_num(j, "ts", "%.3f", us(r, start));
        gl_jw_num(j, "dur", "%.3f", (double)(end - start) / 1e3);
        gl_jw_i64(j, "pid", r->pid);
        gl_jw_i64(j, "tid", tid);
        gl_jw_obj(j, "args");
        gl_jw_i64(j, "seq", x->seq);
        gl_jw_end(j);
        gl_jw_end(j);
        if (mark)
            prev = x->ts_ns;
    }
    gl_u64map_free(&named);
    gl_annots_free(&an);
    return 0;
}

static void instants(struct gl_json *j, struct gl_run *r, struct gl_stacks *s)
{
    char name[96], buf[1024];
    for (size_t i = 0; i < r->nfails; i++) {
        const struct gl_fail *fl = &r->fails[i];
        snprintf(name, sizeof name, "%s %s failed", fl->op == GL_OP_OOM ? "OOM:" : "error:", gl_api_name(fl->api));
        gl_jw_obj(j, NULL);
        gl_jw_str(j, "name", name);
        gl_jw_str(j, "ph", "i");
        gl_jw_str(j, "s", "p");
        gl_jw_num(j, "ts", "%.3f", us(r, fl->ts_ns));
        gl_jw_i64(j, "pid", r->pid);
        gl_jw_obj(j, "args");
        gl_jw_u64(j, "size", fl->size);
        gl_jw_i64(j, "error", fl->result);
        gl_jw_i64(j, "device", fl->device);
        gl_jw_arr(j, "stack");
        const struct gl_stack *st = gl_stack_get(s, fl->stack_id);
        for (int k = 0; k < st->n && k < 8; k++)
            gl_jw_str(j, NULL, gl_frame_name(&st->f[k], buf, sizeof buf));
        gl_jw_end(j);
        gl_jw_end(j);
        gl_jw_end(j);
    }
}

int gl_export_perfetto(FILE *f, struct gl_run *r, const struct gl_rules *rules)
{
    struct gl_stacks s;
    struct gl_json j;
    gl_stacks_init(&s, r);
    gl_jw_init(&j, f);
    gl_jw_obj(&j, NULL);
    gl_jw_str(&j, "displayTimeUnit", "ms");
    gl_jw_arr_lines(&j, "traceEvents");
    gl_jw_obj(&j, NULL);
    gl_jw_str(&j, "name", "process_name");
    gl_jw_str(&j, "ph", "M");
    gl_jw_i64(&j, "pid", r->pid);
    gl_jw_obj(&j, "args");
    gl_jw_str(&j, "name", r->cmdline);
    gl_jw_end(&j);
    gl_jw_end(&j);
    int rc = counters(&j, r, rules, &s) || slices(&j, r) ? -1 : 0;
    instants(&j, r, &s);
    gl_jw_end(&j);
    gl_jw_end(&j);
    fputc('\n', f);
    gl_stacks_free(&s);
    return rc;
}
