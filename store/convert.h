/* convert.h — a copy of a finished or running recording in the other
 * layout (`gpuledger export --format sqlite`): a row per event (schema 5,
 * which every SQLite tool reads as it is) or packed (schema 6, a fifth of
 * the writer's work and a third of the bytes, read through the SQL module
 * gl_packed_events). Every other table is copied as it is, so every view
 * and every verb gives the same answers from the copy. */
#ifndef GL_CONVERT_H
#define GL_CONVERT_H

#include <stdint.h>
#include <stdio.h>

struct gl_convert_stats {
    int from_version, to_version;  /* the schemas: 5 (rows) or 6 (packed) */
    int64_t events;                /* event rows copied */
    int64_t tables;                /* other tables copied */
    int64_t in_bytes, out_bytes;   /* the two files' sizes */
};

/* Copy the recording at in into a new file at out (which must not exist),
 * packed or as a row per event. The copy is written beside out and renamed
 * to it when complete: no partial file is left on failure. A recording
 * still being written is copied as of one moment (one read transaction).
 * progress (may be NULL) gets events copied so far and the total, now and
 * then. 0, or -1 with the reason in err. */
int gl_db_convert(const char *in, const char *out, int packed, struct gl_convert_stats *st,
                  void (*progress)(int64_t done, int64_t total, void *arg), void *arg, char *err, size_t errsz);

#endif
