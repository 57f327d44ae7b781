/* answers.h — the questions a program asks about what it has recorded
 * (gpuledger.h: gpuledger_checkpoint, _usage, _live_stacks, _stack_text),
 * and the store's answers to them: on the writer thread, once everything
 * queued before the question is written and committed (interpose/ask.c
 * hands them over): figures from the windows (windows.h), what was live
 * when and its stacks from the database. */
#ifndef GL_ANSWERS_H
#define GL_ANSWERS_H

#include <stddef.h>
#include <stdint.h>

#include "wdb.h"
#include "windows.h"

enum gl_question_what {
    GL_QUESTION_CHECKPOINT = 1,
    GL_QUESTION_USAGE = 2,
    GL_QUESTION_STACKS = 3,
    GL_QUESTION_STACK_TEXT = 4,
};
/* The layer a question is about: GL_WIN_DEVICE, GL_WIN_BLOCKS, or this. */
#define GL_ASK_LAYER_AUTO (-1)
/* GL_QUESTION_STACK_TEXT flags: only the Python frames (all if it has none). */
#define GL_ASK_PYTHON_ONLY 1
/* GL_QUESTION_STACKS: what is live now, or what was live at the peak. */
enum { GL_ASK_NOW = 0, GL_ASK_AT_PEAK = 1 };

/* Measured from a checkpoint on (gpuledger.h, struct gpuledger_usage). */
struct gl_usage {
    uint64_t live, start, peak, new_live, new_count, allocated, allocs, frees;
    int layer;
};

struct gl_stack_bytes {
    uint64_t stack_id, bytes, count;
};

struct gl_question {
    int what;            /* enum gl_question_what */
    uint64_t checkpoint; /* its id */
    int layer;           /* GL_WIN_*, or GL_ASK_LAYER_AUTO */
    int flags, when;
    uint64_t stack_id;
    /* the answer, into the asker's memory (it waits meanwhile) */
    int rc;                       /* 0 or a count; -1 unknown checkpoint or no answer */
    struct gl_usage *usage;       /* GL_QUESTION_USAGE */
    struct gl_stack_bytes *stacks; /* GL_QUESTION_STACKS: up to max, biggest first */
    int max;
    char *text; /* GL_QUESTION_STACK_TEXT: one frame a line, NUL-terminated */
    size_t textsz;
};

/* What the answers read; the statements are prepared on first use. */
struct gl_answers {
    struct gl_wdb *w;
    struct gl_windows *windows;
    sqlite3_stmt *live[GL_WIN_LAYERS][2]; /* [layer][grouped by stack]: what was live at a row */
    sqlite3_stmt *frames;
};

/* Answer q (q->rc). next_seq: the number the next event_log row will get;
 * every row before it is in the database. */
void gl_answers_answer(struct gl_answers *a, struct gl_question *q, uint64_t next_seq);
void gl_answers_close(struct gl_answers *a);

#endif
