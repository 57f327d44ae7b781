/* elfsym.h — function symbols of one ELF file (.symtab, else .dynsym),
 * read from disk so that static functions get names too, plus its GNU
 * build-id. Used by the writer's symbolizer. */
#ifndef GL_ELFSYM_H
#define GL_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

struct gl_elfsym {
    uint64_t lo, hi;   /* link-time addresses [lo, hi) */
    uint32_t name;     /* offset in strtab */
};

struct gl_elfsyms {
    void *map;
    size_t maplen;
    const char *strtab;
    size_t strtab_len;
    struct gl_elfsym *syms;
    size_t n;
    char build_id[41];
};

/* Returns 0 on success (possibly with n == 0 if stripped), -1 if the file
 * cannot be read as 64-bit ELF. */
int gl_elfsyms_load(struct gl_elfsyms *e, const char *path);
void gl_elfsyms_free(struct gl_elfsyms *e);
/* Symbol containing link-time address `addr`, or NULL. *off = addr - start. */
const char *gl_elfsyms_lookup(const struct gl_elfsyms *e, uint64_t addr, uint64_t *off);

#endif
