/* symbolize.h — in-process symbolization for the writer thread: which
 * loaded module an address belongs to (path, load base, size, build-id)
 * and which function, C++ names demangled. Results are cached by the
 * caller per address; modules and their symbol tables are cached here. */
#ifndef GL_SYMBOLIZE_H
#define GL_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#include "elfsym.h"

struct gl_module {
    char *path;
    uintptr_t lo, hi;   /* mapped range */
    uintptr_t bias;     /* load bias: link-time address = ip - bias */
    int64_t db_id;      /* row id in modules, 0 until stored */
    int syms_tried;
    struct gl_elfsyms syms;
};

struct gl_symbolizer {
    struct gl_module *mods;
    size_t n, cap;
    int names;          /* 0: modules only, no symbol names */
    char *(*demangle)(const char *, char *, size_t *, int *);
    int demangle_tried;
};

struct gl_frame_info {
    struct gl_module *module; /* NULL if the address is in no module */
    char *symbol;             /* malloc'd (demangled) name, or NULL */
    uint64_t sym_offset;
    uint64_t rel;             /* ip - module bias */
};

/* Extent [lo, hi) of a loaded object's PT_LOAD segments, and whether addr
 * lies in one of them. Shared with the recorder's own-frame range. */
struct dl_phdr_info;
int gl_phdr_extent(const struct dl_phdr_info *info, uintptr_t addr, uintptr_t *lo, uintptr_t *hi);

void gl_symbolizer_init(struct gl_symbolizer *s, int names);
void gl_symbolizer_free(struct gl_symbolizer *s);
/* `ip` is a return address: the call instruction is looked up (ip - 1). */
void gl_symbolize(struct gl_symbolizer *s, uintptr_t ip, struct gl_frame_info *out);
/* Demangle a C++ name if it is one; returns a malloc'd string or NULL. */
char *gl_demangle(struct gl_symbolizer *s, const char *name);

#endif
