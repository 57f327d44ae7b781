/* pyint.h — internal to the Python-frames code (pyframes.c walks the
 * frames, pycode.c names them): the per-version layout and the code-object
 * table's entry points. */
#ifndef GL_PYINT_H
#define GL_PYINT_H

#include <stdint.h>
#include <string.h>

enum py_style { ST_FRAMEOBJ, ST_311, ST_312, ST_313 };

struct pyvt {
    int minor, style;
    int ts_frame;  /* 3.9/3.10 tstate->frame, 3.11/3.12 tstate->cframe, 3.13 tstate->current_frame */
    int cf_cur;    /* 3.11/3.12 cframe->current_frame */
    int f_code;    /* f_code (frame object / interpreter frame), 3.13 f_executable */
    int f_back;    /* f_back / previous */
    int f_instr;   /* 3.9/3.10 f_lasti (int), else prev_instr / instr_ptr */
    int lasti_mult;/* bytes per f_lasti unit: 3.9 1, 3.10 2 */
    int is_entry;  /* 3.11 */
    int owner;     /* 3.11+ */
    int co_file, co_name, co_first, co_code;
    int u_ascii, u_compact; /* sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject) */
};

#define OWNED_BY_CSTACK 3
#define U_STATE 32
#define U_LENGTH 16
#define OB_TYPE 8

/* Reads of interpreter memory (unaligned-safe). */
static inline uintptr_t rd_ptr(uintptr_t p)
{
    uintptr_t v;
    memcpy(&v, (const void *)p, sizeof v);
    return v;
}

static inline int32_t rd_i32(uintptr_t p)
{
    int32_t v;
    memcpy(&v, (const void *)p, sizeof v);
    return v;
}

/* The layout of the CPython found (set once, before it is used). */
extern const struct pyvt *gl_pyvt;

/* Map the code-object tables; addr2line is CPython's PyCode_Addr2Line.
 * Returns 0, or -1 if memory could not be mapped. */
int gl_pycode_init(int (*addr2line)(void *code, int addr));
/* The pseudo return address of a frame running `code` at bytecode byte
 * offset addr: GL_PYFRAME_BIT | code id << 32 | line. */
uintptr_t gl_pycode_frame(uintptr_t code, int64_t addr);
void gl_pycode_after_fork(void);
/* The file and qualified name of code id (from a Python pseudo-frame);
 * -1 for an id out of range. */
int gl_pycode_names(uint32_t id, const char **file, const char **func);

#endif
