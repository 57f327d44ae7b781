/* render_verdict.c — the one line that says why PyTorch's caching
 * allocator ran out of memory (struct gl_verdict, built by verdict.c),
 * for the text and JSON reports. */
#include <stdio.h>

#include "dossier.h"
#include "out.h"
#include "render.h"

void gl_verdict_text(const struct gl_verdict *v, const struct gl_groups *ledger, struct gl_stacks *s, char *buf,
                     size_t sz)
{
    char a[32], b[32], c[32], d[32];
    size_t n;
    buf[0] = 0;
    if (!v->known)
        return;
    if (v->fragmentation) {
        snprintf(buf, sz, "fragmentation: %s cached free in %llu hole%s, largest %s < the %s asked; %s",
                 gl_fmt_bytes(v->cached_free, a, sizeof a), (unsigned long long)v->holes, gl_s(v->holes),
                 gl_fmt_bytes(v->largest_hole, b, sizeof b), gl_fmt_bytes(v->asked, c, sizeof c),
                 v->expandable ? "expandable segments are on already: the holes lie between live tensors"
                               : "expandable segments would serve it (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)");
        return;
    }
    n = (size_t)snprintf(buf, sz, "demand: live tensors %s of the %s the allocator holds (%s cached free, %s asked)",
                         gl_fmt_bytes(v->tensors, a, sizeof a), gl_fmt_bytes(v->reserved, b, sizeof b),
                         gl_fmt_bytes(v->cached_free, c, sizeof c), gl_fmt_bytes(v->asked, d, sizeof d));
    /* the biggest tensors by where they were made */
    int shown = 0;
    for (size_t i = 0; i < ledger->n && shown < 3 && n < sz; i++) {
        const struct gl_group *g = &ledger->v[i];
        char where[600];
        if (!g->sample || g->sample->kind != GL_KIND_BLOCK)
            continue;
        gl_stack_where(gl_stack_get(s, g->stack_id), where, sizeof where);
        n += (size_t)snprintf(buf + n, sz - n, "%s %s %s (%s)", shown ? "," : ": the biggest are",
                              gl_fmt_bytes(g->bytes, a, sizeof a), where, g->category ? g->category : "other");
        shown++;
    }
}
