/* retention_match.h — which recorded retention paths (model_retention.h)
 * hold the memory of a ledger group (a leak chain, a growing stack): those
 * whose block was made by a stack of the group's chain. For `leaks`, its
 * JSON, and the diagnosis's "kept alive by:" line. */
#ifndef GL_RETENTION_MATCH_H
#define GL_RETENTION_MATCH_H

#include <stddef.h>

#include "analysis.h"
#include "model_retention.h"

struct gl_kept {
    const struct gl_retention_path *paths[3]; /* to the newest blocks first */
    size_t n;                                  /* of them in paths[] */
    size_t total;                              /* paths of that moment holding the group's blocks */
    int moment;                                /* the one shown: the out-of-memory, else exit, else steps */
};

/* What keeps group g's memory alive (k->total 0: nothing recorded). */
void gl_kept_alive(const struct gl_run *r, struct gl_stacks *s, const struct gl_group *g, struct gl_kept *k);

#endif
