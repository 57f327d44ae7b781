/* help.h — the help text of the gpuledger command and of each verb. The
 * man page gpuledger(1) and the bash completion are generated from these
 * texts at build time (docgen.c), so they say what --help says. */
#ifndef GL_HELP_H
#define GL_HELP_H

#include <stddef.h>

extern const char gl_usage_main[], gl_usage_run[], gl_usage_report[], gl_usage_leaks[], gl_usage_holes[],
    gl_usage_gate[], gl_usage_diff[], gl_usage_export[], gl_usage_summary[];

/* Every verb and its help text, in the order `gpuledger --help` lists
 * them. */
struct gl_help_page {
    const char *verb, *usage;
};
extern const struct gl_help_page gl_help_pages[];
extern const size_t gl_help_npages;

#endif
