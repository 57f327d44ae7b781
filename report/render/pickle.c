/* pickle.c — see pickle.h. Opcodes and their encodings as in Python's
 * Lib/pickle.py (protocol 4, little-endian integers). */
#include "pickle.h"

#include <string.h>

#include "escape.h"

enum {
    OP_MARK = '(', OP_STOP = '.', OP_BININT = 'J', OP_BININT1 = 'K', OP_BININT2 = 'M', OP_NONE = 'N',
    OP_BINUNICODE = 'X', OP_APPENDS = 'e', OP_BINGET = 'h', OP_LONG_BINGET = 'j', OP_EMPTY_LIST = ']',
    OP_SETITEMS = 'u', OP_EMPTY_DICT = '}', OP_PROTO = 0x80, OP_TUPLE2 = 0x86, OP_NEWTRUE = 0x88,
    OP_NEWFALSE = 0x89, OP_LONG1 = 0x8a, OP_SHORT_BINUNICODE = 0x8c, OP_MEMOIZE = 0x94,
};

#define BATCH 1000 /* items per APPENDS / SETITEMS, as Python writes them */

static void op(struct gl_pickle *p, int code)
{
    fputc(code, p->f);
}

static void le(struct gl_pickle *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        fputc((int)(v >> (8 * i)) & 0xff, p->f);
}

void gl_pk_begin(struct gl_pickle *p, FILE *f)
{
    memset(p, 0, sizeof *p);
    p->f = f;
    op(p, OP_PROTO);
    fputc(4, f);
}

void gl_pk_end(struct gl_pickle *p)
{
    op(p, OP_STOP);
}

/* LONG1: two's complement, little-endian, the fewest bytes that keep the sign */
static void long1(struct gl_pickle *p, uint64_t v, int negative, int extra_zero)
{
    int n = 8;
    while (n > 1 && ((v >> (8 * (n - 1))) & 0xff) == (negative ? 0xff : 0) &&
           (((v >> (8 * (n - 2))) & 0x80) != 0) == negative)
        n--;
    op(p, OP_LONG1);
    fputc(n + extra_zero, p->f);
    le(p, v, n);
    if (extra_zero)
        fputc(0, p->f);
}

void gl_pk_int(struct gl_pickle *p, int64_t v)
{
    if (v >= 0 && v < 256) {
        op(p, OP_BININT1);
        fputc((int)v, p->f);
    } else if (v >= 0 && v < 65536) {
        op(p, OP_BININT2);
        le(p, (uint64_t)v, 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        op(p, OP_BININT);
        le(p, (uint64_t)(uint32_t)(int32_t)v, 4);
    } else {
        long1(p, (uint64_t)v, v < 0, 0);
    }
}

void gl_pk_uint(struct gl_pickle *p, uint64_t v)
{
    if (v <= INT64_MAX)
        gl_pk_int(p, (int64_t)v);
    else
        long1(p, v, 0, 1); /* 8 bytes and a zero byte: positive */
}

static void str_n(struct gl_pickle *p, const char *s, size_t n)
{
    if (n < 256) {
        op(p, OP_SHORT_BINUNICODE);
        fputc((int)n, p->f);
    } else {
        op(p, OP_BINUNICODE);
        le(p, n, 4);
    }
    fwrite(s, 1, n, p->f);
}

void gl_pk_str(struct gl_pickle *p, const char *s)
{
    char buf[8192];
    size_t n = gl_utf8_buf(s ? s : "", buf, sizeof buf);
    str_n(p, buf, n);
}

void gl_pk_key(struct gl_pickle *p, const char *lit)
{
    for (int i = 0; i < p->nkeys; i++)
        if (p->keys[i] == lit || !strcmp(p->keys[i], lit)) {
            gl_pk_get(p, p->key_memo[i]);
            return;
        }
    str_n(p, lit, strlen(lit));
    uint32_t m = gl_pk_memoize(p);
    if (p->nkeys < GL_PK_KEYS) {
        p->keys[p->nkeys] = lit;
        p->key_memo[p->nkeys++] = m;
    }
}

void gl_pk_none(struct gl_pickle *p)
{
    op(p, OP_NONE);
}

void gl_pk_bool(struct gl_pickle *p, int v)
{
    op(p, v ? OP_NEWTRUE : OP_NEWFALSE);
}

void gl_pk_tuple2(struct gl_pickle *p)
{
    op(p, OP_TUPLE2);
}

uint32_t gl_pk_memoize(struct gl_pickle *p)
{
    op(p, OP_MEMOIZE);
    return p->memo++;
}

void gl_pk_get(struct gl_pickle *p, uint32_t memo)
{
    if (memo < 256) {
        op(p, OP_BINGET);
        fputc((int)memo, p->f);
    } else {
        op(p, OP_LONG_BINGET);
        le(p, memo, 4);
    }
}

void gl_pk_list_begin(struct gl_pickle *p, struct gl_pk_seq *s)
{
    op(p, OP_EMPTY_LIST);
    s->n = 0;
    s->dict = 0;
}

void gl_pk_dict_begin(struct gl_pickle *p, struct gl_pk_seq *s)
{
    op(p, OP_EMPTY_DICT);
    s->n = 0;
    s->dict = 1;
}

void gl_pk_next(struct gl_pickle *p, struct gl_pk_seq *s)
{
    if (s->n % BATCH == 0) {
        if (s->n)
            op(p, s->dict ? OP_SETITEMS : OP_APPENDS);
        op(p, OP_MARK);
    }
    s->n++;
}

void gl_pk_seq_end(struct gl_pickle *p, struct gl_pk_seq *s)
{
    if (s->n)
        op(p, s->dict ? OP_SETITEMS : OP_APPENDS);
}
