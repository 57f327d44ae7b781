/* html_app.h — the interactive HTML report: one self-contained page (its
 * CSS and JavaScript from report/html/, embedded at build time, and the
 * runs' data as JSON, html_data.h), no network, opens from disk. */
#ifndef GL_HTML_APP_H
#define GL_HTML_APP_H

#include <stdio.h>

#include "html_data.h"

/* The page around the runs' data: begin (the title names a lone run's
 * command: `lone`, NULL with several), each process's view in turn (i:
 * its index), end. */
void gl_render_html_begin(FILE *f, const struct gl_run *lone);
void gl_render_html_process(FILE *f, const struct gl_html_view *v, size_t i);
void gl_render_html_end(FILE *f);

#endif
