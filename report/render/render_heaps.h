/* render_heaps.h — the heaps of a program's own pools (heaps.h) in text
 * and JSON, shared by `holes`, `report` and `leaks` (the HTML report takes
 * them from html_data.c). */
#ifndef GL_RENDER_HEAPS_H
#define GL_RENDER_HEAPS_H

#include <stdio.h>

#include "heaps.h"
#include "json.h"

/* series: every point of the time series too; with_ledgers: the live
 * regions at the peak by stack. `top`: stacks shown per list. */
void gl_heaps_text(FILE *f, struct gl_heaps_view *hv, int top, int series, int with_ledgers);
/* An array of heaps as the member `key` (see docs/schema.md, the JSON contract). */
void gl_heaps_json(struct gl_json *j, const char *key, struct gl_heaps_view *hv, int top);
/* Only the regions never given back, per heap that has any (`leaks`). */
void gl_heap_leaks_text(FILE *f, struct gl_heaps_view *hv, int top);
void gl_heap_leaks_json(struct gl_json *j, const char *key, struct gl_heaps_view *hv, int top);

#endif
