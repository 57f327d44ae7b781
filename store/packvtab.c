/* packvtab.c — see packvtab.h. Built twice: into the store (linked with
 * SQLite) and, with GL_PACKVTAB_EXTENSION, as the loadable extension. The
 * constraints it is given narrow the packs it reads and are checked again
 * by SQLite (none is omitted), so narrowing only has to be safe. */
#ifdef GL_PACKVTAB_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#else
#include "packvtab.h"
#endif

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pack.h"

static const char *const columns =
    "CREATE TABLE x(seq INTEGER, ts_ns INTEGER, context INTEGER, op INTEGER, kind INTEGER, device INTEGER,"
    " addr INTEGER, size INTEGER, stack_id INTEGER, ref_seq INTEGER, aux INTEGER, range_seq INTEGER)";

enum { COL_SEQ = 0, COL_TS = 1, COL_OP = 3, COL_KIND = 4, COL_REF = 9 };

/* the constraints xBestIndex hands on, in this order, each at most once:
 * bit k of idxNum says argument k+1.. is there */
enum { ARG_SEQ_LO, ARG_SEQ_HI, ARG_REF, ARG_TS_LO, ARG_TS_HI, ARG_OP, ARG_KIND, NARGS };

struct ref_entry {
    int64_t ref, seq;
};

struct pvtab {
    sqlite3_vtab base;
    sqlite3 *db;
    /* ref_seq -> seq, sorted; valid while the last pack is stamp_lo, stamp_n */
    struct ref_entry *refs;
    size_t nrefs;
    int64_t stamp_lo, stamp_n;
    int have_refs;
};

struct pcur {
    sqlite3_vtab_cursor base;
    struct pvtab *t;
    sqlite3_stmt *packs; /* the packs to read, in order (scan) */
    sqlite3_stmt *one;   /* the pack holding a seq (ref look-ups) */
    struct gl_row rows[GL_PACK_ROWS];
    int nrows, at;
    int64_t rows_lo, rows_hi; /* seq of the decoded pack's first and last row */
    int64_t lo, hi;           /* seq bounds */
    size_t ref_at, ref_end;   /* ref look-ups: entries still to give */
    int by_ref, eof;
};

static int vt_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err)
{
    (void)aux;
    (void)argc;
    (void)argv;
    (void)err;
    int rc = sqlite3_declare_vtab(db, columns);
    if (rc != SQLITE_OK)
        return rc;
    struct pvtab *t = sqlite3_malloc(sizeof *t);
    if (!t)
        return SQLITE_NOMEM;
    memset(t, 0, sizeof *t);
    t->db = db;
    *out = &t->base;
    return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *v)
{
    struct pvtab *t = (struct pvtab *)v;
    free(t->refs);
    sqlite3_free(t);
    return SQLITE_OK;
}

static int vt_best_index(sqlite3_vtab *v, sqlite3_index_info *info)
{
    (void)v;
    int slot[NARGS];
    for (int k = 0; k < NARGS; k++)
        slot[k] = -1;
    for (int i = 0; i < info->nConstraint; i++) {
        const struct sqlite3_index_constraint *c = &info->aConstraint[i];
        if (!c->usable)
            continue;
        int eq = c->op == SQLITE_INDEX_CONSTRAINT_EQ;
        int lo = eq || c->op == SQLITE_INDEX_CONSTRAINT_GT || c->op == SQLITE_INDEX_CONSTRAINT_GE;
        int hi = eq || c->op == SQLITE_INDEX_CONSTRAINT_LT || c->op == SQLITE_INDEX_CONSTRAINT_LE;
        int k = -1;
        if (c->iColumn == COL_SEQ && lo && slot[ARG_SEQ_LO] < 0)
            k = ARG_SEQ_LO;
        else if (c->iColumn == COL_SEQ && hi && slot[ARG_SEQ_HI] < 0)
            k = ARG_SEQ_HI;
        else if (c->iColumn == COL_REF && eq)
            k = ARG_REF;
        else if (c->iColumn == COL_TS && lo)
            k = ARG_TS_LO;
        else if (c->iColumn == COL_TS && hi)
            k = ARG_TS_HI;
        else if (c->iColumn == COL_OP && eq)
            k = ARG_OP;
        else if (c->iColumn == COL_KIND && eq)
            k = ARG_KIND;
        if (k >= 0 && slot[k] < 0)
            slot[k] = i;
        /* an equality on seq bounds both ends: the same value twice */
        if (k == ARG_SEQ_LO && eq && slot[ARG_SEQ_HI] < 0)
            slot[ARG_SEQ_HI] = i;
    }
    int idx = 0, argn = 0;
    for (int k = 0; k < NARGS; k++) {
        if (slot[k] < 0)
            continue;
        idx |= 1 << k;
        if (info->aConstraintUsage[slot[k]].argvIndex == 0)
            info->aConstraintUsage[slot[k]].argvIndex = ++argn;
    }
    info->idxNum = idx;
    /* the argument of each slot, as xFilter will see them */
    char *map = sqlite3_malloc(NARGS + 1);
    if (!map)
        return SQLITE_NOMEM;
    for (int k = 0; k < NARGS; k++)
        map[k] = (char)('0' + (slot[k] < 0 ? 0 : info->aConstraintUsage[slot[k]].argvIndex));
    map[NARGS] = 0;
    info->idxStr = map;
    info->needToFreeIdxStr = 1;
    int seq_eq = slot[ARG_SEQ_LO] >= 0 && slot[ARG_SEQ_LO] == slot[ARG_SEQ_HI];
    if (seq_eq || slot[ARG_REF] >= 0) {
        info->estimatedCost = 20;
        info->estimatedRows = 2;
    } else if (slot[ARG_SEQ_LO] >= 0 && slot[ARG_SEQ_HI] >= 0) {
        info->estimatedCost = 1e4;
        info->estimatedRows = 5000;
    } else if (slot[ARG_SEQ_LO] >= 0 || slot[ARG_SEQ_HI] >= 0 || slot[ARG_OP] >= 0 || slot[ARG_KIND] >= 0) {
        info->estimatedCost = 5e6;
        info->estimatedRows = 500000;
    } else {
        info->estimatedCost = 1e7;
        info->estimatedRows = 1000000;
    }
    if (info->nOrderBy == 1 && info->aOrderBy[0].iColumn == COL_SEQ && !info->aOrderBy[0].desc)
        info->orderByConsumed = 1;
    return SQLITE_OK;
}

static int vt_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
    struct pcur *c = sqlite3_malloc(sizeof *c);
    if (!c)
        return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    c->t = (struct pvtab *)v;
    c->eof = 1;
    *out = &c->base;
    return SQLITE_OK;
}

static int vt_close(sqlite3_vtab_cursor *cur)
{
    struct pcur *c = (struct pcur *)cur;
    sqlite3_finalize(c->packs);
    sqlite3_finalize(c->one);
    sqlite3_free(c);
    return SQLITE_OK;
}

static int fail(struct pcur *c, const char *msg)
{
    sqlite3_free(c->t->base.zErrMsg);
    c->t->base.zErrMsg = sqlite3_mprintf("gl_packed_events: %s", msg);
    return SQLITE_ERROR;
}

/* Decode the pack of statement st (columns n, data) into c->rows. */
static int decode(struct pcur *c, sqlite3_stmt *st, int ncol, int dcol)
{
    int n = gl_pack_decode(sqlite3_column_blob(st, dcol), (size_t)sqlite3_column_bytes(st, dcol),
                           sqlite3_column_int(st, ncol), c->rows);
    c->nrows = 0;
    if (n < 0)
        return fail(c, "a pack that does not decode: the database is damaged");
    c->nrows = n;
    c->rows_lo = n ? c->rows[0].v[0] : 0;
    c->rows_hi = n ? c->rows[n - 1].v[0] : -1;
    c->at = 0;
    return SQLITE_OK;
}

/* The next pack of the scan into rows, its rows before lo skipped. */
static int next_pack(struct pcur *c)
{
    for (;;) {
        int rc = sqlite3_step(c->packs);
        if (rc == SQLITE_DONE) {
            c->eof = 1;
            return SQLITE_OK;
        }
        if (rc != SQLITE_ROW)
            return fail(c, sqlite3_errmsg(c->t->db));
        if ((rc = decode(c, c->packs, 0, 1)) != SQLITE_OK)
            return rc;
        while (c->at < c->nrows && c->rows[c->at].v[0] < c->lo)
            c->at++;
        if (c->at < c->nrows)
            return c->rows[c->at].v[0] > c->hi ? (c->eof = 1, SQLITE_OK) : SQLITE_OK;
    }
}

static int cmp_ref(const void *a, const void *b)
{
    const struct ref_entry *x = a, *y = b;
    return x->ref != y->ref ? (x->ref < y->ref ? -1 : 1) : (x->seq > y->seq) - (x->seq < y->seq);
}

/* The ref_seq index, built if a pack was added since (or never built). */
static int refs_ready(struct pcur *c)
{
    struct pvtab *t = c->t;
    sqlite3_stmt *st;
    int64_t lo = 0, n = 0;
    if (sqlite3_prepare_v2(t->db, "SELECT seq_lo, n FROM event_packs ORDER BY seq_lo DESC LIMIT 1", -1, &st,
                           NULL) != SQLITE_OK)
        return fail(c, sqlite3_errmsg(t->db));
    if (sqlite3_step(st) == SQLITE_ROW) {
        lo = sqlite3_column_int64(st, 0);
        n = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    if (t->have_refs && t->stamp_lo == lo && t->stamp_n == n)
        return SQLITE_OK;
    free(t->refs);
    t->refs = NULL;
    t->nrefs = 0;
    t->have_refs = 0;
    size_t cap = 0;
    if (sqlite3_prepare_v2(t->db, "SELECT n, data FROM event_packs ORDER BY seq_lo", -1, &st, NULL) != SQLITE_OK)
        return fail(c, sqlite3_errmsg(t->db));
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if ((rc = decode(c, st, 0, 1)) != SQLITE_OK)
            break;
        for (int i = 0; i < c->nrows; i++) {
            if (c->rows[i].null & (1u << COL_REF))
                continue;
            if (t->nrefs == cap) {
                size_t nc = cap ? cap * 2 : 4096;
                struct ref_entry *ne = realloc(t->refs, nc * sizeof *ne);
                if (!ne) {
                    rc = SQLITE_NOMEM;
                    break;
                }
                t->refs = ne;
                cap = nc;
            }
            t->refs[t->nrefs++] = (struct ref_entry){c->rows[i].v[COL_REF], c->rows[i].v[0]};
        }
        if (rc == SQLITE_NOMEM)
            break;
    }
    sqlite3_finalize(st);
    c->nrows = 0; /* the rows decoded here are not the cursor's */
    if (rc != SQLITE_DONE)
        return rc == SQLITE_NOMEM ? SQLITE_NOMEM : rc == SQLITE_ERROR ? rc : fail(c, sqlite3_errmsg(t->db));
    qsort(t->refs, t->nrefs, sizeof *t->refs, cmp_ref);
    t->have_refs = 1;
    t->stamp_lo = lo;
    t->stamp_n = n;
    return SQLITE_OK;
}

/* Point the cursor at the row seq of the current ref entry (its pack
 * decoded unless it is the one decoded already). */
static int seek_ref(struct pcur *c)
{
    for (; c->ref_at < c->ref_end; c->ref_at++) {
        int64_t seq = c->t->refs[c->ref_at].seq;
        if (seq < c->lo || seq > c->hi)
            continue;
        if (!c->nrows || seq < c->rows_lo || seq > c->rows_hi) {
            if (!c->one && sqlite3_prepare_v2(c->t->db,
                                              "SELECT n, data FROM event_packs WHERE seq_lo <= ?1"
                                              " ORDER BY seq_lo DESC LIMIT 1",
                                              -1, &c->one, NULL) != SQLITE_OK)
                return fail(c, sqlite3_errmsg(c->t->db));
            sqlite3_bind_int64(c->one, 1, seq);
            int rc = sqlite3_step(c->one);
            rc = rc == SQLITE_ROW ? decode(c, c->one, 0, 1) : SQLITE_OK;
            sqlite3_reset(c->one);
            if (rc != SQLITE_OK)
                return rc;
        }
        int lo = 0, hi = c->nrows - 1;
        while (lo <= hi) {
            int mid = (lo + hi) / 2;
            if (c->rows[mid].v[0] < seq)
                lo = mid + 1;
            else
                hi = mid - 1;
        }
        if (lo < c->nrows && c->rows[lo].v[0] == seq) {
            c->at = lo;
            return SQLITE_OK;
        }
    }
    c->eof = 1;
    return SQLITE_OK;
}

static int64_t arg_int(sqlite3_value **argv, const char *map, int k, int64_t dflt, int *present)
{
    int a = map[k] - '0';
    if (!a) {
        *present = 0;
        return dflt;
    }
    *present = 1;
    return sqlite3_value_int64(argv[a - 1]);
}

/* Whether argument k is there but cannot equal an integer (NULL, text):
 * then no row matches. */
static int not_integer(sqlite3_value **argv, const char *map, int k)
{
    int a = map[k] - '0';
    if (!a)
        return 0;
    int t = sqlite3_value_numeric_type(argv[a - 1]);
    return t != SQLITE_INTEGER && t != SQLITE_FLOAT;
}

static uint64_t mask_of(int64_t x)
{
    return x >= 0 && x < 63 ? 1ull << x : 1ull << 63;
}

static int vt_filter(sqlite3_vtab_cursor *cur, int idx, const char *map, int argc, sqlite3_value **argv)
{
    (void)idx;
    (void)argc;
    struct pcur *c = (struct pcur *)cur;
    sqlite3_finalize(c->packs);
    c->packs = NULL;
    c->eof = 0;
    c->by_ref = 0;
    c->nrows = 0;
    c->at = 0;
    int p;
    for (int k = 0; k < NARGS; k++)
        if (not_integer(argv, map, k)) {
            c->eof = 1;
            return SQLITE_OK;
        }
    /* a bound past an integer (seq > 2.5) is widened: SQLite checks again */
    c->lo = arg_int(argv, map, ARG_SEQ_LO, INT64_MIN, &p);
    c->hi = arg_int(argv, map, ARG_SEQ_HI, INT64_MAX, &p);
    if (c->lo != INT64_MIN)
        c->lo--;
    if (c->hi != INT64_MAX)
        c->hi++;
    int64_t ref = arg_int(argv, map, ARG_REF, 0, &p);
    if (p) {
        int rc = refs_ready(c);
        if (rc != SQLITE_OK)
            return rc;
        struct ref_entry key = {ref, INT64_MIN};
        size_t lo = 0, hi = c->t->nrefs;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (cmp_ref(&c->t->refs[mid], &key) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        c->ref_at = c->ref_end = lo;
        while (c->ref_end < c->t->nrefs && c->t->refs[c->ref_end].ref == ref)
            c->ref_end++;
        c->by_ref = 1;
        return seek_ref(c);
    }
    int64_t ts_lo = arg_int(argv, map, ARG_TS_LO, INT64_MIN, &p);
    int64_t ts_hi = arg_int(argv, map, ARG_TS_HI, INT64_MAX, &p);
    if (ts_lo != INT64_MIN)
        ts_lo--;
    if (ts_hi != INT64_MAX)
        ts_hi++;
    uint64_t ops = ~0ull, kinds = ~0ull;
    int64_t x = arg_int(argv, map, ARG_OP, 0, &p);
    if (p)
        ops = mask_of(x);
    x = arg_int(argv, map, ARG_KIND, 0, &p);
    if (p)
        kinds = mask_of(x);
    if (sqlite3_prepare_v2(c->t->db,
                           "SELECT n, data FROM event_packs WHERE seq_lo >= coalesce((SELECT max(seq_lo)"
                           " FROM event_packs WHERE seq_lo <= ?1), ?1) AND seq_lo <= ?2 AND ts_max >= ?3"
                           " AND ts_min <= ?4 AND (ops & ?5) != 0 AND (kinds & ?6) != 0 ORDER BY seq_lo",
                           -1, &c->packs, NULL) != SQLITE_OK)
        return fail(c, sqlite3_errmsg(c->t->db));
    sqlite3_bind_int64(c->packs, 1, c->lo);
    sqlite3_bind_int64(c->packs, 2, c->hi);
    sqlite3_bind_int64(c->packs, 3, ts_lo);
    sqlite3_bind_int64(c->packs, 4, ts_hi);
    sqlite3_bind_int64(c->packs, 5, (int64_t)ops);
    sqlite3_bind_int64(c->packs, 6, (int64_t)kinds);
    return next_pack(c);
}

static int vt_next(sqlite3_vtab_cursor *cur)
{
    struct pcur *c = (struct pcur *)cur;
    if (c->by_ref) {
        c->ref_at++;
        return seek_ref(c);
    }
    if (++c->at < c->nrows) {
        if (c->rows[c->at].v[0] > c->hi)
            c->eof = 1;
        return SQLITE_OK;
    }
    return next_pack(c);
}

static int vt_eof(sqlite3_vtab_cursor *cur)
{
    return ((struct pcur *)cur)->eof;
}

static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
    struct pcur *c = (struct pcur *)cur;
    const struct gl_row *r = &c->rows[c->at];
    if (col < 0 || col >= GL_ROW_COLS || (r->null & (1u << col)))
        sqlite3_result_null(ctx);
    else
        sqlite3_result_int64(ctx, r->v[col]);
    return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *cur, sqlite_int64 *rowid)
{
    struct pcur *c = (struct pcur *)cur;
    *rowid = c->rows[c->at].v[0];
    return SQLITE_OK;
}

static const sqlite3_module module = {
    .iVersion = 0,
    .xCreate = NULL, /* eponymous only: the table is there, never created */
    .xConnect = vt_connect,
    .xBestIndex = vt_best_index,
    .xDisconnect = vt_disconnect,
    .xDestroy = vt_disconnect,
    .xOpen = vt_open,
    .xClose = vt_close,
    .xFilter = vt_filter,
    .xNext = vt_next,
    .xEof = vt_eof,
    .xColumn = vt_column,
    .xRowid = vt_rowid,
};

#ifdef GL_PACKVTAB_EXTENSION
#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_gpuledgersql_init(sqlite3 *db, char **err, const sqlite3_api_routines *api);
int sqlite3_gpuledgersql_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
    (void)err;
    SQLITE_EXTENSION_INIT2(api);
    return sqlite3_create_module(db, "gl_packed_events", &module, NULL);
}
#else
int gl_packvtab_register(sqlite3 *db)
{
    return sqlite3_create_module(db, "gl_packed_events", &module, NULL);
}
#endif
