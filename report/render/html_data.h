/* html_data.h — what the interactive HTML report knows about one process,
 * computed before (html_view.h) so that the page stays small and quick
 * whatever the length of the run. The contract with the scripts in report/html/ (version 1), one JSON
 * object per process; times `t` are nanoseconds since the run's first
 * event, bytes and counts are exact integers:
 *
 *   path pid host rank cmdline events dropped truncated span_ns
 *   diagnosis         [{kind, verdict?, device, seq, step, bytes, sentence, evidence: [text], remedy}]
 *                                       the report's findings (diagnosis.h), most important first
 *   categories        [NAME]            category id = index (rule order)
 *   cached_categories [id]              held at exit by design, not leaks
 *   frames  [[symbol, module, file, line, python, offset, class, text]]   frame id = index;
 *           class: 0 user, 1 library, 2 allocator (frameclass.h); text: the frame in a few words,
 *           C++ names shortened
 *   rows    [[category id, stack_id, [frame id, innermost first], label?]]
 *           a ledger row: the stacks with the same chain of frame names
 *           (the report's merge), in one category; row id = index; with a
 *           label, a row no stack made (PyTorch's caching allocator: its
 *           free blocks, its blocks waiting for their streams)
 *   marks   [[seq, t, label]]          ranges [[seq, t, end_seq, end_t, label, depth, tid]]
 *   selected {seq, t, desc} | null     the moment given with --at
 *   devices [{ device, peak: [seq, t, bytes], peak_step (null: no steps), end_bytes, buckets,
 *      moments [[seq, t, bytes]]       the lowest and highest point of each
 *                                      of `buckets` equal slices of time,
 *                                      the peak, each OOM, each mark, the
 *                                      --at moment and the end, in order
 *      deltas  [[row, dbytes, dcount, ...]]  per moment: how each row's
 *                                      live bytes and count changed since
 *                                      the moment before (so the ledger at
 *                                      any moment is the sum up to it)
 *      ooms    [{seq, t, step, api, size, result, live, frames, ledger: [[row, bytes, count]]}]
 *                                      one per failure (its segment retries left out)
 *      leaks   [[row, bytes, count, first_t, last_t, held]]   leak_bytes cached_bytes
 *                                      (times null for a row no stack made;
 *                                      held: by design, not a leak — a cache,
 *                                      module globals, a tagged tensor)
 *      outside_api? {source, peak, peak_sampled?, end, end_process}
 *                                      schema 2: bytes outside any allocation
 *                                      API at the peak and at the end, the
 *                                      process's own figure then; peak_sampled:
 *                                      "sampled 3.2 ms after it" where the
 *                                      sample nearest the peak is not at it
 *      growth  {steps, by_marks, rows: [[row, growth, [bytes per step]]]} }]
 *   holes   [{label, device, sampled_reserved, worst,
 *             series: [[seq, t, reserved, live, free, largest_free, holes]]}]
 *
 * The ledger at a moment equals `gpuledger report --at '#seq' --format json`
 * (rows merged by frame names, the same categories). */
#ifndef GL_HTML_DATA_H
#define GL_HTML_DATA_H

#include <stdio.h>

#include "html_view.h"

/* Write the JSON object of one process (its view: html_view.h). */
void gl_html_data_write(FILE *f, const struct gl_html_view *v);

#endif
