/* unwind.c — the fast native stack walk (see unwind.h): finding and
 * reading a frame's DWARF call-frame rule (slow, once per return address,
 * under a lock), the lock-free rule cache, and the walk itself. */
#include "unwind.h"
#include "threadmem.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define GL_TLS __attribute__((tls_model("initial-exec")))

/* ---- rules ---------------------------------------------------------------
 * A rule packs into 48 bits: kind (2) | cfa form (2) | rbp form (2) |
 * cfa offset (24, signed) | rbp offset (16, signed). The top 16 bits of a
 * cached value hold the cache generation it was read in. */
enum { K_NONE = 0, K_OK = 1, K_LAST = 2, K_BAD = 3 };
enum { CFA_RSP = 0, CFA_RBP = 1, CFA_DEREF_RBP = 2 }; /* DEREF: CFA = *(rbp + off) (realigned frame) */
enum { BP_SAME = 0, BP_AT_CFA = 1, BP_AT_RBP = 2 };   /* rbp unchanged / saved at CFA+off / at rbp+off */

#define RULE_BAD ((uint64_t)K_BAD)
#define RULE_LAST ((uint64_t)K_LAST)

static uint64_t rule_pack(int cfa_form, int64_t cfa_off, int bp_form, int64_t bp_off)
{
    if (cfa_off < -(1 << 23) || cfa_off >= (1 << 23) || bp_off < -(1 << 15) || bp_off >= (1 << 15))
        return RULE_BAD;
    return (uint64_t)K_OK | (uint64_t)cfa_form << 2 | (uint64_t)bp_form << 4 |
           ((uint64_t)cfa_off & 0xFFFFFF) << 8 | ((uint64_t)bp_off & 0xFFFF) << 32;
}
#define R_KIND(r) ((int)((r)&3))
#define R_CFA(r) ((int)(((r) >> 2) & 3))
#define R_BP(r) ((int)(((r) >> 4) & 3))
#define R_CFA_OFF(r) ((int64_t)((int32_t)((uint32_t)((r) >> 8) << 8) >> 8))
#define R_BP_OFF(r) ((int64_t)(int16_t)(uint16_t)((r) >> 32))

/* ---- reading .eh_frame -------------------------------------------------- */

static uint64_t uleb(const uint8_t **pp, const uint8_t *end)
{
    uint64_t v = 0;
    unsigned shift = 0;
    const uint8_t *p = *pp;
    while (p < end) {
        uint8_t b = *p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            break;
    }
    *pp = p;
    return v;
}

static int64_t sleb(const uint8_t **pp, const uint8_t *end)
{
    int64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0;
    const uint8_t *p = *pp;
    while (p < end) {
        b = *p++;
        if (shift < 64)
            v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
        shift += 7;
        if (!(b & 0x80))
            break;
    }
    if (shift < 64 && (b & 0x40))
        v |= -(int64_t)((uint64_t)1 << shift);
    *pp = p;
    return v;
}

/* A DW_EH_PE-encoded value. datarel: the base for DW_EH_PE_datarel (the
 * .eh_frame_hdr address), 0 if not allowed. Returns 0 or -1. */
static int read_enc(const uint8_t **pp, const uint8_t *end, uint8_t enc, uintptr_t datarel, uintptr_t *out)
{
    const uint8_t *p = *pp;
    uintptr_t base, v;
    switch (enc & 0x70) {
    case 0x00: base = 0; break;
    case 0x10: base = (uintptr_t)p; break; /* pcrel */
    case 0x30: base = datarel; break;      /* datarel */
    default: return -1;                    /* textrel, funcrel, aligned: not in .eh_frame on x86-64 */
    }
    if ((enc & 0x70) == 0x30 && !datarel)
        return -1;
    switch (enc & 0x0f) {
    case 0x00: case 0x04: case 0x0c: { uint64_t x; if (end - p < 8) return -1; memcpy(&x, p, 8); p += 8; v = (uintptr_t)x; break; }
    case 0x03: { uint32_t x; if (end - p < 4) return -1; memcpy(&x, p, 4); p += 4; v = x; break; }
    case 0x0b: { int32_t x; if (end - p < 4) return -1; memcpy(&x, p, 4); p += 4; v = (uintptr_t)(intptr_t)x; break; }
    case 0x02: { uint16_t x; if (end - p < 2) return -1; memcpy(&x, p, 2); p += 2; v = x; break; }
    case 0x0a: { int16_t x; if (end - p < 2) return -1; memcpy(&x, p, 2); p += 2; v = (uintptr_t)(intptr_t)x; break; }
    case 0x01: v = (uintptr_t)uleb(&p, end); break;
    case 0x09: v = (uintptr_t)sleb(&p, end); break;
    default: return -1;
    }
    if (enc & 0x80)
        return -1; /* indirect: only personality routines use it, and those are skipped by size */
    *pp = p;
    *out = v + base;
    return 0;
}

/* Skip an encoded value (a personality pointer, which may be indirect). */
static int skip_enc(const uint8_t **pp, const uint8_t *end, uint8_t enc)
{
    uintptr_t dummy;
    return read_enc(pp, end, (uint8_t)(enc & 0x0f), 0, &dummy);
}

struct cie {
    uint64_t caf;          /* code alignment factor */
    int64_t daf;           /* data alignment factor */
    uint8_t fde_enc;       /* encoding of the FDE's addresses */
    int augmented;         /* 'z': FDEs carry augmentation data */
    int signal;            /* 'S': a signal frame */
    uint64_t ra_reg;
    const uint8_t *insns, *end;
};

static int parse_cie(const uint8_t *c, struct cie *ci)
{
    uint32_t len;
    memcpy(&len, c, 4);
    if (len == 0 || len == 0xffffffffu)
        return -1;
    const uint8_t *end = c + 4 + len, *p = c + 8;
    uint8_t version = *p++;
    if (version != 1 && version != 3)
        return -1;
    const char *aug = (const char *)p;
    size_t alen = strnlen(aug, (size_t)(end - p));
    p += alen + 1;
    if (aug[0] == 'e' && aug[1] == 'h')
        return -1; /* the pre-2000 "eh" augmentation */
    ci->caf = uleb(&p, end);
    ci->daf = sleb(&p, end);
    ci->ra_reg = version == 1 ? *p++ : uleb(&p, end);
    ci->fde_enc = 0;
    ci->augmented = aug[0] == 'z';
    ci->signal = 0;
    if (ci->augmented) {
        uint64_t n = uleb(&p, end);
        const uint8_t *aend = p + n;
        if (aend > end)
            return -1;
        for (const char *a = aug + 1; *a; a++) {
            if (*a == 'R')
                ci->fde_enc = *p++;
            else if (*a == 'P') {
                uint8_t pe = *p++;
                if (skip_enc(&p, aend, pe))
                    return -1;
            } else if (*a == 'L')
                p++;
            else if (*a == 'S')
                ci->signal = 1;
            else
                break; /* unknown: the length says where the data ends */
        }
        p = aend;
    }
    ci->insns = p;
    ci->end = end;
    return 0;
}

/* ---- running the call-frame program ---------------------------------------- */

enum { REG_RBP = 6, REG_RSP = 7, REG_RA = 16 };
enum { RA_CFA_M8 = 0, RA_UNDEF = 1, RA_OTHER = 2 };

struct row {
    int cfa_form, cfa_reg_ok; /* cfa_reg_ok: the CFA register is rsp or rbp */
    int64_t cfa_off;
    int bp_form, bp_bad;
    int64_t bp_off;
    int ra;
};

/* The rule of register `reg` changes; only rbp and the return address
 * matter to the walk. */
static void set_reg(struct row *r, uint64_t reg, int form, int64_t off, int bad)
{
    if (reg == REG_RBP) {
        r->bp_form = form;
        r->bp_off = off;
        r->bp_bad = bad;
    } else if (reg == REG_RA) {
        r->ra = bad ? RA_OTHER : form == BP_AT_CFA && off == -8 ? RA_CFA_M8 : RA_OTHER;
    }
}

/* DW_CFA_restore: register `reg` goes back to its rule after the CIE. */
static void restore_reg(struct row *r, const struct row *init, uint64_t reg)
{
    if (reg == REG_RBP) {
        r->bp_form = init->bp_form;
        r->bp_off = init->bp_off;
        r->bp_bad = init->bp_bad;
    } else if (reg == REG_RA) {
        r->ra = init->ra;
    }
}

#define MAX_STATES 8

/* Run instructions [p, end) while the location stays <= pc. Returns 0, or
 * -1 on anything the walk cannot use. init: the row after the CIE's
 * program (for DW_CFA_restore), NULL while running the CIE's own. */
/* The program's state as it runs: where it reads, the location it has
 * reached, the row, the rows remember_state saved. */
struct cfi {
    const uint8_t *p, *end;
    const struct cie *ci;
    uintptr_t loc, pc;
    struct row *r;
    const struct row *init;
    struct row saved[MAX_STATES];
    int ns;
};

enum { CFI_NEXT = 0, CFI_DONE = 1, CFI_BAD = -1 }; /* what an instruction leaves */

/* The location moves by delta code units: past pc, the row is the one. */
static int cfi_advance(struct cfi *c, uint64_t delta)
{
    uintptr_t to = c->loc + delta * c->ci->caf;
    if (to > c->pc)
        return CFI_DONE;
    c->loc = to;
    return CFI_NEXT;
}

/* advance_loc1/2/4: a delta of n bytes. */
static int cfi_advance_n(struct cfi *c, size_t n)
{
    uint64_t delta;
    if (n > (size_t)(c->end - c->p))
        return CFI_BAD;
    if (n == 1) {
        delta = c->p[0];
    } else if (n == 2) {
        uint16_t d;
        memcpy(&d, c->p, 2);
        delta = d;
    } else {
        uint32_t d;
        memcpy(&d, c->p, 4);
        delta = d;
    }
    c->p += n;
    return cfi_advance(c, delta);
}

static int cfi_set_loc(struct cfi *c)
{
    uintptr_t to;
    if (read_enc(&c->p, c->end, c->ci->fde_enc, 0, &to))
        return CFI_BAD;
    if (to > c->pc)
        return CFI_DONE;
    c->loc = to;
    return CFI_NEXT;
}

static int cfi_restore(struct cfi *c, uint64_t reg)
{
    if (!c->init)
        return CFI_BAD;
    restore_reg(c->r, c->init, reg);
    return CFI_NEXT;
}

/* An expression of n bytes from c->p, skipped: its start, or NULL when it
 * runs past the end. */
static const uint8_t *cfi_expression(struct cfi *c, uint64_t n)
{
    const uint8_t *e = c->p;
    if (n > (uint64_t)(c->end - c->p))
        return NULL;
    c->p += n;
    return e;
}

/* DW_CFA_expression: for rbp only DW_OP_breg6 k (rbp saved at rbp + k). */
static int cfi_reg_expression(struct cfi *c)
{
    uint64_t reg = uleb(&c->p, c->end);
    uint64_t n = uleb(&c->p, c->end);
    const uint8_t *e = cfi_expression(c, n);
    if (!e)
        return CFI_BAD;
    const uint8_t *eend = e + n;
    if (reg == REG_RBP && n >= 2 && *e == 0x76) {
        e++;
        int64_t k = sleb(&e, eend);
        set_reg(c->r, reg, BP_AT_RBP, k, e != eend);
    } else {
        set_reg(c->r, reg, BP_SAME, 0, 1);
    }
    return CFI_NEXT;
}

/* The rules of one register (rbp and the return address are followed). */
static int cfi_register_rule(struct cfi *c, uint8_t op)
{
    struct row *r = c->r;
    int64_t daf = c->ci->daf;
    if (op == 0x10)
        return cfi_reg_expression(c);
    uint64_t reg = uleb(&c->p, c->end);
    switch (op) {
    case 0x05: /* offset_extended */
        set_reg(r, reg, BP_AT_CFA, (int64_t)uleb(&c->p, c->end) * daf, 0);
        return CFI_NEXT;
    case 0x11: /* offset_extended_sf */
        set_reg(r, reg, BP_AT_CFA, sleb(&c->p, c->end) * daf, 0);
        return CFI_NEXT;
    case 0x2f: /* GNU_negative_offset_extended */
        set_reg(r, reg, BP_AT_CFA, -(int64_t)uleb(&c->p, c->end) * daf, 0);
        return CFI_NEXT;
    case 0x06: /* restore_extended */
        return cfi_restore(c, reg);
    case 0x07: /* undefined */
        if (reg == REG_RA)
            r->ra = RA_UNDEF;
        else
            set_reg(r, reg, BP_SAME, 0, 1);
        return CFI_NEXT;
    case 0x08: /* same_value */
        set_reg(r, reg, BP_SAME, 0, reg == REG_RA);
        return CFI_NEXT;
    case 0x09: /* register */
    case 0x14: /* val_offset */
        (void)uleb(&c->p, c->end);
        set_reg(r, reg, BP_SAME, 0, 1);
        return CFI_NEXT;
    case 0x15: /* val_offset_sf */
        (void)sleb(&c->p, c->end);
        set_reg(r, reg, BP_SAME, 0, 1);
        return CFI_NEXT;
    default: /* 0x16 val_expression */
        if (!cfi_expression(c, uleb(&c->p, c->end)))
            return CFI_BAD;
        set_reg(r, reg, BP_SAME, 0, 1);
        return CFI_NEXT;
    }
}

/* The CFA is register + offset: rsp or rbp is what the walk can use. */
static void cfa_register(struct row *r, uint64_t reg)
{
    r->cfa_form = reg == REG_RBP ? CFA_RBP : CFA_RSP;
    r->cfa_reg_ok = reg == REG_RBP || reg == REG_RSP;
}

/* def_cfa_expression: only DW_OP_breg6 k; DW_OP_deref. */
static int cfi_cfa_expression(struct cfi *c)
{
    uint64_t n = uleb(&c->p, c->end);
    const uint8_t *e = cfi_expression(c, n);
    if (!e)
        return CFI_BAD;
    const uint8_t *eend = e + n;
    c->r->cfa_reg_ok = 0;
    if (n >= 2 && *e == 0x76) {
        e++;
        int64_t k = sleb(&e, eend);
        if (e + 1 == eend && *e == 0x06) {
            c->r->cfa_form = CFA_DEREF_RBP;
            c->r->cfa_off = k;
            c->r->cfa_reg_ok = 1;
        }
    }
    return CFI_NEXT;
}

/* The rule of the CFA. */
static int cfi_cfa_rule(struct cfi *c, uint8_t op)
{
    struct row *r = c->r;
    uint64_t reg;
    switch (op) {
    case 0x0c: /* def_cfa */
        reg = uleb(&c->p, c->end);
        r->cfa_off = (int64_t)uleb(&c->p, c->end);
        cfa_register(r, reg);
        return CFI_NEXT;
    case 0x12: /* def_cfa_sf */
        reg = uleb(&c->p, c->end);
        r->cfa_off = sleb(&c->p, c->end) * c->ci->daf;
        cfa_register(r, reg);
        return CFI_NEXT;
    case 0x0d: /* def_cfa_register */
        reg = uleb(&c->p, c->end);
        if (r->cfa_form == CFA_DEREF_RBP)
            r->cfa_off = 0;
        cfa_register(r, reg);
        return CFI_NEXT;
    case 0x0e: /* def_cfa_offset */
        r->cfa_off = (int64_t)uleb(&c->p, c->end);
        break;
    case 0x13: /* def_cfa_offset_sf */
        r->cfa_off = sleb(&c->p, c->end) * c->ci->daf;
        break;
    default: /* 0x0f def_cfa_expression */
        return cfi_cfa_expression(c);
    }
    if (r->cfa_form == CFA_DEREF_RBP)
        r->cfa_reg_ok = 0;
    return CFI_NEXT;
}

/* remember_state / restore_state. */
static int cfi_state(struct cfi *c, uint8_t op)
{
    if (op == 0x0a) {
        if (c->ns == MAX_STATES)
            return CFI_BAD;
        c->saved[c->ns++] = *c->r;
    } else {
        if (c->ns == 0)
            return CFI_BAD;
        *c->r = c->saved[--c->ns];
    }
    return CFI_NEXT;
}

/* One instruction. */
static int cfi_step(struct cfi *c, uint8_t op)
{
    switch (op >> 6) { /* the primary opcodes carry their operand in the low 6 bits */
    case 1:
        return cfi_advance(c, op & 0x3f);
    case 2:
        set_reg(c->r, op & 0x3f, BP_AT_CFA, (int64_t)uleb(&c->p, c->end) * c->ci->daf, 0);
        return CFI_NEXT;
    case 3:
        return cfi_restore(c, op & 0x3f);
    default:
        break;
    }
    switch (op) {
    case 0x00: /* nop */
        return CFI_NEXT;
    case 0x01:
        return cfi_set_loc(c);
    case 0x02:
        return cfi_advance_n(c, 1);
    case 0x03:
        return cfi_advance_n(c, 2);
    case 0x04:
        return cfi_advance_n(c, 4);
    case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x10: case 0x11: case 0x14: case 0x15: case 0x16:
    case 0x2f:
        return cfi_register_rule(c, op);
    case 0x0a: case 0x0b:
        return cfi_state(c, op);
    case 0x0c: case 0x0d: case 0x0e: case 0x0f: case 0x12: case 0x13:
        return cfi_cfa_rule(c, op);
    case 0x2e: /* GNU_args_size */
        (void)uleb(&c->p, c->end);
        return CFI_NEXT;
    default:
        return CFI_BAD;
    }
}

static int run_cfi(const uint8_t *p, const uint8_t *end, const struct cie *ci, uintptr_t loc, uintptr_t pc,
                   struct row *r, const struct row *init)
{
    struct cfi c = {.p = p, .end = end, .ci = ci, .loc = loc, .pc = pc, .r = r, .init = init, .ns = 0};
    while (c.p < c.end) {
        int rc = cfi_step(&c, *c.p++);
        if (rc != CFI_NEXT)
            return rc == CFI_DONE ? 0 : -1;
    }
    return 0;
}

/* ---- finding the FDE ------------------------------------------------------ */

struct hdr_query {
    uintptr_t pc, hdr;
    int found;
};

static int find_hdr(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct hdr_query *q = data;
    uintptr_t hdr = 0;
    int inside = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && q->pc >= a && q->pc < a + ph->p_memsz)
            inside = 1;
        else if (ph->p_type == PT_GNU_EH_FRAME)
            hdr = a;
    }
    if (!inside)
        return 0;
    q->hdr = hdr;
    q->found = 1;
    return 1;
}

/* The rule for pc, read from the call-frame information. */
static uint64_t compute_rule(uintptr_t pc)
{
    struct hdr_query q = {pc, 0, 0};
    dl_iterate_phdr(find_hdr, &q);
    if (!q.found || !q.hdr)
        return RULE_BAD;
    const uint8_t *h = (const uint8_t *)q.hdr, *hend = h + 64;
    if (h[0] != 1 || h[3] != 0x3b) /* version 1; table of datarel sdata4 pairs, as every linker writes */
        return RULE_BAD;
    const uint8_t *p = h + 4;
    uintptr_t eh_frame, count;
    if (read_enc(&p, hend, h[1], q.hdr, &eh_frame) || read_enc(&p, hend, h[2], q.hdr, &count) || !count)
        return RULE_BAD;
    const int32_t *tab = (const int32_t *)(const void *)p;
    size_t lo = 0, hi = count;
    if (pc < q.hdr + (uintptr_t)(intptr_t)tab[0])
        return RULE_BAD;
    while (hi - lo > 1) { /* the last entry whose start is <= pc */
        size_t mid = lo + (hi - lo) / 2;
        if (q.hdr + (uintptr_t)(intptr_t)tab[2 * mid] <= pc)
            lo = mid;
        else
            hi = mid;
    }
    const uint8_t *fde = (const uint8_t *)(q.hdr + (uintptr_t)(intptr_t)tab[2 * lo + 1]);
    uint32_t len, cie_off;
    memcpy(&len, fde, 4);
    if (len == 0 || len == 0xffffffffu)
        return RULE_BAD;
    const uint8_t *fend = fde + 4 + len;
    memcpy(&cie_off, fde + 4, 4);
    if (cie_off == 0)
        return RULE_BAD;
    struct cie ci;
    if (parse_cie(fde + 4 - cie_off, &ci) || ci.signal || ci.ra_reg != REG_RA)
        return RULE_BAD;
    p = fde + 8;
    uintptr_t start, range;
    if (read_enc(&p, fend, ci.fde_enc, 0, &start) || read_enc(&p, fend, ci.fde_enc & 0x0f, 0, &range))
        return RULE_BAD;
    if (pc < start || pc >= start + range)
        return RULE_BAD; /* no unwind information covers pc */
    if (ci.augmented) {
        uint64_t n = uleb(&p, fend);
        p += n;
        if (p > fend)
            return RULE_BAD;
    }
    struct row r = {CFA_RSP, 0, 0, BP_SAME, 0, 0, RA_OTHER};
    if (run_cfi(ci.insns, ci.end, &ci, start, (uintptr_t)-1, &r, NULL))
        return RULE_BAD;
    struct row init = r;
    if (run_cfi(p, fend, &ci, start, pc, &r, &init))
        return RULE_BAD;
    if (r.ra == RA_UNDEF)
        return RULE_LAST;
    if (r.ra != RA_CFA_M8 || !r.cfa_reg_ok || r.bp_bad)
        return RULE_BAD;
    return rule_pack(r.cfa_form, r.cfa_off, r.bp_form, r.bp_off);
}

/* ---- the rule cache --------------------------------------------------------
 * Open addressing, keyed by pc; an entry is written once (value, then key,
 * with release) under miss_lock and read without locks. A value read in an
 * older generation (before a dlclose) counts as a miss and is rewritten. */
#define CACHE_BITS 14
#define CACHE_SIZE (1u << CACHE_BITS)
#define PROBES 8

struct entry {
    _Atomic uint64_t key, val;
};
static struct entry cache[CACHE_SIZE];
static _Atomic uint32_t generation = 1;
static pthread_mutex_t miss_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t n_fallback, n_walks, n_hits, n_reason[4];
static _Atomic uintptr_t first_bad_pc;
static _Atomic int first_bad_reason;
static __thread uint64_t tls_fast GL_TLS;
static int memo_on = 1;

void gl_unwind_use_memo(int on)
{
    memo_on = on;
}

static inline uint32_t slot_of(uintptr_t pc)
{
    return (uint32_t)((pc * 0x9E3779B97F4A7C15ull) >> (64 - CACHE_BITS));
}

static __attribute__((noinline)) uint64_t rule_miss(uintptr_t pc, uint64_t gen)
{
    pthread_mutex_lock(&miss_lock);
    uint64_t rule = compute_rule(pc);
    uint32_t s = slot_of(pc);
    for (unsigned i = 0; i < PROBES; i++) {
        struct entry *e = &cache[(s + i) & (CACHE_SIZE - 1)];
        uint64_t k = atomic_load_explicit(&e->key, memory_order_relaxed);
        if (k == pc || k == 0) {
            atomic_store_explicit(&e->val, rule | gen << 48, memory_order_release);
            if (k == 0)
                atomic_store_explicit(&e->key, pc, memory_order_release);
            break;
        }
    }
    pthread_mutex_unlock(&miss_lock);
    return rule; /* a full neighbourhood: not cached, still correct */
}

static inline uint64_t rule_of(uintptr_t pc, uint64_t gen)
{
    uint32_t s = slot_of(pc);
    for (unsigned i = 0; i < PROBES; i++) {
        struct entry *e = &cache[(s + i) & (CACHE_SIZE - 1)];
        uint64_t k = atomic_load_explicit(&e->key, memory_order_acquire);
        if (k == pc) {
            uint64_t v = atomic_load_explicit(&e->val, memory_order_acquire);
            if (v >> 48 == gen)
                return v & 0xFFFFFFFFFFFFull;
            break;
        }
        if (k == 0)
            break;
    }
    return rule_miss(pc, gen);
}

void gl_unwind_fork_prepare(void)
{
    pthread_mutex_lock(&miss_lock);
}

void gl_unwind_fork_parent(void)
{
    pthread_mutex_unlock(&miss_lock);
}

void gl_unwind_after_fork(void)
{
    pthread_mutex_init(&miss_lock, NULL);
}

void gl_unwind_invalidate(void)
{
    uint32_t g = atomic_load(&generation);
    uint32_t next = (g + 1) & 0xFFFF;
    atomic_store(&generation, next ? next : 1);
}

void gl_unwind_stats(uint64_t *fast, uint64_t *fallback)
{
    *fast = tls_fast;
    *fallback = atomic_load(&n_fallback);
}

/* ---- the walk ------------------------------------------------------------ */

/* This thread's stack: [lo, hi); hi == 1 when it could not be found. */
static __thread uintptr_t tls_stack_lo GL_TLS, tls_stack_hi GL_TLS;

static void find_stack(void)
{
    pthread_attr_t a;
    void *addr;
    size_t size;
    tls_stack_hi = 1;
    if (pthread_getattr_np(pthread_self(), &a) != 0)
        return;
    if (pthread_attr_getstack(&a, &addr, &size) == 0 && size) {
        tls_stack_lo = (uintptr_t)addr;
        tls_stack_hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&a);
}

/* The walk stops: count it, and remember where the first one did. */
static int give_up(int reason, uintptr_t pc)
{
    atomic_fetch_add_explicit(&n_fallback, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&n_reason[reason & 3], 1, memory_order_relaxed);
    uintptr_t none = 0;
    if (atomic_load_explicit(&first_bad_pc, memory_order_relaxed) == 0 &&
        atomic_compare_exchange_strong(&first_bad_pc, &none, pc ? pc : 1))
        atomic_store(&first_bad_reason, reason);
    return -1;
}

void gl_unwind_totals(struct gl_unwind_totals *t)
{
    t->walks = atomic_load(&n_walks);
    t->memo_hits = atomic_load(&n_hits);
    t->fallbacks = atomic_load(&n_fallback);
    t->first_giveup_pc = atomic_load(&first_bad_pc);
    t->first_giveup_reason = atomic_load(&first_bad_reason);
    for (int i = 0; i < 4; i++)
        t->by_reason[i] = atomic_load(&n_reason[i]);
}

/* Process totals: a thread's first 64 walks are added one by one, later
 * ones in batches of 64 (no shared counter written on every walk). */
static inline void count_walk(int hit)
{
    static __thread unsigned batch_walks GL_TLS, batch_hits GL_TLS;
    if (tls_fast++ < 64) {
        atomic_fetch_add_explicit(&n_walks, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&n_hits, (unsigned)hit, memory_order_relaxed);
        return;
    }
    batch_hits += (unsigned)hit;
    if (++batch_walks == 64) {
        atomic_fetch_add_explicit(&n_walks, batch_walks, memory_order_relaxed);
        atomic_fetch_add_explicit(&n_hits, batch_hits, memory_order_relaxed);
        batch_walks = batch_hits = 0;
    }
}

/* ---- the per-thread memo of recent walks ---------------------------------
 * A walk is a function of the registers it starts from (sp, and rbp if a
 * rule reads it before some frame restores it), of the rules (fixed within
 * a generation) and of the stack words it loads. A memo keeps the addresses
 * and values of those words with the result: a later walk from the same sp
 * whose words all still hold the same values has the same result, copied
 * instead of walked — independent loads instead of a chain of dependent
 * ones (a frame walked costs a look-up and two loads in sequence, ~6 ns; a
 * frame checked, ~0.5 ns). Sets of 4 indexed by sp; about 80 KiB per
 * thread, mapped at its first stack walk and unmapped at its exit. */
#define MEMO_FRAMES 80
#define MEMO_LOADS 128
#define MEMO_SETS 8
#define MEMO_WAYS 4

struct memo {
    uintptr_t sp0, bp0, stop;
    uint64_t gen;
    int max, n, nl, bp_used, valid;
    uintptr_t ips[MEMO_FRAMES];
    uintptr_t la[MEMO_LOADS], lv[MEMO_LOADS];
};

struct memo_table {
    struct memo m[MEMO_SETS][MEMO_WAYS];
    unsigned next[MEMO_SETS];
};

static __thread struct memo_table *tls_memo GL_TLS;
static __thread int tls_memo_state GL_TLS; /* 0: not yet, 1: mapped, -1: none */
static __thread uint64_t tls_memo_hits GL_TLS;
static struct gl_threadmem memo_pool = GL_THREADMEM_INIT(sizeof(struct memo_table));

static void memo_free(void *p)
{
    tls_memo = NULL;
    tls_memo_state = -1; /* a later destructor's walk goes without */
    gl_threadmem_put(&memo_pool, p);
}

static struct memo_table *memo_table(void)
{
    if (tls_memo_state == 0) {
        tls_memo_state = -1;
        tls_memo = gl_threadmem_get(&memo_pool, memo_free);
        if (tls_memo)
            tls_memo_state = 1;
    }
    return tls_memo;
}

static inline unsigned memo_set(uintptr_t sp)
{
    return (unsigned)((sp >> 4) ^ (sp >> 9) ^ (sp >> 14)) & (MEMO_SETS - 1);
}

void gl_unwind_memo_stats(uint64_t *hits)
{
    *hits = tls_memo_hits;
}

/* Loads are from [lo, hi - 8] only: the live part of this thread's stack. */
#define IN_STACK(a) ((a) >= lo && (a) <= hi - 8 && ((a)&7) == 0)

/* Record a load the result depends on (only while it fits). */
#define NOTE(a, v)                                                                                 \
    do {                                                                                           \
        if (rec->nl < MEMO_LOADS) {                                                                \
            rec->la[rec->nl] = (a);                                                                \
            rec->lv[rec->nl] = (v);                                                                \
        }                                                                                          \
        rec->nl++;                                                                                 \
    } while (0)
/* rbp is about to be used for an address: the walk depends on where it
 * came from (the starting register, or a load not noted yet). */
#define BP_USED()                                                                                  \
    do {                                                                                           \
        if (bp_src < 0)                                                                            \
            rec->bp_used = 1;                                                                      \
        else if (bp_src > 0) {                                                                     \
            NOTE(bp_a, bp);                                                                        \
            bp_src = 0;                                                                            \
        }                                                                                          \
    } while (0)

/* The walk from pc/sp/bp (the registers of the exported function it is
 * inlined into), up to max frames, stopping after a return address whose
 * call lies in [stop_lo, stop_hi). Not instrumented: it reads other
 * frames' stack slots on purpose. */
static inline __attribute__((always_inline, no_sanitize("address", "thread"))) int
walk(uintptr_t *ips, int max, uintptr_t stop_lo, uintptr_t stop_hi, uintptr_t pc, uintptr_t sp, uintptr_t bp)
{
    if (!tls_stack_hi)
        find_stack();
    const uintptr_t lo = sp, hi = tls_stack_hi;
    if (sp < tls_stack_lo || sp >= hi) /* an alternate signal stack, a coroutine's: libunwind */
        return give_up(GL_GIVEUP_STACK, pc);
    const uint64_t gen = atomic_load_explicit(&generation, memory_order_relaxed);

    struct memo scratch, *rec = &scratch;
    struct memo_table *t = !memo_on ? NULL : tls_memo_state > 0 ? tls_memo : memo_table();
    if (t) {
        unsigned set = memo_set(sp);
        for (unsigned w = 0; w < MEMO_WAYS; w++) {
            const struct memo *m = &t->m[set][w];
            if (!m->valid || m->sp0 != sp || m->max != max || m->stop != stop_lo || m->gen != gen ||
                (m->bp_used && m->bp0 != bp))
                continue;
            int i = 0;
            while (i < m->nl && *(const uintptr_t *)m->la[i] == m->lv[i])
                i++;
            if (i == m->nl) {
                memcpy(ips, m->ips, (size_t)m->n * sizeof ips[0]);
                tls_memo_hits++;
                count_walk(1);
                return m->n;
            }
        }
        rec = &t->m[set][t->next[set]++ % MEMO_WAYS];
    }
    rec->valid = 0;
    rec->nl = 0;
    rec->bp_used = 0;
    int bp_src = -1; /* -1: the starting rbp; 1: loaded from bp_a, not noted; 0: noted */
    uintptr_t bp_a = 0, bp0 = bp;

    int n = 0;
    uintptr_t look = pc; /* the first pc is exact; return addresses are looked up at ra - 1 */
    while (n < max) {
        uint64_t r = rule_of(look, gen);
        int kind = R_KIND(r);
        if (kind == K_LAST)
            break;
        if (kind != K_OK)
            return give_up(GL_GIVEUP_RULE, look);
        uintptr_t cfa;
        int64_t off = R_CFA_OFF(r);
        switch (R_CFA(r)) {
        case CFA_RSP: cfa = sp + (uintptr_t)off; break;
        case CFA_RBP: BP_USED(); cfa = bp + (uintptr_t)off; break;
        default: {
            BP_USED();
            uintptr_t at = bp + (uintptr_t)off;
            if (!IN_STACK(at))
                return give_up(GL_GIVEUP_BOUNDS, look);
            cfa = *(const uintptr_t *)at;
            NOTE(at, cfa);
            break;
        }
        }
        if (cfa <= sp || cfa > hi || !IN_STACK(cfa - 8))
            return give_up(GL_GIVEUP_BOUNDS, look);
        uintptr_t ra = *(const uintptr_t *)(cfa - 8);
        NOTE(cfa - 8, ra);
        int64_t boff = R_BP_OFF(r);
        if (R_BP(r) == BP_AT_CFA) {
            uintptr_t at = cfa + (uintptr_t)boff;
            if (!IN_STACK(at))
                return give_up(GL_GIVEUP_BOUNDS, look);
            bp = *(const uintptr_t *)at;
            bp_a = at;
            bp_src = 1;
        } else if (R_BP(r) == BP_AT_RBP) {
            BP_USED();
            uintptr_t at = bp + (uintptr_t)boff;
            if (!IN_STACK(at))
                return give_up(GL_GIVEUP_BOUNDS, look);
            bp = *(const uintptr_t *)at;
            bp_a = at;
            bp_src = 1;
        }
        sp = cfa;
        if (ra < 0x4000) /* the end of the chain (libunwind stops there too) */
            break;
        ips[n++] = ra;
        look = ra - 1;
        if (look >= stop_lo && look < stop_hi)
            break;
    }
    if (rec != &scratch && rec->nl <= MEMO_LOADS && n <= MEMO_FRAMES) {
        rec->sp0 = lo;
        rec->bp0 = bp0;
        rec->stop = stop_lo;
        rec->gen = gen;
        rec->max = max;
        rec->n = n;
        memcpy(rec->ips, ips, (size_t)n * sizeof ips[0]);
        rec->valid = 1;
    }
    count_walk(0);
    return n;
}

#define REGS(pc, sp, bp) __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(pc), "=r"(sp), "=r"(bp))

__attribute__((noinline, no_sanitize("address", "thread"))) int gl_unwind_fast(uintptr_t *ips, int max)
{
    uintptr_t pc, sp, bp;
    REGS(pc, sp, bp);
    return walk(ips, max, 0, 0, pc, sp, bp);
}

__attribute__((noinline, no_sanitize("address", "thread"))) int gl_unwind_fast_to(uintptr_t *ips, int max,
                                                                                 uintptr_t stop_lo, uintptr_t stop_hi)
{
    uintptr_t pc, sp, bp;
    REGS(pc, sp, bp);
    return walk(ips, max, stop_lo, stop_hi, pc, sp, bp);
}

/* How the stacks were walked (meta unwind_*): what to look at when stacks
 * cost more than they should. */
void gl_unwind_meta(gl_meta_put put, void *ctx)
{
    struct gl_unwind_totals t;
    gl_unwind_totals(&t);
    char num[256];
    snprintf(num, sizeof num, "%llu", (unsigned long long)t.walks);
    put(ctx, "unwind_walks", num);
    snprintf(num, sizeof num, "%llu", (unsigned long long)t.memo_hits);
    put(ctx, "unwind_memo_hits", num);
    snprintf(num, sizeof num, "%llu", (unsigned long long)t.fallbacks);
    put(ctx, "unwind_libunwind", num);
    if (t.fallbacks) {
        snprintf(num, sizeof num, "not on the thread's stack: %llu, no usable unwind rule: %llu, a load out of bounds: %llu",
                 (unsigned long long)t.by_reason[GL_GIVEUP_STACK], (unsigned long long)t.by_reason[GL_GIVEUP_RULE],
                 (unsigned long long)t.by_reason[GL_GIVEUP_BOUNDS]);
        put(ctx, "unwind_libunwind_why", num);
    }
    if (t.first_giveup_pc) {
        static const char *why[] = {"?", "not on the thread's stack", "no usable unwind rule", "a load out of bounds"};
        Dl_info di;
        int r = t.first_giveup_reason >= 1 && t.first_giveup_reason <= 3 ? t.first_giveup_reason : 0;
        if (dladdr((void *)t.first_giveup_pc, &di) && di.dli_fname)
            snprintf(num, sizeof num, "%s at %s+0x%llx (%s)", why[r], di.dli_fname,
                     (unsigned long long)(t.first_giveup_pc - (uintptr_t)di.dli_fbase),
                     di.dli_sname ? di.dli_sname : "?");
        else
            snprintf(num, sizeof num, "%s at 0x%llx", why[r], (unsigned long long)t.first_giveup_pc);
        put(ctx, "unwind_first_giveup", num);
    }
}
