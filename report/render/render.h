/* render.h — the renderers of the verbs' views: each view as text and as
 * JSON (through the one emitter, json.h). The report's dossier has its own
 * in dossier.h. */
#ifndef GL_RENDER_H
#define GL_RENDER_H

#include <stdio.h>

#include "analysis.h"
#include "dossier.h"
#include "export_views.h"
#include "json.h"
#include "model.h"
#include "views.h"

/* holes: one process's pools and reserved ranges (nheaps: its heaps, printed
 * after by render_heaps.h); the JSON leaves the process object open */
void gl_render_holes_text(FILE *f, const struct gl_run *r, const struct gl_pool_holes *h, size_t nh, size_t nheaps,
                          int series);
void gl_render_holes_json(struct gl_json *j, const struct gl_run *r, const struct gl_pool_holes *h, size_t nh);
/* The figures of a hole statistic as members (reserved, live, free,
 * largest_free, external_fragmentation, largest_free_ratio, holes, and where
 * known unused_bytes and internal_fragmentation). */
void gl_jw_hole_figures(struct gl_json *j, const struct gl_hole_stat *h);

/* leaks: one process's chains and growing stacks (top: chains shown) */
void gl_render_leaks_text(FILE *f, struct gl_leaks_view *v, int top);
void gl_render_leaks_json(struct gl_json *j, struct gl_leaks_view *v);
/* One recorded retention path (model_retention.h) as a JSON object. */
struct gl_retention_path;
void gl_retention_path_json(struct gl_json *j, const struct gl_retention_path *p);

/* diff: two runs by stack (top: rows per section) */
void gl_render_diff_text(FILE *f, struct gl_diff_view *v, int top);

/* gate: the verdict and the offending chains; JUnit XML */
void gl_render_gate_text(FILE *f, const struct gl_gate_view *v);
void gl_render_gate_junit(FILE *f, const struct gl_gate_view *v);
/* A run's counted chains as the text lines both print, while the run is
 * loaded (malloc'd; NULL out of memory). */
char *gl_render_gate_chains(struct gl_gate_check *g);

/* export: folded stacks and CSV of the allocations (what: "peak" live at
 * the peak, "leaks" never freed, "allocs" all; export.c); a Perfetto /
 * Chrome trace with a counter track per device and per category
 * (export_perfetto.c: 0, or -1 out of memory); PyTorch's memory snapshot
 * pickle (export_memviz.c); speedscope's profiles (export_speedscope.c).
 * Each writes its view (export_views.h). */
/* fold: allocator internals as one "[allocator]" frame (--fold-allocator) */
void gl_export_folded(FILE *f, struct gl_folded_view *v, int fold);
void gl_export_csv(FILE *f, struct gl_csv_view *v);
int gl_export_perfetto(FILE *f, struct gl_perfetto_view *v);
void gl_export_memviz(FILE *f, struct gl_memviz_view *v);
void gl_export_speedscope(FILE *f, const struct gl_speedscope_view *v);


/* summary: "gpuledger: DB: N events, peak ..." on f (path as named). */
void gl_render_summary(FILE *f, const char *path, const struct gl_summary_view *v);

#endif
