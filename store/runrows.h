/* runrows.h — the rows that describe the run rather than its events: the
 * run row (written at the start, its counters at every commit, its end at
 * the finish), meta keys, device_stats, and the pool/device state samples. */
#ifndef GL_RUNROWS_H
#define GL_RUNROWS_H

#include <stdint.h>

#include "gl_event.h"
#include "ledger.h"
#include "store.h"
#include "wdb.h"

struct gl_runrows {
    struct gl_wdb *w;
    sqlite3_stmt *upd_run, *fin_run, *put_dev, *ins_pool_sample, *ins_dev_sample, *put_meta, *ins_graph_sample,
        *ins_usage;
    uint64_t usage_base[GL_MAX_DEVICES]; /* cudaMemGetInfo figures: used minus ledger at the first sample, + 1 */
};

/* Prepare, and write the run row from info. */
int gl_runrows_open(struct gl_runrows *rr, struct gl_wdb *w, const struct gl_run_info *info);
int gl_runrows_meta(struct gl_runrows *rr, const char *key, const char *value);
/* The run's counters, and device_stats for each device whose figures
 * changed since the last call. */
int gl_runrows_counters(struct gl_runrows *rr, uint64_t events, uint64_t unmatched_frees,
                        const struct gl_run_counters *c, struct gl_ledger *l);
/* end_ns, and exit_code / exit_signal (< 0: unknown, stored NULL). */
int gl_runrows_finish(struct gl_runrows *rr, uint64_t end_ns, int exit_code, int exit_signal);
/* A state sample: an async pool's (GL_API_pool_sample), the device's
 * (GL_API_device_sample), the graph pool's (GL_API_graph_pool_sample), or
 * the process's own figure (GL_API_usage_sample), stored with the ledger's
 * live bytes on that device (ledger) after row `seq`. */
int gl_runrows_sample(struct gl_runrows *rr, const struct gl_event *ev, uint64_t ledger, uint64_t seq);
void gl_runrows_close(struct gl_runrows *rr);

#endif
