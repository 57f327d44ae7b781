/* model_devmem.c — the device's own size, from device_samples (what
 * cudaMemGetInfo said at start-up): how much room growth has. */
#include "model_devmem.h"

uint64_t gl_run_device_total(struct gl_run *r, int device)
{
    sqlite3_stmt *q;
    uint64_t total = 0;
    if (sqlite3_prepare_v2(r->db, "SELECT max(total) FROM device_samples WHERE device = ?", -1, &q, NULL) != SQLITE_OK)
        return 0; /* a database without the table */
    sqlite3_bind_int(q, 1, device);
    if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int64(q, 0) > 0)
        total = (uint64_t)sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return total;
}
