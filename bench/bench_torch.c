/* bench_torch.c — what the tensor ledger costs a tensor alloc+free pair,
 * measured inside one process without torch or a GPU: the stand-in caching
 * allocator (tests/progs/fakealloc.c behind the stand-in libc10_cuda of
 * tests/torchstub) reports every block to the real C++ shim
 * (python/gpuledger/torch_shim.cpp, built here against the stand-in header
 * as gpuledger_torch_shim.so), which calls gpuledger_torch_event as under
 * PyTorch. Rounds alternate recording off (the tracker attached, paused)
 * and on (gpuledger_set_recording), as scripts/gpu/torch_alloc_ab.py does on
 * the GPU machine.
 *
 *   gpuledger run -q --torch segments -- bench_torch [--pairs N] [--rounds R]
 *                [--frames F] [--loop python|native|both] [--burst] [--work NS]
 *   bench_torch --count python|native on|off N    (for callgrind-torch.sh)
 *
 * python: an embedded CPython runs `t = glbench.alloc(); del t` (allocated
 * inside a builtin F native frames above the allocator, freed from the
 * decref in the interpreter loop, as torch.empty and del are); native: a C
 * loop F frames down. Sustained by default (like the H200 loop: what the
 * writer cannot keep up with comes back as waits); --burst times bursts of
 * 2,048 pairs with a pause for the writer between them (the calling
 * thread's own cost). Prints one Markdown row per loop: wall-clock ns per
 * pair off and on (medians), the calling thread's added CPU time, and the
 * writer thread's CPU time per recorded pair. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <time.h>

#include "fakealloc.h"
#include "gpuledger.h"

#include "bench_stats.h"

void stub_install_bridge(int expandable, uint64_t max_split); /* tests/torchstub/stub_bridge.cpp */

static long pairs = 20000;
static int rounds = 9, frames = 10, burst;
static long work_ns; /* --work: the framework's own time per pair, spent spinning */
static void (*set_recording)(int);

static double clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

/* CPU time of gpuledger's writer thread so far (ns; 0 if not found): what
 * recording costs beside the calling thread, from /proc schedstat. */
static double writer_cpu_ns(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    double ns = 0;
    while (d && (e = readdir(d)) != NULL) {
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        int got = fgets(comm, sizeof comm, f) != NULL;
        fclose(f);
        if (!got || strncmp(comm, "gpuledger-wr", 12))
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        if ((f = fopen(path, "r")) != NULL) {
            unsigned long long run = 0;
            if (fscanf(f, "%llu", &run) == 1)
                ns = (double)run;
            fclose(f);
        }
    }
    if (d)
        closedir(d);
    return ns;
}

/* ---- the allocator, `frames` native frames down (at::empty's dispatch,
 * a tensor's release chain) ----------------------------------------------- */

static volatile int sink;

/* --work NS: what the framework does around each tensor besides allocating
 * it (an op's dispatch, its kernel launch: ~4 us a pair on the H200 loop),
 * so that the writer keeps pace as it does there instead of setting it */
static void framework_work(void)
{
    if (work_ns <= 0)
        return;
    double until = now_ns() + (double)work_ns;
    while (now_ns() < until)
        ;
}

__attribute__((noinline)) static uint64_t alloc_down(int d)
{
    if (d <= 0) {
        framework_work();
        return fa_malloc(4096, 0, NULL);
    }
    uint64_t p = alloc_down(d - 1);
    sink = d; /* a real frame per level */
    return p;
}

__attribute__((noinline)) static void free_down(int d, uint64_t p)
{
    if (d <= 0) {
        fa_free(p);
        return;
    }
    free_down(d - 1, p);
    sink = d;
}

/* ---- the Python loop ------------------------------------------------------ */

static void capsule_free(PyObject *cap)
{
    free_down(frames, (uint64_t)(uintptr_t)PyCapsule_GetPointer(cap, "glbench.block"));
}

static PyObject *py_alloc(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    uint64_t p = alloc_down(frames);
    if (!p)
        return PyErr_NoMemory();
    return PyCapsule_New((void *)(uintptr_t)p, "glbench.block", capsule_free);
}

static PyObject *py_record(PyObject *self, PyObject *args)
{
    (void)self;
    int on;
    if (!PyArg_ParseTuple(args, "i", &on))
        return NULL;
    if (set_recording)
        set_recording(on);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {{"alloc", py_alloc, METH_NOARGS, "a block freed on the last decref"},
                                {"record", py_record, METH_VARARGS, "gpuledger_set_recording"},
                                {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "glbench", NULL, -1, methods, NULL, NULL, NULL, NULL};

static PyObject *init_glbench(void)
{
    return PyModule_Create(&module);
}

/* what torch_alloc_ab.py's round_ns does, with torch.empty -> glbench.alloc */
static const char *py_src = "import glbench, time\n"
                            "def pairs(n):\n"
                            "    t0 = time.perf_counter_ns()\n"
                            "    for _ in range(n):\n"
                            "        t = glbench.alloc()\n"
                            "        del t\n"
                            "    return time.perf_counter_ns() - t0\n";
static PyObject *py_pairs;

static double python_pairs(long n)
{
    PyObject *r = PyObject_CallFunction(py_pairs, "l", n);
    if (!r) {
        PyErr_Print();
        exit(1);
    }
    double ns = PyFloat_AsDouble(r);
    Py_DECREF(r);
    return ns;
}

static int python_start(void)
{
    PyImport_AppendInittab("glbench", init_glbench);
    Py_Initialize();
    PyObject *m = PyImport_AddModule("__main__");
    PyObject *g = m ? PyModule_GetDict(m) : NULL;
    PyObject *r = g ? PyRun_String(py_src, Py_file_input, g, g) : NULL;
    if (!r) {
        PyErr_Print();
        return -1;
    }
    Py_DECREF(r);
    py_pairs = PyDict_GetItemString(g, "pairs");
    return py_pairs ? 0 : -1;
}

/* ---- the native loop ------------------------------------------------------- */

__attribute__((noinline)) static void native_down(int d, long n)
{
    if (d > 0) {
        native_down(d - 1, n);
        sink = d;
        return;
    }
    for (long i = 0; i < n; i++) {
        framework_work();
        fa_free(fa_malloc(4096, 0, NULL));
    }
}

static double native_pairs(long n)
{
    double t0 = now_ns();
    native_down(frames, n);
    return now_ns() - t0;
}

/* ---- rounds ------------------------------------------------------------------ */

typedef double (*pairs_fn)(long n);

/* ns per pair over `pairs` pairs: sustained, or in bursts with pauses;
 * *cpu: the calling thread's CPU time per pair (what the machine's load
 * does not inflate as much as it does wall time) */
static double round_ns(pairs_fn fn, double *cpu)
{
    double c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), dt = 0, paused = 0;
    if (!burst) {
        dt = fn(pairs);
    } else {
        const long b = 2048;
        for (long done = 0; done < pairs; done += b) {
            struct timespec nap = {0, 5 * 1000 * 1000};
            double s0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
            nanosleep(&nap, NULL);
            paused += clock_ns(CLOCK_THREAD_CPUTIME_ID) - s0;
            dt += fn(pairs - done < b ? pairs - done : b);
        }
    }
    *cpu = (clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0 - paused) / (double)pairs;
    return dt / (double)pairs;
}

static void ab(const char *name, pairs_fn fn)
{
    double off[64], on[64], off_cpu[64], on_cpu[64], c;
    for (int w = 0; w < 2; w++) { /* warm-up in both states */
        set_recording(0);
        round_ns(fn, &c);
        set_recording(1);
        round_ns(fn, &c);
    }
    /* the writer's CPU time over the rounds (it catches up with the last
     * "on" round during the first "off" one of the next pair: counted) */
    struct timespec settle = {0, 200 * 1000 * 1000};
    nanosleep(&settle, NULL);
    double w0 = writer_cpu_ns();
    for (int r = 0; r < rounds; r++) {
        set_recording(0);
        off[r] = round_ns(fn, &off_cpu[r]);
        set_recording(1);
        on[r] = round_ns(fn, &on_cpu[r]);
    }
    set_recording(0);
    nanosleep(&settle, NULL);
    double wcpu = (writer_cpu_ns() - w0) / ((double)rounds * (double)pairs);
    double moff = bench_median(off, rounds), mon = bench_median(on, rounds);
    double coff = bench_median(off_cpu, rounds), con = bench_median(on_cpu, rounds);
    printf("| %s | %d | %s | %.0f | %.0f | %+.0f | %+.0f | %.0f |\n", name, frames, burst ? "bursts" : "sustained",
           moff, mon, mon - moff, con - coff, wcpu);
    fflush(stdout);
}

/* ---- set-up ------------------------------------------------------------------- */

static int attach_shim(const char *self)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", self);
    char *slash = strrchr(path, '/');
    snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0),
             "gpuledger_torch_shim.so");
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    gpuledger_torch_attach_fn attach = h ? (gpuledger_torch_attach_fn)dlsym(h, "gpuledger_torch_shim_attach") : NULL;
    int (*reg)(gpuledger_torch_attach_fn) =
        (int (*)(gpuledger_torch_attach_fn))dlsym(RTLD_DEFAULT, "gpuledger_torch_register");
    if (!attach || !reg) {
        fprintf(stderr, "bench_torch: %s\n", !attach ? dlerror() : "run it under gpuledger run");
        return -1;
    }
    stub_install_bridge(0, 0);
    reg(attach);
    fa_free(fa_malloc(4096, 0, NULL)); /* the first segment: the shim attaches */
    return 0;
}

static int usage(const char *why)
{
    fprintf(stderr,
            "%s%susage: gpuledger run -q --torch segments -- bench_torch [--pairs N] [--rounds R (1..64)] "
            "[--frames F] [--loop python|native|both] [--burst] [--work NS]\n"
            "       bench_torch --count python|native on|off N\n",
            why ? why : "", why ? "\n" : "");
    return 2;
}

int main(int argc, char **argv)
{
    const char *loop = "both", *count = NULL, *state = NULL;
    long count_n = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pairs") && i + 1 < argc)
            pairs = atol(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--frames") && i + 1 < argc)
            frames = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--loop") && i + 1 < argc)
            loop = argv[++i];
        else if (!strcmp(argv[i], "--work") && i + 1 < argc)
            work_ns = atol(argv[++i]);
        else if (!strcmp(argv[i], "--burst"))
            burst = 1;
        else if (!strcmp(argv[i], "--count") && i + 3 < argc) {
            count = argv[++i];
            state = argv[++i];
            count_n = atol(argv[++i]);
        } else
            return usage(strcmp(argv[i], "--help") && strcmp(argv[i], "-h") ? "bench_torch: bad arguments" : NULL);
    }
    if (pairs < 1 || rounds < 1 || rounds > 64 || frames < 0 || frames > 200)
        return usage("bench_torch: --pairs >= 1, --rounds 1..64, --frames 0..200");
    set_recording = (void (*)(int))dlsym(RTLD_DEFAULT, "gpuledger_set_recording");
    if (!set_recording)
        return usage("bench_torch: run it under gpuledger run (gpuledger_set_recording not found)");
    if (attach_shim(argv[0]))
        return 1;
    int py = count ? !strcmp(count, "python") : strcmp(loop, "native") != 0;
    if (py && python_start())
        return 1;
    if (count) { /* one stretch of pairs in one state: callgrind counts it */
        set_recording(!strcmp(state, "on"));
        if (py)
            python_pairs(count_n);
        else
            native_pairs(count_n);
        set_recording(1);
    } else {
        printf("| loop | native frames | timing | off ns/pair | on ns/pair | added ns/pair | added CPU ns/pair | "
               "writer CPU ns/pair |\n|---|---|---|---|---|---|---|---|\n");
        if (py)
            ab("Python", python_pairs);
        if (strcmp(loop, "python"))
            ab("native", native_pairs);
    }
    if (py)
        Py_FinalizeEx();
    return 0;
}
