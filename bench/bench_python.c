/* bench_python.c — what Python frames cost: an embedded CPython calls a
 * builtin that makes bursts of cudaMallocAsync/cudaFreeAsync pairs against
 * the fake runtime, from 1, 10 and 30 nested Python frames. Each case runs
 * in child processes bare, profiled with GPULEDGER_PYTHON=0 (native frames
 * only) and profiled with Python frames (default); medians of R repeats.
 *
 *   bench_python [--pairs N] [--repeats R]
 *
 * Prints a Markdown table: ns per pair, and ns added per event by gpuledger
 * and by the Python frames alone. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* glbench.pairs(n): n pairs in bursts of 2,048 with a pause for the writer
 * between bursts (what is timed is the calling thread's cost); returns ns
 * per pair. */
static PyObject *py_pairs(PyObject *self, PyObject *args)
{
    (void)self;
    long n;
    if (!PyArg_ParseTuple(args, "l", &n))
        return NULL;
    cudaStream_t s;
    cudaStreamCreate(&s);
    for (int w = 0; w < 2000; w++) {
        void *p;
        cudaMallocAsync(&p, 4096, s);
        cudaFreeAsync(p, s);
    }
    const long burst = 2048;
    double dt = 0;
    struct timespec pause = {0, 20 * 1000 * 1000};
    for (long done = 0; done < n; done += burst) {
        nanosleep(&pause, NULL);
        double t0 = now_s();
        for (long i = 0; i < burst; i++) {
            void *p;
            cudaMallocAsync(&p, 4096, s);
            cudaFreeAsync(p, s);
        }
        dt += now_s() - t0;
    }
    n = (n + burst - 1) / burst * burst;
    return PyFloat_FromDouble(dt * 1e9 / (double)n);
}

/* glbench.alloc(): a capsule owning 4 KiB of device memory, freed when the
 * last reference goes (a tensor's life in PyTorch: allocated inside a call,
 * freed from a decref in the interpreter loop). */
static cudaStream_t alloc_stream;
static void capsule_free(PyObject *cap)
{
    cudaFreeAsync(PyCapsule_GetPointer(cap, "glbench.mem"), alloc_stream);
}

static PyObject *py_alloc(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    void *p;
    if (!alloc_stream)
        cudaStreamCreate(&alloc_stream);
    if (cudaMallocAsync(&p, 4096, alloc_stream) != cudaSuccess)
        return PyErr_NoMemory();
    return PyCapsule_New(p, "glbench.mem", capsule_free);
}

static PyMethodDef methods[] = {{"pairs", py_pairs, METH_VARARGS, "timed alloc/free pairs"},
                                {"alloc", py_alloc, METH_NOARGS, "device memory freed on the last decref"},
                                {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "glbench", NULL, -1, methods, NULL, NULL, NULL, NULL};

static PyObject *init_glbench(void)
{
    return PyModule_Create(&module);
}

static int child(int depth, long pairs)
{
    PyImport_AppendInittab("glbench", init_glbench);
    Py_Initialize();
    char src[512];
    snprintf(src, sizeof src,
             "import glbench\n"
             "def rec(d, n):\n"
             "    if d <= 1:\n"
             "        return glbench.pairs(n)\n"
             "    return rec(d - 1, n)\n"
             "print('%%.3f' %% rec(%d, %ld))\n",
             depth, pairs);
    int rc = PyRun_SimpleString(src);
    fflush(stdout);
    Py_FinalizeEx();
    return rc ? 1 : 0;
}

/* In-process A/B of the tensor-like loop: rounds with recording off and
 * on alternate (gpuledger_set_recording through ctypes, as
 * scripts/gpu/torch_alloc_ab.py does on the GPU machine). */
static int child_ab(void)
{
    PyImport_AppendInittab("glbench", init_glbench);
    Py_Initialize();
    int rc = PyRun_SimpleString(
        "import ctypes, glbench, statistics, time\n"
        "rec = ctypes.CDLL(None).gpuledger_set_recording\n"
        "def burst(n):\n"
        "    t0 = time.perf_counter_ns()\n"
        "    for _ in range(n):\n"
        "        t = glbench.alloc()\n"
        "        del t\n"
        "    return (time.perf_counter_ns() - t0) / n\n"
        "def rnd(k):\n"
        "    s = 0\n"
        "    for _ in range(k):\n"
        "        time.sleep(0.005)\n"
        "        s += burst(2048)\n"
        "    return s / k\n"
        "for on in (0, 1, 0, 1):\n"
        "    rec(on)\n"
        "    rnd(2)\n"
        "off, on = [], []\n"
        "for r in range(9):\n"
        "    rec(0)\n"
        "    off.append(rnd(5))\n"
        "    rec(1)\n"
        "    on.append(rnd(5))\n"
        "print('%.1f %.1f' % (statistics.median(off), statistics.median(on)))\n");
    fflush(stdout);
    Py_FinalizeEx();
    return rc ? 1 : 0;
}

static char self[4096], lib[4096];

static char last_out[256];

static double run_child(int depth, long pairs, const char *mode)
{
    int pipefd[2];
    if (pipe(pipefd))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], 1);
        close(pipefd[0]);
        char d[16], n[32], preload[4200], outp[128];
        snprintf(d, sizeof d, "%d", depth);
        snprintf(n, sizeof n, "%ld", pairs);
        if (strcmp(mode, "bare")) {
            snprintf(preload, sizeof preload, "LD_PRELOAD=%s", lib);
            snprintf(outp, sizeof outp, "GPULEDGER_OUTPUT=/tmp/gl-pybench-%d-%%p.db", (int)getppid());
            putenv(preload);
            putenv(outp);
            putenv("GPULEDGER_QUIET=1");
            putenv(strcmp(mode, "native") ? "GPULEDGER_PYTHON=1" : "GPULEDGER_PYTHON=0");
        }
        char *argv[] = {self, "--child", d, n, NULL};
        char *argv_ab[] = {self, "--child-ab", NULL};
        execv(self, depth < 0 ? argv_ab : argv);
        _exit(127);
    }
    close(pipefd[1]);
    char out[256];
    size_t got = 0;
    ssize_t k;
    while (got < sizeof out - 1 && (k = read(pipefd[0], out + got, sizeof out - 1 - got)) > 0)
        got += (size_t)k;
    out[got] = 0;
    close(pipefd[0]);
    waitpid(pid, NULL, 0);
    snprintf(last_out, sizeof last_out, "%s", out);
    return atof(out);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--child"))
        return child(atoi(argv[2]), atol(argv[3]));
    if (argc == 2 && !strcmp(argv[1], "--child-ab"))
        return child_ab();
    long pairs = 100000;
    int repeats = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pairs") && i + 1 < argc)
            pairs = atol(argv[++i]);
        else if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--pairs N] [--repeats R]\n", argv[0]);
            return strcmp(argv[i], "--help") && strcmp(argv[i], "-h") ? 2 : 0;
        }
    }
    if (repeats < 1 || repeats > 64 || pairs < 1) {
        fprintf(stderr, "bench_python: --repeats 1..64, --pairs >= 1\n");
        return 2;
    }
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 1;
    self[n] = 0;
    const char *l = getenv("GPULEDGER_LIB");
    if (l)
        snprintf(lib, sizeof lib, "%s", l);
    else {
        snprintf(lib, sizeof lib, "%s", self);
        char *slash = strrchr(lib, '/');
        snprintf(slash ? slash : lib, sizeof lib - (size_t)(slash ? slash - lib : 0), "/../interpose/libgpuledger.so");
    }
    if (access(lib, R_OK)) {
        fprintf(stderr, "bench_python: %s not found (set GPULEDGER_LIB)\n", lib);
        return 2;
    }
    printf("Python %d.%d, %ld pairs, median of %d, stack depth 48\n\n", PY_MAJOR_VERSION, PY_MINOR_VERSION, pairs,
           repeats);
    printf("| Python frames | bare ns/pair | native only ns/pair | with Python frames ns/pair | added ns/event (all) | "
           "added ns/event by Python frames |\n|---|---|---|---|---|---|\n");
    const int depths[] = {1, 10, 30};
    for (size_t d = 0; d < 3; d++) {
        double v[3][64];
        const char *modes[] = {"bare", "native", "python"};
        for (int r = 0; r < repeats; r++) /* interleaved: drift hits all three alike */
            for (int m = 0; m < 3; m++)
                v[m][r] = run_child(depths[d], pairs, modes[m]);
        double med[3];
        for (int m = 0; m < 3; m++) {
            qsort(v[m], (size_t)repeats, sizeof v[m][0], cmp_d);
            med[m] = v[m][repeats / 2];
        }
        printf("| %d | %.0f | %.0f | %.0f | %.0f | %.0f |\n", depths[d], med[0], med[1], med[2], (med[2] - med[0]) / 2,
               (med[2] - med[1]) / 2);
        fflush(stdout);
    }
    printf("\nTensor-like loop (`t = glbench.alloc(); del t`: allocated inside a call, freed by a decref), in-process "
           "A/B, medians of 9 rounds:\n\n| recording | off ns/pair | on ns/pair | added ns/event |\n|---|---|---|---|\n");
    const char *ab_modes[] = {"python", "native"};
    for (int m = 0; m < 2; m++) {
        double off = 0, on = 0;
        run_child(-1, 0, ab_modes[m]);
        if (sscanf(last_out, "%lf %lf", &off, &on) != 2) {
            printf("| %s | failed: %s | | |\n", ab_modes[m], last_out);
            continue;
        }
        printf("| %s frames | %.0f | %.0f | %.0f |\n", m ? "native" : "Python + native", off, on, (on - off) / 2);
        fflush(stdout);
    }
    return 0;
}
