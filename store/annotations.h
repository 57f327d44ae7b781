/* annotations.h — marks and ranges (gpuledger_mark, gpuledger_range_push /
 * _pop, NVTX): an event_log row for each one's place in the order, an
 * annotations row for its label, and which range each thread is inside, so
 * that every other row carries its range (range_seq). */
#ifndef GL_ANNOTATIONS_H
#define GL_ANNOTATIONS_H

#include <stdint.h>

#include "gl_event.h"
#include "rows.h"
#include "u64map.h"
#include "wdb.h"

struct gl_annotations {
    struct gl_wdb *w;
    sqlite3_stmt *ins;
    struct gl_u64map range_of_tid; /* tid -> seq of its innermost open range */
    struct gl_u64map range_parent; /* open range seq -> the range it is inside (0: none) */
    uint64_t process_range;        /* latest open range of any thread */
    int any_range;                 /* a range was ever opened */
};

int gl_annotations_open(struct gl_annotations *a, struct gl_wdb *w);
/* ev (flag GL_EVF_LABEL: a mark or a range push/pop): its rows. */
int gl_annotations_add(struct gl_annotations *a, struct gl_rows *rows, const struct gl_event *ev);
void gl_annotations_close(struct gl_annotations *a);

/* The range a row of thread tid is inside: the thread's innermost open
 * range, else the latest open range of the process; 0 for none. */
static inline uint64_t gl_annotations_range(const struct gl_annotations *a, int32_t tid)
{
    uint64_t range = 0;
    if (!a->any_range)
        return 0;
    if (!gl_u64map_get(&a->range_of_tid, (uint64_t)(uint32_t)tid, &range) || !range)
        range = a->process_range;
    return range;
}

#endif
