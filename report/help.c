/* help.c — the help text of the gpuledger command and each verb (--help,
 * and on stderr after a usage error), in one place; the man page and the
 * bash completion are generated from it (docgen.c). */
#include "help.h"

const char gl_usage_main[] =
    "usage: gpuledger <command> [options] [args]\n"
    "\n"
    "GPU memory profiler: records every device-memory allocation, free, map and\n"
    "pool operation of a CUDA program with its call stack into SQLite.\n"
    "\n"
    "commands:\n"
    "  run [-o PATTERN] [--] CMD [ARGS...]   profile a program (see 'gpuledger run --help')\n"
    "  report DB...                          peak ledger, categories, timeline, OOMs, holes\n"
    "                                        (--format text|json|html)\n"
    "  leaks DB...                           leak chains; --steps: memory growing every step\n"
    "  holes DB...                           fragmentation of pools and reserved ranges\n"
    "  gate --max-leak-bytes N DB...         CI gate: exit 1 when a limit is broken\n"
    "  diff A.db B.db                        what grew between two runs, by stack\n"
    "  export --format FORMAT DB             folded, perfetto, memory_viz, speedscope, csv\n"
    "  summary DB...                         one line per database: events, peak, unfreed\n"
    "\n"
    "options:\n"
    "  -h, --help      this text\n"
    "  -V, --version   print the version, the database schema version and the\n"
    "                  CUDA and CUPTI versions gpuledger was built against\n"
    "\n"
    "Each command takes --help. The database schema is documented in README.md.\n";

const char gl_usage_run[] =
    "usage: gpuledger run [options] [--] CMD [ARGS...]\n"
    "\n"
    "Run CMD with gpuledger recording its GPU memory operations. Every process\n"
    "of CMD that uses CUDA writes its own SQLite database.\n"
    "\n"
    "options:\n"
    "  -o, --output PATTERN  database path; %p pid, %h host, %r rank (RANK or\n"
    "                        LOCAL_RANK, else 0), %% a percent sign; a\n"
    "                        directory: DIR/gpuledger-PID.db inside it\n"
    "                        (default: gpuledger-%p.db; env GPULEDGER_OUTPUT)\n"
    "  -d, --depth N         native stack frames per event, 0-256 (default 48)\n"
    "      --python MODE     on (default): Python frames (CPython 3.9-3.13) with the\n"
    "                        native frames above them; mixed: also every native\n"
    "                        frame between them (slower); only: Python frames\n"
    "                        alone where there are any (cheapest; what PyTorch's\n"
    "                        stacks=\"python\" keeps); off: native only\n"
    "      --no-cupti        do not use CUPTI (keeps it free for other profilers)\n"
    "      --torch MODE      segments (default): leave PyTorch's caching allocator\n"
    "                        alone, the ledger shows its segments; blocks: also\n"
    "                        every tensor block inside them, with its stack and\n"
    "                        category (attaches to the allocator; builds a small\n"
    "                        C++ shim against your torch once, with g++);\n"
    "                        tensors: PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync,\n"
    "                        every tensor a CUDA allocation\n"
    "  -q, --quiet           no summary line at the end\n"
    "  -h, --help            this text\n"
    "\n"
    "The exit status is CMD's (128+N if it was killed by signal N; 127 if it\n"
    "could not be run). Variables: see README.md (GPULEDGER_*).\n";

const char gl_usage_report[] =
    "usage: gpuledger report [options] DB...\n"
    "\n"
    "For each process and device: the peak of live device memory and when it\n"
    "happened, what was live then (the peak ledger) by stack and by category,\n"
    "the timeline, calls per API, dropped events, out-of-memory failures with\n"
    "what was live at that instant, and pool hole density. Several databases\n"
    "(one per rank) give one section each and a total.\n"
    "\n"
    "options:\n"
    "  --format text|json|html   (default text). html: one self-contained page to\n"
    "                            explore in a browser (opens from disk, fetches\n"
    "                            nothing): the timeline by category, the ledger\n"
    "                            at any moment you click, a flame graph, leaks,\n"
    "                            growth per step, OOMs and pool holes\n"
    "  --at WHEN                 the ledger at that moment instead of at the peak\n"
    "                            (html: the page opens there). WHEN is\n"
    "                              #N          right after event N\n"
    "                              3.2s, 150ms, 20us\n"
    "                                          that long after the run's first event\n"
    "                              oom, oom@N  just before the first (Nth) OOM\n"
    "                              LABEL, LABEL@N\n"
    "                                          a mark with that label (its Nth), or\n"
    "                                          the highest point inside a range\n"
    "                              label:TEXT  TEXT as a label, whatever it looks like\n"
    "  -o, --output FILE         write there instead of stdout\n"
    "  --device N                only device N\n"
    "  --top K                   ledger rows per device (default 10)\n"
    "  --rules FILE              category rules (default: built in; see README)\n"
    "  -h, --help\n";

const char gl_usage_leaks[] =
    "usage: gpuledger leaks [options] DB...\n"
    "\n"
    "options:\n"
    "  --min-bytes N       leave out chains smaller than N (K/M/G suffixes)\n"
    "  --lifetime-ms T     also allocations that lived at least T ms\n"
    "  --steps[=N]         memory that grows every step: stacks whose live bytes\n"
    "                      never fall and rise in most of N slices of the run\n"
    "                      with equal numbers of allocations (default 10)\n"
    "  --device N          only device N\n"
    "  --top K             chains shown (default 20)\n"
    "  --rules FILE        category rules\n"
    "  --format text|json  (default text)\n"
    "  -h, --help\n";

const char gl_usage_holes[] =
    "usage: gpuledger holes [--pool P] [--series] [--format text|json] DB...\n"
    "\n"
    "For each stream-ordered pool and each reserved virtual range: reserved,\n"
    "live and free bytes, the largest free block, the number of holes and the\n"
    "external fragmentation ratio (largest free / total free: 1.0 = all free\n"
    "space in one block), at the worst moment (most free bytes) and at the end.\n"
    "  --pool P     only the pool (or reservation address) P (decimal or 0x...;\n"
    "               0: the default pool)\n"
    "  --series     also print the time series (64 samples)\n";

const char gl_usage_gate[] =
    "usage: gpuledger gate --max-leak-bytes N [options] DB...\n"
    "\n"
    "Fails (exit 1) when the device memory never freed, summed over the\n"
    "databases, exceeds N, or any process's peak exceeds --max-peak-bytes.\n"
    "Memory held by a caching allocator at exit (PyTorch segments) is not a\n"
    "leak unless --count-cached is given.\n"
    "\n"
    "options:\n"
    "  --max-leak-bytes N    allowed unfreed bytes (K/M/G suffixes), required\n"
    "  --max-peak-bytes M    allowed peak per process and device\n"
    "  --ignore REGEX        leave out chains with a frame (symbol, module or\n"
    "                        file) matching REGEX; repeatable\n"
    "  --count-cached        count caching-allocator segments as leaks\n"
    "  --junit FILE          write a JUnit XML report\n"
    "  --rules FILE          category rules\n"
    "exit status: 0 pass, 1 a limit is broken, 2 bad usage or bad input\n";

const char gl_usage_diff[] =
    "usage: gpuledger diff [--top K] A.db B.db\n"
    "       gpuledger diff --at WHEN [--at WHEN2] [--top K] A.db [B.db]\n"
    "\n"
    "Peak and never-freed bytes of B against A, by stack (matched by frame names), biggest change first.\n"
    "\n"
    "With --at, the ledgers at two moments instead of the peaks (every device):\n"
    "  --at A --at B DB       moment A against moment B of one run\n"
    "  --at A --at B A.db B.db  A in the first run against B in the second\n"
    "  --at W A.db B.db       the same moment W (e.g. 'step 10') in both runs\n"
    "WHEN as for report --at: #N, 3.2s, oom, oom@N, LABEL, LABEL@N, label:TEXT.\n";

const char gl_usage_export[] =
    "usage: gpuledger export --format FORMAT [--what peak|leaks|allocs] [--rules FILE]\n"
    "                        [--max-entries N] [-o FILE] DB\n"
    "\n"
    "  folded      one line per stack, root first, then bytes: for flamegraph.pl,\n"
    "              speedscope, inferno. --what: live at the peak (default), never\n"
    "              freed, or everything ever allocated\n"
    "  perfetto    Chrome trace-event JSON (ui.perfetto.dev): live bytes per device\n"
    "              and per category as counter tracks (categories: --rules), marks\n"
    "              and ranges as slices, failed allocations as instants\n"
    "  memory_viz  PyTorch's memory snapshot pickle, for pytorch.org/memory_viz and\n"
    "              python -m torch.cuda._memory_viz trace_plot|segment_plot FILE:\n"
    "              each allocation a segment and a block, with its stack.\n"
    "              --max-entries N keeps each device's last N trace entries\n"
    "              (PyTorch's own default is 100000); binary, so -o FILE\n"
    "  speedscope  speedscope's JSON (www.speedscope.app): what was live at each\n"
    "              device's peak and what was never freed, as profiles in bytes\n"
    "  csv         one row per allocation; --what: all of them (default), never\n"
    "              freed, or live at the peak\n"
    "--what applies to folded and csv only.\n";

const char gl_usage_summary[] =
    "usage: gpuledger summary DB...\n"
    "\n"
    "One line per database: events, peak device bytes,\n"
    "allocations never freed, out-of-memory failures, dropped events.\n";

const struct gl_help_page gl_help_pages[] = {
    {"run", gl_usage_run},     {"report", gl_usage_report}, {"leaks", gl_usage_leaks},
    {"holes", gl_usage_holes}, {"gate", gl_usage_gate},     {"diff", gl_usage_diff},
    {"export", gl_usage_export}, {"summary", gl_usage_summary},
};
const size_t gl_help_npages = sizeof gl_help_pages / sizeof gl_help_pages[0];
