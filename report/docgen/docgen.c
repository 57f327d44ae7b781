/* docgen.c — run at build time: `docgen man OUT VERSION LIBDIR PYDIR`
 * writes the man page gpuledger(1), `docgen bash OUT` the bash completion.
 * Also the reading of options out of a help text that both use. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "docgen.h"

/* At p, an option ("-x", "--name")? Its length, or 0. */
static size_t opt_len(const char *p)
{
    if (p[0] != '-')
        return 0;
    if (p[1] != '-')
        return isalpha((unsigned char)p[1]) && !isalnum((unsigned char)p[2]) && p[2] != '-' ? 2 : 0;
    if (!isalpha((unsigned char)p[2]))
        return 0;
    size_t n = 2;
    while (isalnum((unsigned char)p[n]) || p[n] == '-')
        n++;
    return n;
}

static void copy(char *dst, size_t sz, const char *src, size_t n)
{
    if (n >= sz)
        n = sz - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

/* The argument after an option at p (just past its name): "[=N]", or one
 * space and a word (an argument is one space away; a description two). */
static const char *take_arg(const char *p, struct gl_doc_opt *o)
{
    if (p[0] == '[' && p[1] == '=') {
        const char *e = strchr(p, ']');
        if (!e)
            return p;
        copy(o->arg, sizeof o->arg, p + 2, (size_t)(e - p - 2));
        o->optional = 1;
        return e + 1;
    }
    if (p[0] != ' ' || p[1] == ' ' || p[1] == '-' || p[1] == '[' || !p[1])
        return p;
    size_t n = strcspn(p + 1, " ],\n");
    const char *w = p + 1;
    int upper = isupper((unsigned char)w[0]), bar = memchr(w, '|', n) != NULL;
    if (!upper && !bar)
        return p; /* prose */
    copy(o->arg, sizeof o->arg, w, n);
    if (bar) {
        copy(o->words, sizeof o->words, w, n);
        for (char *c = o->words; *c; c++)
            if (*c == '|')
                *c = ' ';
    }
    return w + n;
}

static size_t add(struct gl_doc_opt *out, size_t n, size_t max, const struct gl_doc_opt *o)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(out[i].name, o->name)) {
            if (!out[i].arg[0])
                out[i] = *o;
            return n;
        }
    if (n < max)
        out[n++] = *o;
    return n;
}

/* One option at p: its name, its short alias ("-o, --output"), its
 * argument. Returns where it ends; *o is filled. */
static const char *take_option(const char *p, struct gl_doc_opt *o)
{
    memset(o, 0, sizeof *o);
    size_t n = opt_len(p);
    if (n == 2 && p[2] == ',' && p[3] == ' ' && opt_len(p + 4) > 2) {
        copy(o->alias, sizeof o->alias, p, 2);
        p += 4;
        n = opt_len(p);
    }
    copy(o->name, sizeof o->name, p, n);
    return take_arg(p + n, o);
}

/* The words of a list in the body ("  folded      one line per ..."): what
 * an option whose argument is FORMAT takes when its usage does not spell
 * them out. */
static void listed_words(const char *usage, char *words, size_t sz)
{
    for (const char *line = usage; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        size_t n = 0;
        if (line[0] != ' ' || line[1] != ' ' || !islower((unsigned char)line[2]))
            continue;
        while (islower((unsigned char)line[2 + n]) || isdigit((unsigned char)line[2 + n]) || line[2 + n] == '_')
            n++;
        if (line[2 + n] != ' ' || line[3 + n] != ' ')
            continue;
        size_t used = strlen(words);
        snprintf(words + used, sz - used, "%s%.*s", used ? " " : "", (int)n, line + 2);
    }
}

size_t gl_doc_options(const char *usage, struct gl_doc_opt *out, size_t max)
{
    size_t n = 0;
    int first = 1;
    for (const char *line = usage; *line;) {
        const char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        struct gl_doc_opt o;
        if (first) { /* the usage lines (to the first blank one): every option on them */
            for (const char *p = line + 1; p < end; p++)
                if ((p[-1] == ' ' || p[-1] == '[') && opt_len(p)) {
                    p = take_option(p, &o) - 1;
                    n = add(out, n, max, &o);
                }
        } else {
            const char *p = line;
            while (*p == ' ')
                p++;
            if (p > line && opt_len(p)) {
                take_option(p, &o);
                n = add(out, n, max, &o);
            }
        }
        first = first && end > line;
        line = *end ? end + 1 : end;
    }
    for (size_t i = 0; i < n; i++)
        if (!strcmp(out[i].arg, "FORMAT") && !out[i].words[0])
            listed_words(usage, out[i].words, sizeof out[i].words);
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "man") && strcmp(argv[1], "bash")) || (!strcmp(argv[1], "man") && argc != 6)) {
        fputs("usage: docgen man OUT VERSION LIBDIR PYDIR | docgen bash OUT\n", stderr);
        return 2;
    }
    FILE *f = fopen(argv[2], "w");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    int rc = !strcmp(argv[1], "man") ? gl_docgen_man(f, argv[3], argv[4], argv[5]) : gl_docgen_bash(f);
    if (fclose(f) != 0 || rc != 0) {
        fprintf(stderr, "docgen: writing %s failed\n", argv[2]);
        return 1;
    }
    return 0;
}
