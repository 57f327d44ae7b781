/* frames.c — a run's stacks as a view uses them (see frames.h): each
 * stack the run loaded, looked up once; frames, their names and
 * signatures, and which frames say who wanted the memory. */
#include "frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "u64map.h"

void gl_stacks_init(struct gl_stacks *s, struct gl_run *run)
{
    memset(s, 0, sizeof *s);
    s->run = run;
    s->index = calloc(1, sizeof(struct gl_u64map));
    if (s->index)
        gl_u64map_init(s->index);
}

void gl_stacks_free(struct gl_stacks *s)
{
    free(s->v); /* the frames are the run's */
    if (s->index) {
        gl_u64map_free(s->index);
        free(s->index);
    }
    memset(s, 0, sizeof *s);
}

const struct gl_stack *gl_stack_get(struct gl_stacks *s, int64_t id)
{
    static const struct gl_stack empty = {0, NULL, NULL, 0, NULL};
    uint64_t pos;
    if (id <= 0 || !s->index)
        return &empty;
    if (gl_u64map_get(s->index, (uint64_t)id, &pos))
        return &s->v[pos];
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 256;
        struct gl_stack *nv = realloc(s->v, nc * sizeof *nv);
        if (!nv)
            return &empty;
        s->v = nv;
        s->cap = nc;
    }
    struct gl_stack *st = &s->v[s->n];
    memset(st, 0, sizeof *st);
    const struct gl_stack *loaded = gl_run_stack(s->run, id);
    if (loaded)
        *st = *loaded;
    st->id = id;
    gl_u64map_put(s->index, (uint64_t)id, s->n);
    return &s->v[s->n++];
}

/* A Python file as people say it: the part after site-packages/ (or
 * dist-packages/, or the standard library's lib/pythonX.Y/); other paths
 * whole. */
static const char *short_py_path(const char *file)
{
    static const char *const roots[] = {"/site-packages/", "/dist-packages/"};
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        const char *p = strstr(file, roots[i]);
        if (p)
            return p + strlen(roots[i]);
    }
    const char *p = strstr(file, "/lib/python3");
    if (p && (p = strchr(p + 12, '/')) != NULL)
        return p + 1;
    return file;
}

const char *gl_frame_name(const struct gl_frame *f, char *buf, size_t sz)
{
    if (f->python && f->symbol && f->file)
        snprintf(buf, sz, "%s (%s:%d)", f->symbol, short_py_path(f->file), f->line);
    else if (f->symbol && f->file && f->line > 0)
        snprintf(buf, sz, "%s (%s:%d)", f->symbol, f->file, f->line);
    else if (f->symbol)
        snprintf(buf, sz, "%s", f->symbol);
    else {
        const char *m = f->module ? strrchr(f->module, '/') : NULL;
        snprintf(buf, sz, "%s+0x%llx", m ? m + 1 : f->module ? f->module : "?", (unsigned long long)f->offset);
    }
    return buf;
}

void gl_stack_signature(const struct gl_stack *st, char *buf, size_t sz)
{
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < st->n && n + 1 < sz; i++) {
        char name[512];
        const struct gl_frame *f = gl_stack_frame(st, i);
        /* symbols (with file:line where known) survive rebuilds and ASLR;
         * call-site offsets do not, and would split an unrolled loop */
        if (f->symbol && f->line > 0)
            snprintf(name, sizeof name, "%s:%d", f->symbol, f->line);
        else if (f->symbol)
            snprintf(name, sizeof name, "%s", f->symbol);
        else
            gl_frame_name(f, name, sizeof name);
        int w = snprintf(buf + n, sz - n, "%s%s", i ? ";" : "", name);
        if (w < 0)
            break;
        n += (size_t)w;
    }
    if (!st->n)
        snprintf(buf, sz, "(no stack)");
}

static int same_text(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* The same frame as far as a reader can tell (what gl_frame_name shows). */
static int same_frame(const struct gl_frame *a, const struct gl_frame *b)
{
    if (!same_text(a->symbol, b->symbol) || a->python != b->python)
        return 0;
    if (a->symbol)
        return same_text(a->file, b->file) && a->line == b->line;
    return same_text(a->module, b->module) && a->offset == b->offset;
}

void gl_stacks_distinct(const struct gl_stack *const *st, size_t n, int *at)
{
    for (size_t i = 0; i < n; i++) {
        int common = 0; /* the longest run of equal innermost frames shared with another row */
        for (size_t j = 0; j < n; j++) {
            int k = 0;
            while (j != i && k < st[i]->n && k < st[j]->n && same_frame(gl_stack_frame(st[i], k), gl_stack_frame(st[j], k)))
                k++;
            if (j != i && k > common)
                common = k;
        }
        at[i] = common < st[i]->n ? common : -1;
    }
}

const char *gl_frame_key(const struct gl_frame *f, char *buf, size_t sz)
{
    snprintf(buf, sz, "%s\x1f%s\x1f%s\x1f%d\x1f%d\x1f%llx", f->symbol ? f->symbol : "", f->module ? f->module : "",
             f->file ? f->file : "", f->line, f->python, f->symbol ? 0ULL : (unsigned long long)f->offset);
    return buf;
}

int gl_stack_matches(const struct gl_stack *st, const regex_t *re)
{
    for (int i = 0; i < st->n; i++) {
        const struct gl_frame *f = gl_stack_frame(st, i);
        if ((f->symbol && !regexec(re, f->symbol, 0, NULL, 0)) ||
            (f->module && !regexec(re, f->module, 0, NULL, 0)) || (f->file && !regexec(re, f->file, 0, NULL, 0)))
            return 1;
    }
    return 0;
}

/* Frames of allocator plumbing that sit above every framework allocation
 * and say nothing about who wanted the memory; and, above a call of the
 * gpuledger Python package (gpuledger.Pool), the package's own lines and
 * the ctypes call into the library. */
static int plumbing(const struct gl_frame *f)
{
    static const char *const prefixes[] = {"c10::cuda::CUDACachingAllocator", "c10::cuda::",
                                           "c10::StorageImpl", "c10::make_intrusive", "at::detail::empty",
                                           "at::TensorBase::", "c10::intrusive_ptr", "c10::Allocator", "ffi_call"};
    if (f->python)
        return f->file && strstr(f->file, "/gpuledger/") != NULL;
    if (f->module && (strstr(f->module, "/libffi.so") || strstr(f->module, "/_ctypes")))
        return 1;
    if (!f->symbol)
        return 0;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (!strncmp(f->symbol, prefixes[i], strlen(prefixes[i])))
            return 1;
    return 0;
}

int gl_first_interesting(const struct gl_stack *st)
{
    int k = 0;
    /* allocator plumbing, and unnamed frames inside a library (stripped
     * internals) when a named frame follows */
    while (k + 1 < st->n && (plumbing(gl_stack_frame(st, k)) || (!gl_stack_frame(st, k)->symbol && gl_stack_frame(st, k + 1)->module &&
                                                     gl_stack_frame(st, k)->module && !strcmp(gl_stack_frame(st, k)->module, gl_stack_frame(st, k + 1)->module))))
        k++;
    return k;
}

int gl_first_python(const struct gl_stack *st, int from)
{
    for (int i = from; i < st->n; i++)
        if (gl_stack_frame(st, i)->python)
            return i;
    return -1;
}

const char *gl_stack_where(const struct gl_stack *st, char *buf, size_t sz)
{
    if (!st->n) {
        snprintf(buf, sz, "(no stack)");
        return buf;
    }
    int k = gl_first_interesting(st), py = gl_first_python(st, k);
    return gl_frame_name(gl_stack_frame(st, py >= 0 ? py : k), buf, sz);
}
