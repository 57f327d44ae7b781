/* pickle.h — writing Python pickles (protocol 4) with the few opcodes that
 * both Python's unpickler and PyTorch's memory_viz page (its own small
 * JavaScript unpickler, which refuses protocol 5 and anything exotic) read:
 * PROTO 4, EMPTY_DICT / EMPTY_LIST with MARK … SETITEMS / APPENDS (in batches
 * of 1,000), SHORT_BINUNICODE / BINUNICODE, BININT1 / BININT2 / BININT /
 * LONG1, NONE, NEWTRUE / NEWFALSE, TUPLE2, MEMOIZE with BINGET /
 * LONG_BINGET, STOP. Repeated values (dict keys, frames, stacks) are
 * written once and referred to by their memo number. */
#ifndef GL_PICKLE_H
#define GL_PICKLE_H

#include <stdint.h>
#include <stdio.h>

#define GL_PK_KEYS 64

struct gl_pickle {
    FILE *f;
    uint32_t memo;                  /* the next memo number */
    const char *keys[GL_PK_KEYS];   /* memoized key strings (pointers) */
    uint32_t key_memo[GL_PK_KEYS];
    int nkeys;
};

/* A list or dict being filled: items go in MARK … APPENDS/SETITEMS batches. */
struct gl_pk_seq {
    uint32_t n;
    int dict;
};

void gl_pk_begin(struct gl_pickle *p, FILE *f); /* PROTO 4 */
void gl_pk_end(struct gl_pickle *p);            /* STOP */

void gl_pk_int(struct gl_pickle *p, int64_t v);
void gl_pk_uint(struct gl_pickle *p, uint64_t v);
void gl_pk_str(struct gl_pickle *p, const char *s); /* made valid UTF-8 */
/* A string literal used as a key many times: written once, then by memo. */
void gl_pk_key(struct gl_pickle *p, const char *lit);
void gl_pk_none(struct gl_pickle *p);
void gl_pk_bool(struct gl_pickle *p, int v);
void gl_pk_tuple2(struct gl_pickle *p); /* the last two values as a tuple */

/* Memoize the value just written; returns its number for gl_pk_get. */
uint32_t gl_pk_memoize(struct gl_pickle *p);
void gl_pk_get(struct gl_pickle *p, uint32_t memo);

void gl_pk_list_begin(struct gl_pickle *p, struct gl_pk_seq *s);
void gl_pk_dict_begin(struct gl_pickle *p, struct gl_pk_seq *s);
/* Before each item of a list, or each key of a dict. */
void gl_pk_next(struct gl_pickle *p, struct gl_pk_seq *s);
void gl_pk_seq_end(struct gl_pickle *p, struct gl_pk_seq *s);

#endif
