/* model_annot.h — the program's marks and ranges (the annotations table:
 * gpuledger_mark, gpuledger_range_push/pop, NVTX), each range with the
 * event that closed it, and two look-ups by event number and time. */
#ifndef GL_MODEL_ANNOT_H
#define GL_MODEL_ANNOT_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct gl_annot {
    int64_t seq, ts_ns;     /* where it sits among the events */
    int64_t end_seq, end_ns; /* a range: its pop (0 if never closed) */
    int64_t parent_seq;     /* the range it is inside, 0 if none */
    int32_t tid;
    int depth;              /* ranges nested around it */
    uint8_t op;             /* GL_OP_MARK or GL_OP_RANGE_PUSH */
    char *label;
};

struct gl_annots {
    struct gl_annot *v;     /* marks and range pushes, in event order */
    size_t n;
};

/* Load them (a database without the table has none). 0, or -1 with
 * "FILE: problem" in err. */
int gl_annots_load(struct gl_run *r, struct gl_annots *a, char *err, size_t errsz);
void gl_annots_free(struct gl_annots *a);

/* Time of event `seq`: 0 and *ts set, or -1 when there is no such event. */
int gl_event_ts(struct gl_run *r, int64_t seq, int64_t *ts);
/* The last event stamped at or before ts (0 when none). */
int64_t gl_event_before(struct gl_run *r, int64_t ts);
/* The highest event number. */
int64_t gl_event_max(struct gl_run *r);

#endif
