/* pyembed.c — a program embedding CPython (libpython3, linked) with a
 * builtin module `glalloc` whose functions call the (fake) CUDA runtime,
 * so that the tests can check the Python frames gpuledger puts into
 * stacks: file, line and qualified name, in order, between native frames.
 *
 *   glalloc.alloc(n)         cudaMalloc with the GIL held
 *   glalloc.malloc(n)        cudaMalloc; returns the address (for gpuledger.Pool)
 *   glalloc.alloc_nogil(n)   cudaMalloc inside Py_BEGIN_ALLOW_THREADS
 *                            (what PyTorch does around every op)
 *   glalloc.alloc_cthread(n) cudaMalloc on a thread Python never saw
 *   glalloc.loop(n)          n cudaMallocAsync/cudaFreeAsync pairs; returns
 *                            how many malloc/calloc/realloc/free calls the
 *                            calling thread made meanwhile
 *
 * usage: pyembed SCRIPT.py   (runs the script as __main__) */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "count_malloc.h"

static PyObject *py_alloc(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned long long n;
    if (!PyArg_ParseTuple(args, "K", &n))
        return NULL;
    void *p = NULL;
    int e = cudaMalloc(&p, n);
    return PyLong_FromLong(e);
}

static PyObject *py_malloc(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned long long n;
    if (!PyArg_ParseTuple(args, "K", &n))
        return NULL;
    void *p = NULL;
    if (cudaMalloc(&p, n) != cudaSuccess)
        return PyErr_Format(PyExc_MemoryError, "cudaMalloc(%llu) failed", n);
    return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)p);
}

static PyObject *py_alloc_nogil(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned long long n;
    if (!PyArg_ParseTuple(args, "K", &n))
        return NULL;
    void *p = NULL;
    int e;
    Py_BEGIN_ALLOW_THREADS
    e = cudaMalloc(&p, n);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(e);
}

static void *cthread(void *arg)
{
    void *p = NULL;
    cudaMalloc(&p, (size_t)(uintptr_t)arg);
    return NULL;
}

static PyObject *py_alloc_cthread(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned long long n;
    if (!PyArg_ParseTuple(args, "K", &n))
        return NULL;
    pthread_t t;
    Py_BEGIN_ALLOW_THREADS
    pthread_create(&t, NULL, cthread, (void *)(uintptr_t)n);
    pthread_join(t, NULL);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *py_loop(PyObject *self, PyObject *args)
{
    (void)self;
    int n;
    if (!PyArg_ParseTuple(args, "i", &n))
        return NULL;
    cudaStream_t s = 0;
    count = 0;
    counting = 1;
    for (int i = 0; i < n; i++) {
        void *p = NULL;
        cudaMallocAsync(&p, 4096, s);
        cudaFreeAsync(p, s);
    }
    counting = 0;
    return PyLong_FromLong(count);
}

static PyMethodDef methods[] = {
    {"alloc", py_alloc, METH_VARARGS, "cudaMalloc(n) with the GIL held"},
    {"malloc", py_malloc, METH_VARARGS, "cudaMalloc(n); the address"},
    {"alloc_nogil", py_alloc_nogil, METH_VARARGS, "cudaMalloc(n) with the GIL released"},
    {"alloc_cthread", py_alloc_cthread, METH_VARARGS, "cudaMalloc(n) on a non-Python thread"},
    {"loop", py_loop, METH_VARARGS, "n cudaMallocAsync/cudaFreeAsync pairs; host allocator calls made"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "glalloc", NULL, -1, methods, NULL, NULL, NULL, NULL};

static PyObject *init_glalloc(void)
{
    return PyModule_Create(&module);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s SCRIPT.py\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    PyImport_AppendInittab("glalloc", init_glalloc);
    Py_Initialize();
    int rc = PyRun_SimpleFileEx(f, argv[1], 1);
    if (Py_FinalizeEx() < 0)
        rc = 1;
    return rc ? 1 : 0;
}
