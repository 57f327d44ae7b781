/* model_vmm.c — see model_vmm.h. One ordered scan of creates and maps. */
#include "model_vmm.h"

int gl_map_devices(struct gl_run *r, struct gl_u64map *out)
{
    sqlite3_stmt *st;
    struct gl_u64map handle_dev; /* handle -> device + 1 of its latest create */
    gl_u64map_init(&handle_dev);
    if (sqlite3_prepare_v2(r->db,
                           "SELECT seq, op, addr, aux, device FROM event_log WHERE op IN (?1, ?2) AND result = 0"
                           " ORDER BY seq",
                           -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_int(st, 1, GL_OP_CREATE);
    sqlite3_bind_int(st, 2, GL_OP_MAP);
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        uint64_t seq = (uint64_t)sqlite3_column_int64(st, 0), dev;
        int op = sqlite3_column_int(st, 1), device = sqlite3_column_int(st, 4);
        if (op == GL_OP_CREATE && device >= 0)
            rc = gl_u64map_put(&handle_dev, (uint64_t)sqlite3_column_int64(st, 2), (uint64_t)device + 1);
        else if (op == GL_OP_MAP && gl_u64map_get(&handle_dev, (uint64_t)sqlite3_column_int64(st, 3), &dev))
            rc = gl_u64map_put(out, seq, dev);
    }
    sqlite3_finalize(st);
    gl_u64map_free(&handle_dev);
    return rc;
}
