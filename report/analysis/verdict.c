/* verdict.c — why PyTorch's caching allocator ran out of memory: the holes
 * it had then (the recorder samples them at every out-of-memory) against
 * what was asked. Fragmentation: enough cached free bytes, but no hole as
 * big as the request (expandable segments map pages where a request needs
 * them instead of carving fixed segments); demand: live tensors fill what
 * the allocator could get. */
#include <stdio.h>
#include <string.h>

#include "dossier.h"
#include "model_blocks.h"

void gl_oom_verdict(struct gl_run *r, const struct gl_fail *f, const struct gl_groups *ledger, struct gl_verdict *v)
{
    struct gl_alloc_sample s;
    memset(v, 0, sizeof *v);
    if (f->api != GL_API_torch_allocator || !gl_run_allocator_sample_at(r, f->device, f->seq, &s))
        return;
    v->known = 1;
    v->asked = f->size;
    v->device_free = f->aux;
    v->cached_free = s.cached_free;
    v->holes = s.holes;
    v->largest_hole = s.largest_hole;
    v->reserved = s.reserved;
    v->tensors = ledger->layered ? ledger->tensors : s.allocated;
    v->fragmentation = s.cached_free >= f->size && s.largest_hole < f->size;
    v->expandable = gl_run_allocator_expandable(r);
}
