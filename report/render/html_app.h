/* html_app.h — the interactive HTML report: one self-contained page (its
 * CSS and JavaScript from report/html/, embedded at build time, and the
 * runs' data as JSON, html_data.h), no network, opens from disk. */
#ifndef GL_HTML_APP_H
#define GL_HTML_APP_H

#include <stdio.h>

#include "html_data.h"

/* at[i]: the --at moment of runs[i], or NULL. 0, or -1 (out of memory). */
int gl_render_html_app(FILE *f, struct gl_run **runs, size_t n, const struct gl_moment *const *at,
                       const struct gl_html_opts *o);

#endif
