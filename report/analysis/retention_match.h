/* retention_match.h — which recorded retention paths (model_retention.h)
 * hold the memory of a ledger group (a leak chain, a growing stack): those
 * whose block was made by a stack of the group's chain. For `leaks`, its
 * JSON, and the diagnosis's "kept alive by:" line. */
#ifndef GL_RETENTION_MATCH_H
#define GL_RETENTION_MATCH_H

#include <stddef.h>

#include "analysis.h"
#include "model_retention.h"
#include "views.h" /* struct gl_kept */

/* What keeps group g's memory alive (k->total 0: nothing recorded). */
void gl_kept_alive(const struct gl_run *r, struct gl_stacks *s, const struct gl_group *g, struct gl_kept *k);

#endif
