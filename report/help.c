/* help.c — the help text of the gpuledger command and each verb (--help,
 * and on stderr after a usage error), in one place. */
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
    "  -V, --version   print the version\n"
    "\n"
    "Each command takes --help. The database schema is documented in README.md.\n";

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
    "  --pool P     only the pool (or reservation address) P (decimal or 0x...)\n"
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
    "\n"
    "Peak and never-freed bytes of B against A, by stack (matched by frame names), biggest change first.\n";

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
    "  csv         one row per allocation\n";

const char gl_usage_summary[] =
    "usage: gpuledger summary DB...\n"
    "\n"
    "One line per database: events, peak device bytes,\n"
    "allocations never freed, out-of-memory failures, dropped events.\n";
