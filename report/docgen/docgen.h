/* docgen.h — the build-time generator of the man page gpuledger(1) and the
 * bash completion (docgen.c, docgen_man.c, docgen_bash.c). Both are made
 * from the help texts (help.c) and the variables' table
 * (interpose/config.c), the sources `gpuledger --help` and the library
 * read, so the generated files cannot disagree with the program. */
#ifndef GL_DOCGEN_H
#define GL_DOCGEN_H

#include <stdio.h>

#include "help.h"

/* An option as a help text shows it: "-o, --output FILE", "--steps[=N]",
 * "--format text|json|html". */
struct gl_doc_opt {
    char name[40];   /* "--output" */
    char alias[8];   /* "-o", or "" */
    char arg[40];    /* "FILE", "N", or "" (no argument) */
    char words[120]; /* "text json html": the words it takes, or "" */
    int optional;    /* --steps[=N]: the argument is optional */
};

/* The options a help text shows (each once, in order of appearance): the
 * option lines of its body and the bracketed ones of its usage line.
 * Returns how many were stored (at most max). */
size_t gl_doc_options(const char *usage, struct gl_doc_opt *out, size_t max);

int gl_docgen_man(FILE *f, const char *version, const char *libdir, const char *pydir);
int gl_docgen_bash(FILE *f);

#endif
