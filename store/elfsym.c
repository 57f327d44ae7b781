/* elfsym.c — minimal ELF64 symbol-table reader (see elfsym.h). */
#include "elfsym.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int cmp_sym(const void *a, const void *b)
{
    const struct gl_elfsym *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int in_file(const struct gl_elfsyms *e, uint64_t off, uint64_t len)
{
    return off <= e->maplen && len <= e->maplen - off;
}

static void read_build_id(struct gl_elfsyms *e, const Elf64_Shdr *sh, size_t shnum)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < shnum; i++) {
        if (sh[i].sh_type != SHT_NOTE || !in_file(e, sh[i].sh_offset, sh[i].sh_size))
            continue;
        const unsigned char *p = (const unsigned char *)e->map + sh[i].sh_offset;
        const unsigned char *end = p + sh[i].sh_size;
        while (p + sizeof(Elf64_Nhdr) <= end) {
            const Elf64_Nhdr *nh = (const Elf64_Nhdr *)(const void *)p;
            const unsigned char *name = p + sizeof *nh;
            const unsigned char *desc = name + ((nh->n_namesz + 3) & ~3u);
            const unsigned char *next = desc + ((nh->n_descsz + 3) & ~3u);
            if (next > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
                size_t n = nh->n_descsz > 20 ? 20 : nh->n_descsz;
                for (size_t k = 0; k < n; k++) {
                    e->build_id[2 * k] = hex[desc[k] >> 4];
                    e->build_id[2 * k + 1] = hex[desc[k] & 15];
                }
                e->build_id[2 * n] = 0;
                return;
            }
            p = next;
        }
    }
}

int gl_elfsyms_load(struct gl_elfsyms *e, const char *path)
{
    memset(e, 0, sizeof *e);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return -1;
    }
    e->maplen = (size_t)st.st_size;
    e->map = mmap(NULL, e->maplen, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (e->map == MAP_FAILED) {
        e->map = NULL;
        return -1;
    }
    const Elf64_Ehdr *eh = e->map;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shentsize != sizeof(Elf64_Shdr) ||
        !in_file(e, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr))) {
        gl_elfsyms_free(e);
        return -1;
    }
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(const void *)((const char *)e->map + eh->e_shoff);
    read_build_id(e, sh, eh->e_shnum);
    const Elf64_Shdr *symsec = NULL;
    for (size_t i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_type == SHT_SYMTAB)
            symsec = &sh[i];
    if (!symsec)
        for (size_t i = 0; i < eh->e_shnum; i++)
            if (sh[i].sh_type == SHT_DYNSYM)
                symsec = &sh[i];
    if (!symsec || symsec->sh_link >= eh->e_shnum || !in_file(e, symsec->sh_offset, symsec->sh_size))
        return 0;
    const Elf64_Shdr *strsec = &sh[symsec->sh_link];
    if (!in_file(e, strsec->sh_offset, strsec->sh_size))
        return 0;
    e->strtab = (const char *)e->map + strsec->sh_offset;
    e->strtab_len = strsec->sh_size;
    size_t nsym = symsec->sh_size / sizeof(Elf64_Sym);
    const Elf64_Sym *syms = (const Elf64_Sym *)(const void *)((const char *)e->map + symsec->sh_offset);
    e->syms = malloc((nsym ? nsym : 1) * sizeof *e->syms);
    if (!e->syms)
        return 0;
    for (size_t i = 0; i < nsym; i++) {
        const Elf64_Sym *s = &syms[i];
        int type = ELF64_ST_TYPE(s->st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s->st_shndx == SHN_UNDEF || !s->st_value ||
            s->st_name >= e->strtab_len)
            continue;
        e->syms[e->n].lo = s->st_value;
        e->syms[e->n].hi = s->st_value + s->st_size;
        e->syms[e->n].name = s->st_name;
        e->n++;
    }
    qsort(e->syms, e->n, sizeof *e->syms, cmp_sym);
    /* Zero-sized symbols extend to the next one. */
    for (size_t i = 0; i < e->n; i++)
        if (e->syms[i].hi == e->syms[i].lo)
            e->syms[i].hi = i + 1 < e->n ? e->syms[i + 1].lo : e->syms[i].lo + 1;
    return 0;
}

void gl_elfsyms_free(struct gl_elfsyms *e)
{
    if (e->map)
        munmap(e->map, e->maplen);
    free(e->syms);
    memset(e, 0, sizeof *e);
}

const char *gl_elfsyms_lookup(const struct gl_elfsyms *e, uint64_t addr, uint64_t *off)
{
    size_t lo = 0, hi = e->n;
    while (lo < hi) { /* first symbol with start > addr */
        size_t mid = (lo + hi) / 2;
        if (e->syms[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Walk back over symbols starting at or before addr (aliases, nesting). */
    for (size_t i = lo; i-- > 0;) {
        if (addr >= e->syms[i].lo && addr < e->syms[i].hi) {
            *off = addr - e->syms[i].lo;
            return e->strtab + e->syms[i].name;
        }
        if (lo - i > 8)
            break;
    }
    return NULL;
}
