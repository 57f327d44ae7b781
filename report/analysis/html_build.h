/* html_build.h — the steps that build the HTML report's view (html_view.h),
 * shared by html_rows.c, html_timeline.c and view_html.c; nothing outside
 * analysis/ calls them. */
#ifndef GL_HTML_BUILD_H
#define GL_HTML_BUILD_H

#include "html_view.h"

/* The id of a category (rule order first), of a frame, of the row of
 * (stack's chain of names, category) or of what a row no stack made is;
 * the last two: -1 on out of memory. */
int gl_html_category(struct gl_html_view *v, const char *name);
int64_t gl_html_frame(struct gl_html_view *v, const struct gl_frame *fr);
int64_t gl_html_row(struct gl_html_view *v, int64_t stack_id, const char *category, const char *what);
/* The row of every item of the ledger (v->alloc_row), and the rows of the
 * caching allocator's free and pending blocks. 0, or -1. */
int gl_html_rows_of_allocs(struct gl_html_view *v);
void gl_html_tables_free(struct gl_html_tables *t);

/* Every device's timeline (v->devs[k].tl), in as many time slices as fit
 * the budget of delta entries (v->buckets says how many). 0, or -1. */
int gl_html_timelines(struct gl_html_view *v);
void gl_html_timeline_free(struct gl_html_timeline *tl);

#endif
