/* diagnosis.c — see diagnosis.h. Each finding is built from figures the
 * dossier already holds; the sentences say what a person would do next. */
#include "diagnosis.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dossier.h"
#include "model_blocks.h"
#include "model_devmem.h"
#include "units.h"
#include "stack_text.h"
#include "u64map.h"

static struct gl_finding *add(struct gl_diagnosis *dg, const char *kind, int device, int64_t seq,
                              const struct gl_run *r)
{
    struct gl_finding *nv = realloc(dg->v, (dg->n + 1) * sizeof *nv);
    if (!nv)
        return NULL;
    dg->v = nv;
    struct gl_finding *f = &dg->v[dg->n++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->device = device;
    f->seq = seq;
    f->step = seq ? gl_step_at(r, seq) : -1;
    return f;
}

void gl_finding_evidence(struct gl_finding *f, const char *fmt, ...)
{
    if (f->nevidence == GL_DIAG_EVIDENCE)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->evidence[f->nevidence++], sizeof f->evidence[0], fmt, ap);
    va_end(ap);
}

/* " in step 14" / " at +0.373000s" */
static const char *when(const struct gl_run *r, const struct gl_finding *f, int64_t ns, char *buf, size_t sz)
{
    char t[32];
    if (f->step >= 0)
        snprintf(buf, sz, "in step %ld", f->step);
    else
        snprintf(buf, sz, "at %s", gl_fmt_rel(r, ns, t, sizeof t));
    return buf;
}

/* The blocks of the chain of `stack_id` (matched by its frames' names, as
 * gl_groups_merge_chains does) live on `device` right after seq. */
static void chain_blocks(struct gl_dossier *d, struct gl_finding *f, int device, int64_t stack_id, int64_t seq)
{
    struct gl_run *r = d->run;
    char want[4096], sig[4096];
    gl_stack_signature(gl_stack_get(&d->stacks, stack_id), want, sizeof want);
    struct gl_u64map same; /* stack id -> 1 same chain, 2 another */
    gl_u64map_init(&same);
    for (size_t i = 0; i < r->nallocs; i++) {
        const struct gl_alloc *a = &r->allocs[i];
        if (a->kind != GL_KIND_BLOCK || a->device != device || !gl_live_at(a, seq))
            continue;
        uint64_t v;
        if (!gl_u64map_get(&same, (uint64_t)a->stack_id, &v)) {
            gl_stack_signature(gl_stack_get(&d->stacks, a->stack_id), sig, sizeof sig);
            v = strcmp(sig, want) ? 2 : 1;
            gl_u64map_put(&same, (uint64_t)a->stack_id, v);
        }
        if (v != 1)
            continue;
        uint64_t *nb = realloc(f->blocks, (f->nblocks + 1) * sizeof *nb);
        if (!nb)
            break;
        f->blocks = nb;
        f->blocks[f->nblocks++] = a->addr;
    }
    gl_u64map_free(&same);
}

static const char *growth_remedy =
    "free what keeps these tensors from one step to the next (a list or dict of outputs or losses kept with their "
    "graph): keep loss.item() or t.detach().cpu() instead; 'gpuledger leaks --steps' lists every growing chain";

static void oom_finding(struct gl_diagnosis *dg, struct gl_dossier *d, struct gl_dev_view *v,
                        const struct gl_oom_view *o)
{
    struct gl_run *r = d->run;
    const struct gl_fail *fl = o->fail;
    const struct gl_verdict *vd = &o->verdict;
    struct gl_finding *f = add(dg, "oom", v->dev->device, fl->seq, r);
    if (!f)
        return;
    char w[64], a[32], b[32], c[32], e[32], t[32], where[300], chain[2048];
    f->bytes = fl->size;
    f->verdict = gl_verdict_name(vd);
    when(r, f, fl->ts_ns, w, sizeof w);
    gl_fmt_bytes(fl->size, a, sizeof a);
    const struct gl_stack *st = gl_stack_get(&d->stacks, fl->stack_id);
    gl_stack_place(st, where, sizeof where);
    if (vd->known && vd->growth) {
        const struct gl_trend *tr = vd->trend;
        snprintf(f->sentence, sizeof f->sentence,
                 "Out of memory %s: live tensors grow +%s per step since step %ld at %s, so the device is full "
                 "within %.1f step%s whatever the allocator does (the failing request: %s %s).",
                 w, gl_fmt_bytes(tr->per_step, b, sizeof b), tr->since_step, tr->where, vd->steps_left,
                 vd->steps_left == 1.0 ? "" : "s", a, where);
        snprintf(f->remedy, sizeof f->remedy, "%s", growth_remedy);
        chain_blocks(d, f, v->dev->device, tr->stack_id, fl->seq);
    } else if (vd->known && vd->fragmentation) {
        snprintf(f->sentence, sizeof f->sentence,
                 "Out of memory %s: fragmentation: %s was asked %s; the caching allocator held %s cached free, "
                 "but no hole of that size (the largest %s).",
                 w, a, where, gl_fmt_bytes(vd->cached_free, b, sizeof b), gl_fmt_bytes(vd->largest_hole, c, sizeof c));
        snprintf(f->remedy, sizeof f->remedy, "%s",
                 vd->expandable ? "expandable segments are on already: the holes lie between live tensors; allocate "
                                  "the long-lived tensors first, or free the short-lived ones in between sooner"
                                : "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (the allocator maps pages where "
                                  "a request needs them instead of carving fixed segments)");
    } else if (vd->known) {
        snprintf(f->sentence, sizeof f->sentence,
                 "Out of memory %s: demand: %s was asked %s while live tensors held %s of the %s the caching "
                 "allocator had (%s cached free).",
                 w, a, where, gl_fmt_bytes(vd->tensors, b, sizeof b), gl_fmt_bytes(vd->reserved, c, sizeof c),
                 gl_fmt_bytes(vd->cached_free, e, sizeof e));
        snprintf(f->remedy, sizeof f->remedy,
                 "need less at once: a smaller batch or sequence, gradient checkpointing, a smaller or sharded "
                 "model or optimizer state: see the OOM ledger below");
    } else {
        snprintf(f->sentence, sizeof f->sentence, "Out of memory %s: %s of %s failed %s with %s live on the device.",
                 w, gl_api_name(fl->api), a, where, gl_fmt_bytes(o->live_bytes, b, sizeof b));
        snprintf(f->remedy, sizeof f->remedy, "need less at once: see the OOM ledger below");
    }
    gl_stack_chain(st, -1, chain, sizeof chain);
    gl_finding_evidence(f, "%s asked %s at %s (event %lld) with %s live: %s", gl_api_name(fl->api), a,
             gl_fmt_rel(r, fl->ts_ns, t, sizeof t), (long long)fl->seq, gl_fmt_bytes(o->live_bytes, b, sizeof b),
             chain);
    if (o->absorbed)
        gl_finding_evidence(f, "one failure: its cudaMalloc of a %s segment failed %d time%s first",
                 gl_fmt_bytes(o->absorbed_size, b, sizeof b), o->absorbed, gl_s((uint64_t)o->absorbed));
    if (vd->known) {
        char text[2400];
        gl_verdict_text(vd, &o->ledger, &d->stacks, text, sizeof text);
        gl_finding_evidence(f, "verdict: %s", text);
    }
    gl_finding_kept_alive(d, f);
}

static void growth_finding(struct gl_diagnosis *dg, struct gl_dossier *d, struct gl_dev_view *v)
{
    struct gl_run *r = d->run;
    const struct gl_trend *tr = &v->trend;
    int64_t end = r->nsteps ? r->steps[r->nsteps - 1] : 0;
    struct gl_finding *f = add(dg, "growth", v->dev->device, end, r);
    if (!f)
        return;
    char a[32], b[32], c[32];
    f->bytes = tr->per_step;
    f->step = tr->since_step;
    uint64_t total = gl_run_device_total(r, v->dev->device);
    size_t n = (size_t)snprintf(f->sentence, sizeof f->sentence, "Live tensors grow +%s per step since step %ld at %s",
                                gl_fmt_bytes(tr->per_step, a, sizeof a), tr->since_step, tr->where);
    if (total > v->dev->live_end && n < sizeof f->sentence) {
        long last = (long)r->nsteps - 1;
        long left = (long)((total - v->dev->live_end) / tr->per_step);
        snprintf(f->sentence + n, sizeof f->sentence - n,
                 ": at that rate the device (%s, %s free at the end) is full at step %ld.",
                 gl_fmt_bytes(total, b, sizeof b), gl_fmt_bytes(total - v->dev->live_end, c, sizeof c),
                 last + left + 1);
    } else if (n < sizeof f->sentence) {
        snprintf(f->sentence + n, sizeof f->sentence - n, ".");
    }
    gl_finding_evidence(f, "%d growing chain%s, +%s over the %zu steps recorded ('gpuledger leaks --steps')", tr->nchains,
             gl_s((uint64_t)tr->nchains), gl_fmt_bytes(tr->grown, a, sizeof a), tr->nsteps);
    snprintf(f->remedy, sizeof f->remedy, "%s", growth_remedy);
    chain_blocks(d, f, v->dev->device, tr->stack_id, end ? end : r->last_seq);
    gl_finding_kept_alive(d, f);
}

/* What a category's remedy is, in a few words. */
static const char *peak_remedy(const char *cat)
{
    static const struct {
        const char *cat, *remedy;
    } t[] = {
        {"activations", "gradient checkpointing, a smaller batch or sequence, or mixed precision"},
        {"parameters", "a smaller, quantized or sharded model (FSDP), or LoRA instead of a full fine-tune"},
        {"optimizer_state", "an 8-bit or fused optimizer, or sharding the state (ZeRO, FSDP)"},
        {"gradients", "gradient accumulation does not help here: shard them (FSDP) or train fewer parameters"},
        {"kv_cache", "a shorter context, fewer concurrent sequences, or a quantized KV cache"},
        {"temporaries", "smaller chunks of work at a time (chunked loss, fused kernels)"},
        {"allocator_cache", "expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) keep less cached"},
    };
    for (size_t i = 0; cat && i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(cat, t[i].cat))
            return t[i].remedy;
    return "see the peak ledger below";
}

static void peak_finding(struct gl_diagnosis *dg, struct gl_dossier *d, struct gl_dev_view *v)
{
    struct gl_run *r = d->run;
    int tensors = v->dev->blocks && v->dev->tensor_peak_seq && v->ntensor_cats;
    const struct gl_groups *g = tensors ? &v->tensor_peak : &v->peak;
    const struct gl_cat_total *cats = tensors ? v->tensor_cats : v->cats;
    size_t ncats = tensors ? v->ntensor_cats : v->ncats;
    uint64_t peak = tensors ? v->dev->tensor_peak : v->dev->peak;
    int64_t seq = tensors ? v->dev->tensor_peak_seq : v->dev->peak_seq;
    if (!ncats || !peak)
        return;
    const struct gl_group *top = NULL;
    for (size_t i = 0; i < g->n && !top; i++)
        if (!g->v[i].what && g->v[i].category && !strcmp(g->v[i].category, cats[0].category))
            top = &g->v[i];
    struct gl_finding *f = add(dg, "peak", v->dev->device, seq, r);
    if (!f)
        return;
    char a[32], b[32], c[32], w[64], where[600];
    f->bytes = peak;
    if (f->step >= 0)
        snprintf(w, sizeof w, " in step %ld", f->step);
    else
        w[0] = 0;
    size_t n = (size_t)snprintf(f->sentence, sizeof f->sentence, "The %s, %s at event %lld%s, is mostly %s: %s (%.0f%%)",
                                tensors ? "tensor peak" : "peak", gl_fmt_bytes(peak, a, sizeof a), (long long)seq, w,
                                cats[0].category, gl_fmt_bytes(cats[0].bytes, b, sizeof b),
                                100.0 * (double)cats[0].bytes / (double)peak);
    if (top && n < sizeof f->sentence)
        snprintf(f->sentence + n, sizeof f->sentence - n, ", the most from %s (%s, %.0f%%).",
                 gl_stack_user_frame(gl_stack_get(&d->stacks, top->stack_id), where, sizeof where),
                 gl_fmt_bytes(top->bytes, c, sizeof c), 100.0 * (double)top->bytes / (double)peak);
    else if (n < sizeof f->sentence)
        snprintf(f->sentence + n, sizeof f->sentence - n, ".");
    n = 0;
    char line[1100] = "";
    for (size_t k = 0; k < ncats && k < 4 && n < sizeof line; k++)
        n += (size_t)snprintf(line + n, sizeof line - n, "%s%s %s", k ? ", " : "", cats[k].category,
                              gl_fmt_bytes(cats[k].bytes, a, sizeof a));
    gl_finding_evidence(f, "by category: %s", line);
    snprintf(f->remedy, sizeof f->remedy, "%s", peak_remedy(cats[0].category));
}

static void leaks_finding(struct gl_diagnosis *dg, struct gl_dossier *d, struct gl_dev_view *v)
{
    const struct gl_group *top = NULL;
    size_t chains = 0;
    for (size_t k = 0; k < v->leaks.n; k++) {
        const struct gl_group *g = &v->leaks.v[k];
        if (gl_is_cached_category(g->category) || gl_group_is_tagged(g))
            continue;
        chains++;
        if (!top)
            top = g;
    }
    if (!v->leak_bytes || !top)
        return;
    struct gl_finding *f = add(dg, "leaks", v->dev->device, 0, d->run);
    if (!f)
        return;
    char a[32], b[32], where[600];
    f->bytes = v->leak_bytes;
    snprintf(f->sentence, sizeof f->sentence, "%s %s in %zu %s%s, the most from %s (%s).",
             gl_fmt_bytes(v->leak_bytes, a, sizeof a),
             d->run->unfinished ? "was live when the recording stopped" : "was never freed at exit", chains,
             d->run->unfinished ? "chain" : "leak chain", gl_s(chains),
             gl_stack_user_frame(gl_stack_get(&d->stacks, top->stack_id), where, sizeof where),
             gl_fmt_bytes(top->bytes, b, sizeof b));
    if (v->cached_bytes)
        gl_finding_evidence(f, "not counted: %s held by a caching allocator", gl_fmt_bytes(v->cached_bytes, a, sizeof a));
    if (v->held_bytes)
        gl_finding_evidence(f, "not counted: %s of tensors tagged as parameters, gradients, optimizer state, KV cache or buffers",
                 gl_fmt_bytes(v->held_bytes, b, sizeof b));
    snprintf(f->remedy, sizeof f->remedy, "%s",
             d->run->unfinished ? "the recording did not finish, so these are not known to be leaks: record the "
                                  "job to its end ('gpuledger leaks' lists them)"
                                : "free them before exit ('gpuledger leaks' lists them)");
}

static void fragmentation_finding(struct gl_diagnosis *dg, struct gl_dossier *d, struct gl_dev_view *v)
{
    for (size_t h = 0; h < d->nholes; h++) {
        const struct gl_pool_holes *p = &d->holes[h];
        const struct gl_hole_stat *s = &p->worst;
        if (p->device != v->dev->device || strcmp(p->what, GL_HOLES_ALLOCATOR))
            continue;
        /* worth saying: tensors live, a quarter of its segments free, most of it outside the largest hole */
        if (!s->reserved || !s->live || s->free * 4 < s->reserved || s->external_fragmentation < 0.5)
            continue;
        struct gl_finding *f = add(dg, "fragmentation", v->dev->device, s->seq, d->run);
        if (!f)
            return;
        char a[32], b[32], c[32], t[32];
        f->bytes = s->free;
        snprintf(f->sentence, sizeof f->sentence,
                 "The caching allocator's segments held %s cached free of %s in %llu holes (the largest %s) at %s.",
                 gl_fmt_bytes(s->free, a, sizeof a), gl_fmt_bytes(s->reserved, b, sizeof b),
                 (unsigned long long)s->holes, gl_fmt_bytes(s->largest_free, c, sizeof c),
                 gl_fmt_rel(d->run, s->ts_ns, t, sizeof t));
        gl_finding_evidence(f, "external fragmentation %.2f (1 - largest hole / cached free)", s->external_fragmentation);
        snprintf(f->remedy, sizeof f->remedy, "%s",
                 gl_run_allocator_expandable(d->run)
                     ? "expandable segments are on already: the holes lie between live tensors"
                     : "expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) would map only the "
                       "pages in use: the cached free bytes become free device memory or one contiguous range");
        return;
    }
}

static void outside_finding(struct gl_diagnosis *dg, struct gl_dossier *d, struct gl_dev_view *v)
{
    const struct gl_usage *u = &v->usage;
    uint64_t out = gl_usage_outside(&u->peak);
    if (u->unknown || !u->source[0] || !out || out * 20 < u->peak.process)
        return;
    struct gl_finding *f = add(dg, "outside", v->dev->device, u->peak.seq, d->run);
    if (!f)
        return;
    char a[32], b[32], c[32], near[64];
    f->bytes = out;
    snprintf(f->sentence, sizeof f->sentence,
             "%s of the process's %s %s the peak is outside any allocation API (the CUDA context, modules, "
             "libraries' own).",
             gl_fmt_bytes(out, a, sizeof a), gl_fmt_bytes(u->peak.process, b, sizeof b),
             u->peak.from_peak_ns ? "near" : "at");
    gl_finding_evidence(f, "process %s = ledger %s + %s outside, %s (%s)", b, gl_fmt_bytes(u->peak.ledger, c, sizeof c),
                        a, gl_usage_from_peak_text(u->peak.from_peak_ns, "the peak", near, sizeof near),
                        gl_usage_source_text(u->source));
    snprintf(f->remedy, sizeof f->remedy, "CUDA_MODULE_LOADING=LAZY loads only the kernels used");
}

int gl_diagnose(struct gl_diagnosis *dg, struct gl_dossier *d)
{
    memset(dg, 0, sizeof *dg);
    for (int i = 0; i < d->ndevs; i++) { /* out-of-memory failures first */
        struct gl_dev_view *v = &d->devs[i];
        for (size_t k = 0; k < v->nooms; k++)
            oom_finding(dg, d, v, &v->ooms[k]);
    }
    for (int i = 0; i < d->ndevs; i++) {
        struct gl_dev_view *v = &d->devs[i];
        int said = 0; /* growth named by an OOM's verdict already */
        for (size_t k = 0; k < v->nooms; k++)
            said |= v->ooms[k].verdict.known && v->ooms[k].verdict.growth;
        if (v->trend.known && !said)
            growth_finding(dg, d, v);
    }
    for (int i = 0; i < d->ndevs; i++)
        peak_finding(dg, d, &d->devs[i]);
    for (int i = 0; i < d->ndevs; i++)
        leaks_finding(dg, d, &d->devs[i]);
    for (int i = 0; i < d->ndevs; i++) {
        int frag_oom = 0; /* an OOM's verdict said how the holes stood */
        for (size_t k = 0; k < d->devs[i].nooms; k++)
            frag_oom |= d->devs[i].ooms[k].verdict.known;
        if (!frag_oom)
            fragmentation_finding(dg, d, &d->devs[i]);
    }
    for (int i = 0; i < d->ndevs; i++)
        outside_finding(dg, d, &d->devs[i]);
    return 0;
}

void gl_diagnosis_free(struct gl_diagnosis *dg)
{
    for (size_t i = 0; i < dg->n; i++)
        free(dg->v[i].blocks);
    free(dg->v);
    memset(dg, 0, sizeof *dg);
}
