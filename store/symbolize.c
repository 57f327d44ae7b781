/* symbolize.c — see symbolize.h. Runs only in the writer thread. */
#include "symbolize.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void gl_symbolizer_init(struct gl_symbolizer *s, int names)
{
    memset(s, 0, sizeof *s);
    s->names = names;
}

void gl_symbolizer_free(struct gl_symbolizer *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->mods[i].path);
        gl_elfsyms_free(&s->mods[i].syms);
    }
    free(s->mods);
    memset(s, 0, sizeof *s);
}

struct phdr_query {
    uintptr_t addr;
    struct gl_module m;
    int found;
};

int gl_phdr_extent(const struct dl_phdr_info *info, uintptr_t addr, uintptr_t *lo, uintptr_t *hi)
{
    int inside = 0;
    *lo = UINTPTR_MAX;
    *hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
        *lo = a < *lo ? a : *lo;
        *hi = b > *hi ? b : *hi;
        if (addr >= a && addr < b)
            inside = 1;
    }
    return inside;
}

static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct phdr_query *q = data;
    uintptr_t lo, hi;
    if (!gl_phdr_extent(info, q->addr, &lo, &hi))
        return 0;
    q->m.lo = lo;
    q->m.hi = hi;
    q->m.bias = info->dlpi_addr;
    const char *name = info->dlpi_name;
    char exe[4096];
    if (!name || !*name) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        name = exe;
    }
    q->m.path = strdup(name);
    q->found = 1;
    return 1;
}

static struct gl_module *module_for(struct gl_symbolizer *s, uintptr_t ip)
{
    for (size_t i = 0; i < s->n; i++)
        if (ip >= s->mods[i].lo && ip < s->mods[i].hi)
            return &s->mods[i];
    struct phdr_query q;
    memset(&q, 0, sizeof q);
    q.addr = ip;
    dl_iterate_phdr(find_module, &q);
    if (!q.found || !q.m.path) {
        free(q.m.path);
        return NULL;
    }
    if (s->n == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 32;
        struct gl_module *nm = realloc(s->mods, ncap * sizeof *nm);
        if (!nm) {
            free(q.m.path);
            return NULL;
        }
        s->mods = nm;
        s->cap = ncap;
    }
    s->mods[s->n] = q.m;
    return &s->mods[s->n++];
}

char *gl_demangle(struct gl_symbolizer *s, const char *name)
{
    if (!name || name[0] != '_' || name[1] != 'Z')
        return NULL;
    if (!s->demangle_tried) {
        s->demangle_tried = 1;
        void *f = dlsym(RTLD_DEFAULT, "__cxa_demangle");
        if (!f) {
            /* A C program has no libstdc++ loaded; load it here, in the
             * writer, only once a mangled name shows up. */
            void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
            if (h)
                f = dlsym(h, "__cxa_demangle");
        }
        *(void **)&s->demangle = f;
    }
    if (!s->demangle)
        return NULL;
    int status = -1;
    char *out = s->demangle(name, NULL, NULL, &status);
    if (status != 0) {
        free(out);
        return NULL;
    }
    // cppcheck-suppress returnDanglingLifetime ; `out` is malloc'd by __cxa_demangle
    return out;
}

void gl_symbolize(struct gl_symbolizer *s, uintptr_t ip, struct gl_frame_info *out)
{
    memset(out, 0, sizeof *out);
    uintptr_t pc = ip ? ip - 1 : ip;
    struct gl_module *m = module_for(s, pc);
    out->module = m;
    out->rel = m ? ip - m->bias : ip;
    if (!s->names)
        return;
    const char *name = NULL;
    if (m) {
        if (!m->syms_tried) {
            m->syms_tried = 1;
            gl_elfsyms_load(&m->syms, m->path);
        }
        name = gl_elfsyms_lookup(&m->syms, pc - m->bias, &out->sym_offset);
        if (name)
            out->sym_offset += 1; /* offset of the return address */
    }
    Dl_info info;
    if (!name && dladdr((void *)pc, &info) && info.dli_sname) {
        name = info.dli_sname;
        out->sym_offset = ip - (uintptr_t)info.dli_saddr;
    }
    if (!name)
        return;
    out->symbol = gl_demangle(s, name);
    if (!out->symbol)
        out->symbol = strdup(name);
}
