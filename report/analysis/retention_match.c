/* retention_match.c — see retention_match.h. */
#include "retention_match.h"

#include <string.h>

#include "retention.h"

static int same_chain(struct gl_stacks *s, int64_t a, int64_t b)
{
    if (a == b)
        return 1;
    char sa[4096], sb[4096];
    gl_stack_signature(gl_stack_get(s, a), sa, sizeof sa);
    gl_stack_signature(gl_stack_get(s, b), sb, sizeof sb);
    return !strcmp(sa, sb);
}

void gl_kept_alive(const struct gl_run *r, struct gl_stacks *s, const struct gl_group *g, struct gl_kept *k)
{
    static const int order[] = {GL_RETENTION_OOM, GL_RETENTION_EXIT, GL_RETENTION_STEP};
    memset(k, 0, sizeof *k);
    if (!r->n_retention || g->what)
        return;
    for (size_t o = 0; o < sizeof order / sizeof order[0] && !k->total; o++) {
        for (size_t i = 0; i < r->n_retention; i++) {
            const struct gl_retention_path *p = &r->retention[i];
            if (p->moment != order[o] || !p->block || !same_chain(s, p->block->stack_id, g->stack_id))
                continue;
            /* keep the paths to the newest blocks (the last the chain made) */
            size_t cap = sizeof k->paths / sizeof k->paths[0], at = k->n;
            while (at > 0 && k->paths[at - 1]->block->seq < p->block->seq)
                at--;
            if (at < cap) {
                if (k->n < cap)
                    k->n++;
                for (size_t j = k->n - 1; j > at; j--)
                    k->paths[j] = k->paths[j - 1];
                k->paths[at] = p;
            }
            k->total++;
            k->moment = order[o];
        }
    }
}
