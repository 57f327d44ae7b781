/* store.h — the writing side of a gpuledger database: turns gl_events into
 * rows, deduplicates stacks and frames, pairs frees with their allocations,
 * keeps per-device live/peak bytes, and commits in batches.
 * Used only by the writer thread (one gl_store per process). */
#ifndef GL_STORE_H
#define GL_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gl_event.h"

struct gl_store;

struct gl_run_info {
    pid_t pid, ppid;
    const char *hostname;
    const char *rank;
    const char *cmdline;
    uint64_t start_ns, start_unix_ns;
    unsigned stack_depth;
    const char *version;
};

struct gl_run_counters {
    uint64_t dropped_events;
    uint64_t truncated_stacks;
};

/* Open (create) the database at path, which must be empty or absent.
 * symbolize: resolve function names in-process. On error returns NULL and
 * writes a message into err. */
struct gl_store *gl_store_open(const char *path, const struct gl_run_info *info, int symbolize, char *err,
                               size_t errsz);

/* A bounded recording (fold.h, docs/bounded-recording.md): keep the file
 * under `bytes` (0: no limit). Before the first event; 0 or -1. */
int gl_store_set_budget(struct gl_store *s, unsigned long long bytes);

/* A packed recording (schema 6; pack.h, docs/schema.md): the rows of
 * events go many to an SQLite row. Before the first event, never with a
 * budget; 0 or -1. */
int gl_store_set_packed(struct gl_store *s);

/* Stack entries with GL_PYFRAME_BIT set are Python frames
 * (interpose/pyframes.h): describe gives their file, function and line. */
typedef int (*gl_py_describe_fn)(uint64_t ip, const char **file, const char **func, int *line);
void gl_store_set_python(struct gl_store *s, gl_py_describe_fn describe);

/* Add one event (inside the current transaction). Returns 0 or -1 on a
 * database error (message via gl_store_error). */
int gl_store_add(struct gl_store *s, const struct gl_event *ev);
/* Commit the open transaction (if any) with updated run counters. */
int gl_store_commit(struct gl_store *s, const struct gl_run_counters *c);
/* Copy the WAL into the database file and empty it (before an exec: the
 * .db alone then holds everything committed). Outside a transaction only;
 * 0 or -1. */
int gl_store_checkpoint(struct gl_store *s);
/* Record a key/value in the meta table. */
int gl_store_meta(struct gl_store *s, const char *key, const char *value);
/* Final run row (end time, exit status) and commit; then the ref_seq index
 * (schema.h) for a run of at most GL_STORE_INDEX_MAX_ROWS rows ending
 * without a fatal signal (about 3 s of sorting at that size), given up
 * (rolled back: the run is whole without it) when it takes longer than
 * GL_STORE_INDEX_BUDGET_MS, since the program's exit waits for it.
 * exit_code/exit_signal < 0 mean unknown. Does not close. */
#define GL_STORE_INDEX_MAX_ROWS 16000000ULL
#define GL_STORE_INDEX_BUDGET_MS 1000
/* Another budget for that index (tests: 0 gives it up at once). */
void gl_store_set_index_budget(struct gl_store *s, unsigned ms);
int gl_store_finish(struct gl_store *s, const struct gl_run_counters *c, uint64_t end_ns, int exit_code,
                    int exit_signal);
void gl_store_close(struct gl_store *s);
/* Answer a question about what was recorded (answers.h). Everything added
 * must be committed first (gl_store_commit). */
struct gl_question;
void gl_store_answer(struct gl_store *s, struct gl_question *q);
const char *gl_store_error(struct gl_store *s);
uint64_t gl_store_event_count(struct gl_store *s);
/* Peak live device bytes over all devices (sum of the per-device peaks). */
uint64_t gl_store_peak_bytes(struct gl_store *s);
/* Peak live bytes of one device so far (0 .. GL_MAX_DEVICES - 1). */
uint64_t gl_store_device_peak(struct gl_store *s, int device);

#endif
