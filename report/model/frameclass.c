/* frameclass.c — see frameclass.h. */
#include "frameclass.h"

#include <stdio.h>
#include <string.h>

/* ---- C++ names ------------------------------------------------------------ */

/* A bounded output: what does not fit is dropped, the text stays
 * NUL-terminated. */
struct sink {
    char *buf;
    size_t sz, n;
};

static void put(struct sink *o, const char *s, size_t len)
{
    for (size_t i = 0; i < len && o->n + 1 < o->sz; i++)
        o->buf[o->n++] = s[i];
    if (o->sz)
        o->buf[o->n < o->sz ? o->n : o->sz - 1] = 0;
}

static void put_c(struct sink *o, char c)
{
    put(o, &c, 1);
}

static int ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

/* The index just past the bracket closing s[i] (one of "<([{"), counting
 * nested brackets of every kind; a '>' inside parentheses (a comparison
 * in a template argument) closes nothing. */
static size_t skip_group(const char *s, size_t i)
{
    char stack[256];
    size_t depth = 0;
    for (; s[i]; i++) {
        char c = s[i];
        if (c == '<' || c == '(' || c == '[' || c == '{') {
            if (c == '<' && depth && stack[depth - 1] == '(')
                continue;
            if (depth == sizeof stack)
                return strlen(s);
            stack[depth++] = c;
        } else if (c == '>' || c == ')' || c == ']' || c == '}') {
            if (c == '>' && (!depth || stack[depth - 1] != '<'))
                continue; /* "->" or a comparison */
            if (depth)
                depth--;
            if (!depth)
                return i + 1;
        }
    }
    return i;
}

static int starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* The operator token after "operator" at s (s[0] is the char after it):
 * its length, copied to o. Conversion operators ("operator bool",
 * "operator c10::ArrayRef<long>") keep their type without its arguments. */
static size_t operator_token(const char *s, struct sink *o)
{
    static const char *const ops[] = {"<=>", "<<=", ">>=", "->*", "()", "[]", "<<", ">>", "<=", ">=", "->", "==",
                                      "!=",  "&&",  "||",  "++",  "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=",
                                      "^=",  "<",   ">",   "+",   "-",  "*",  "/",  "%",  "&",  "|",  "^",  "~",
                                      "!",   "=",   ","};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (starts(s, ops[k])) {
            put(o, ops[k], strlen(ops[k]));
            return strlen(ops[k]);
        }
    if (starts(s, " new") || starts(s, " delete")) {
        size_t len = s[1] == 'n' ? 4 : 7;
        if (starts(s + len, "[]"))
            len += 2;
        put(o, s, len);
        return len;
    }
    if (s[0] == '"') { /* a literal operator: operator""_suffix */
        size_t len = 2;
        while (ident_char(s[len]))
            len++;
        put(o, s, len);
        return len;
    }
    if (s[0] != ' ')
        return 0;
    /* a conversion: the type up to the parameter list */
    size_t i = 0;
    while (s[i] && s[i] != '(') {
        if (s[i] == '<') {
            i = skip_group(s, i);
            continue;
        }
        put_c(o, s[i]);
        i++;
    }
    return i;
}

/* What follows a parameter list and is not part of the name: cv and ref
 * qualifiers, noexcept. Returns the index past them. */
static size_t skip_qualifiers(const char *s, size_t i)
{
    static const char *const quals[] = {" const", " volatile", " &&", " &", " noexcept"};
    for (int again = 1; again;) {
        again = 0;
        for (size_t k = 0; k < sizeof quals / sizeof quals[0]; k++) {
            size_t len = strlen(quals[k]);
            if (!strncmp(s + i, quals[k], len) && !ident_char(s[i + len])) {
                i += len;
                again = 1;
            }
        }
    }
    return i;
}

/* Drop trailing spaces; a split point among them goes back to prev. */
static void trim(struct sink *o, size_t *split, size_t prev)
{
    while (o->n && o->buf[o->n - 1] == ' ')
        o->buf[--o->n] = 0;
    if (*split > o->n)
        *split = prev;
}

char *gl_fc_short_name(const char *symbol, char *out, size_t sz)
{
    struct sink o = {out, sz, 0};
    if (sz)
        out[0] = 0;
    if (!symbol)
        return out;
    if (!strchr(symbol, '(') && !strchr(symbol, '<') && !strchr(symbol, '[')) {
        put(&o, symbol, strlen(symbol));
        return out;
    }
    const char *s = symbol;
    /* split: past the last space between a return type and the name; a
     * space dropped again (before template arguments) gives back the one before */
    size_t i = 0, split = 0, prev_split = 0;
    while (s[i]) {
        char c = s[i];
        if (c == '(' && starts(s + i, "(anonymous namespace)")) {
            put(&o, s + i, 21);
            i += 21;
        } else if (c == '{' && starts(s + i, "{lambda(")) { /* "{lambda(int)#2}" -> "{lambda#2}" */
            put(&o, "{lambda", 7);
            i = skip_group(s, i + 7);
            size_t end = i;
            while (s[end] && s[end] != '}')
                end++;
            put(&o, s + i, end - i + (s[end] == '}'));
            i = end + (s[end] == '}');
        } else if (c == '{') { /* "{unnamed type#1}", "{parm#1}" */
            size_t end = skip_group(s, i);
            put(&o, s + i, end - i);
            i = end;
        } else if (c == 'o' && starts(s + i, "operator") && (i == 0 || !ident_char(s[i - 1])) &&
                   !ident_char(s[i + 8])) {
            put(&o, "operator", 8);
            i += 8;
            i += operator_token(s + i, &o);
        } else if (c == '<') { /* template arguments */
            trim(&o, &split, prev_split);
            i = skip_group(s, i);
        } else if (c == '(') { /* a parameter list (or a decltype's operand) */
            i = skip_qualifiers(s, skip_group(s, i));
        } else if (c == '[') { /* "[abi:cxx11]", " [clone .isra.0]" */
            trim(&o, &split, prev_split);
            i = skip_group(s, i);
        } else if (c == ' ') {
            put_c(&o, c);
            prev_split = split;
            split = o.n;
            i++;
        } else {
            put_c(&o, c);
            i++;
        }
    }
    trim(&o, &split, prev_split);
    if (split && split < o.n) /* "void at::f" -> "at::f"; "non-virtual thunk to X::f" -> "X::f" */
        memmove(out, out + split, o.n - split + 1);
    return out;
}

/* ---- classes ---------------------------------------------------------------- */

static const char *base_name(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path;
}

/* The gpuledger package's own Python files. */
static int gpuledger_file(const char *file)
{
    static const char *const files[] = {"__init__.py", "_lib.py",   "annotate.py", "autoload.py",
                                        "measure.py",  "pool.py",   "shim.py",     "torch_hooks.py",
                                        "retention.py", "retention_hooks.py", "pytest_plugin.py"};
    const char *p = strstr(file, "/gpuledger/");
    if (!p || strchr(p + 11, '/'))
        return 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (!strcmp(p + 11, files[i]))
            return 1;
    return 0;
}

/* The standard library: …/lib/python3.N/… (not its site-packages) or a
 * frozen module. */
static int stdlib_file(const char *file)
{
    if (starts(file, "<frozen "))
        return 1;
    const char *p = strstr(file, "/lib/python");
    if (!p)
        return 0;
    p += 11;
    while ((*p >= '0' && *p <= '9') || *p == '.')
        p++;
    return *p == '/';
}

static int python_class(const char *file)
{
    if (!file)
        return GL_FC_LIBRARY;
    if (gpuledger_file(file))
        return GL_FC_ALLOCATOR;
    if (strstr(file, "/site-packages/") || strstr(file, "/dist-packages/") || stdlib_file(file))
        return GL_FC_LIBRARY;
    return GL_FC_USER;
}

/* The last component of a qualified short name ("a::b::c" -> "c"). */
static const char *last_component(const char *name)
{
    const char *last = name;
    for (const char *p = name; (p = strstr(p, "::")) != NULL; p += 2)
        last = p + 2;
    return last;
}

/* Allocator internals by name: the caching allocator, and the plumbing
 * between an op and the allocator (a tensor's storage, the empty_*
 * factories, TensorIterator's and structured kernels' output allocation). */
static int allocator_symbol(const char *full, const char *name)
{
    static const char *const prefixes[] = {
        "c10::cuda::",           "c10::CachingAllocator::", "c10::CachingDeviceAllocator::",
        "c10::StorageImpl::",    "c10::make_intrusive",     "c10::intrusive_ptr",
        "c10::Allocator::",      "c10::DataPtr::",          "at::detail::empty_",
        "at::TensorBase::",      "at::TensorIteratorBase::", "at::TensorIterator::",
        "at::meta::",            "at::(anonymous namespace)::create_out",
        "at::(anonymous namespace)::resize_out", "at::native::resize_output", "gpuledger_",
        "ffi_call",              "cudart::",                "__cudart"};
    static const char *const last[] = {"set_output_raw_strided", "set_output_strided", "set_output_contiguous"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (starts(name, prefixes[i]))
            return 1;
    const char *tail = last_component(name);
    for (size_t i = 0; i < sizeof last / sizeof last[0]; i++)
        if (!strcmp(tail, last[i]))
            return 1;
    /* the std::function calling a trace tracker (PyTorch's record_trace ->
     * the shim): named by its template arguments only */
    return starts(name, "std::") && strstr(full, "CUDACachingAllocator::TraceEntry") != NULL;
}

static int allocator_module(const char *base)
{
    static const char *const prefixes[] = {"libgpuledger", "gpuledger_torch_shim", "libc10_cuda.so", "libcudart", "libcuda.so",
                                           "libffi.so",    "_ctypes"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (starts(base, prefixes[i]))
            return 1;
    return 0;
}

int gl_fc_classify(const struct gl_fc_frame *f)
{
    if (f->python)
        return python_class(f->file);
    const char *base = base_name(f->module);
    if (base && allocator_module(base))
        return GL_FC_ALLOCATOR;
    if (f->symbol) {
        char name[1024];
        if (allocator_symbol(f->symbol, gl_fc_short_name(f->symbol, name, sizeof name)))
            return GL_FC_ALLOCATOR;
    }
    if (!base || !*base || strstr(base, ".so") || starts(base, "python"))
        return GL_FC_LIBRARY;
    return GL_FC_USER;
}

const char *gl_fc_class_name(int cls)
{
    static const char *const names[] = {[GL_FC_USER] = "user", [GL_FC_LIBRARY] = "library",
                                        [GL_FC_ALLOCATOR] = "allocator"};
    return cls >= 0 && cls <= GL_FC_ALLOCATOR ? names[cls] : "?";
}

/* ---- frames and chains ------------------------------------------------------ */

/* A Python file as people say it: the part after site-packages/ (or
 * dist-packages/, or the standard library's lib/pythonX.Y/); other paths
 * whole. */
static const char *short_py_path(const char *file)
{
    const char *pkg = strstr(file, "/site-packages/"); /* both roots are 15 characters */
    if (!pkg)
        pkg = strstr(file, "/dist-packages/");
    if (pkg)
        return pkg + 15;
    if (stdlib_file(file) && !starts(file, "<frozen ")) {
        const char *p = strstr(file, "/lib/python") + 11;
        return strchr(p, '/') + 1;
    }
    return file;
}

char *gl_fc_frame_text(const struct gl_fc_frame *f, char *out, size_t sz)
{
    if (!sz)
        return out;
    if (f->python && f->symbol && f->file) {
        snprintf(out, sz, "%s (%s:%d)", f->symbol, short_py_path(f->file), f->line);
    } else if (f->symbol) {
        char name[1024];
        gl_fc_short_name(f->symbol, name, sizeof name);
        if (f->file && f->line > 0)
            snprintf(out, sz, "%s (%s:%d)", name, f->file, f->line);
        else
            snprintf(out, sz, "%s", name);
    } else {
        const char *m = base_name(f->module);
        snprintf(out, sz, "%s+0x%llx", m ? m : "?", (unsigned long long)f->offset);
    }
    return out;
}

/* A frame that starts a process or a thread (the C library's and the
 * program's entry, clone), or an unnamed one: as the outermost frame it
 * says nothing about the job. */
static int startup_frame(const struct gl_fc_frame *f)
{
    static const char *const names[] = {"_start", "__libc_start_main", "__libc_start_call_main", "start_thread",
                                        "clone", "__clone", "clone3", "__clone3", "__GI___clone3"};
    if (f->python)
        return 0;
    if (!f->symbol) /* an unnamed frame out there: the C library's, libstdc++'s thread routine */
        return 1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(f->symbol, names[i]))
            return 1;
    return 0;
}

void gl_fc_chain(const struct gl_fc_frame *f, int n, struct gl_fc_chain *out)
{
    int outer = n - 1;
    while (outer > 0 && startup_frame(&f[outer]))
        outer--;
    *out = (struct gl_fc_chain){.op = -1, .user = -1, .outer = n > 0 ? outer : -1, .allocator = 0};
    for (int i = 0; i < n; i++) {
        int cls = gl_fc_classify(&f[i]);
        if (out->op < 0 && cls == GL_FC_ALLOCATOR)
            out->allocator++;
        else if (out->op < 0)
            out->op = i;
        if (out->op >= 0 && cls == GL_FC_USER) {
            out->user = i;
            break;
        }
    }
    /* a library's unnamed frames (stripped internals) say less than the
     * named frame of the same library that follows them */
    while (out->op >= 0 && out->op + 1 < n && out->op != out->user && !f[out->op].symbol && f[out->op].module &&
           f[out->op + 1].module && !strcmp(f[out->op].module, f[out->op + 1].module))
        out->op++;
}

char *gl_fc_chain_text(const struct gl_fc_frame *f, int n, char *out, size_t sz)
{
    struct sink o = {out, sz, 0};
    if (sz)
        out[0] = 0;
    if (n <= 0) {
        put(&o, "(no stack)", 10);
        return out;
    }
    struct gl_fc_chain c;
    gl_fc_chain(f, n, &c);
    int shown[3] = {c.op >= 0 ? c.op : 0, c.user, c.outer}, last = -1;
    for (int k = 0; k < 3; k++) {
        int i = shown[k];
        if (i < 0 || i <= last)
            continue;
        if (last >= 0)
            put(&o, i > last + 1 ? " <- ... <- " : " <- ", i > last + 1 ? 11 : 4);
        char text[1024];
        gl_fc_frame_text(&f[i], text, sizeof text);
        put(&o, text, strlen(text));
        last = i;
    }
    return out;
}
