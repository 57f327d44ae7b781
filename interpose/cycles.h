/* cycles.h — the only edges by which files of interpose/ and cupti/ use
 * each other's symbols in a cycle, each with its reason. Without these
 * edges the graph of "file A uses a symbol file B defines" has no cycle:
 * scripts/check-cycles.py (run by scripts/lint.sh) fails on any other.
 * Nothing to include: this header is the list.
 *
 * Lazy start-up: the library has no single entry point. Whichever comes
 * first starts it, and what it starts then uses the parts below it.
 *   edge: recorder.c -> lifecycle.c: the first wrapped call starts the
 *         library (gl_init) when no constructor ran before it (a CUDA call
 *         from another library's constructor, or a dlopen'ed gpuledger).
 *   edge: cupti_inject.c -> lifecycle.c: InitializeInjection, called by
 *         the driver through CUDA_INJECTION64_PATH, is the library's entry
 *         when it was not preloaded (gl_init).
 *   edge: recorder.c -> writer.c: the first event starts the writer thread
 *         (gl_writer_start), so that a process that never allocates writes
 *         no database.
 *
 * Hand-out: the wrappers must be findable by the program.
 *   edge: hooks_procaddr.c -> hooks_runtime.c: the hook table holds each
 *         wrapper's address, to hand it out (dlsym, cuGetProcAddress,
 *         cudaGetDriverEntryPoint) in place of the real function.
 *   edge: hooks_procaddr.c -> hooks_driver.c: the same for the driver API.
 *   edge: hooks_procaddr.c -> hooks_array.c: the same for CUDA arrays.
 *   edge: hooks_procaddr.c -> hooks_graph.c: the same for stream capture
 *         and CUDA graphs.
 *   edge: dlsym_tramp.S -> hooks_procaddr.c: our exported dlsym asks the
 *         hook table whether a name is one we wrap; every dlsym/dlopen call
 *         the library makes goes through that interposer too.
 */
