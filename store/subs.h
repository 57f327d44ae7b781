/* subs.h — heaps and regions of a program's own pools (NVTX memory API,
 * gpuledger_heap_* / gpuledger_region_*) on the writer side: each pairs in
 * the ledger's space of its kind; a region's row points at its heap's
 * (ref_seq) and carries its used bytes (aux); resizes, used bytes and page
 * sizes point at what they change; a heap reset or unregister ends, with a
 * row each, the regions still live in it; names go to the names table. */
#ifndef GL_SUBS_H
#define GL_SUBS_H

#include <stdint.h>

#include "gl_event.h"
#include "ledger.h"
#include "rows.h"
#include "wdb.h"

struct gl_subs {
    struct gl_wdb *w;
    sqlite3_stmt *ins_name;
};

/* Is ev a heap or region event (handled here, not by the generic pairing)? */
static inline int gl_subs_handles(const struct gl_event *ev)
{
    return ev->kind == GL_KIND_HEAP || ev->kind == GL_KIND_REGION;
}

int gl_subs_open(struct gl_subs *u, struct gl_wdb *w);
/* The rows of ev (stack sid, inside annotation range `range`); a free
 * that finds nothing live adds one to *unmatched. A resize or a set that
 * finds nothing gets a row without ref_seq. */
int gl_subs_add(struct gl_subs *u, struct gl_rows *rows, struct gl_ledger *l, const struct gl_event *ev,
                int64_t sid, uint64_t range, uint64_t *unmatched);
void gl_subs_close(struct gl_subs *u);

#endif
