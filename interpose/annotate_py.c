/* annotate_py.c — the annotations as CPython builtin functions, for the
 * gpuledger Python package: a ctypes call costs 0.1-0.2 us, a builtin
 * ~30 ns. gpuledger_python_methods() hands the package a PyMethodDef table
 * that it turns into builtins with ctypes.pythonapi.PyCFunction_NewEx.
 *
 * The library does not link libpython nor use its headers: the few CPython
 * functions it calls (all in the stable ABI, the same from 3.8 to 3.13)
 * are looked up in the process when the package asks, and the table's
 * layout and flags are the stable ABI's. If one is missing there is no
 * table, and the package calls the C functions through ctypes instead.
 * The builtins run holding the GIL; none of them waits for anything that
 * needs it (a full queue waits for the writer, which never takes it). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuledger.h"
#include "real.h"
#include "recorder.h"

typedef struct py_object py_object; /* PyObject, opaque */
typedef intptr_t py_ssize;          /* Py_ssize_t */
typedef py_object *(*py_cfunction)(py_object *self, py_object *arg);

/* PyMethodDef and its flags (Include/methodobject.h, stable ABI) */
struct py_method_def {
    const char *name;
    py_cfunction meth;
    int flags;
    const char *doc;
};
#define METH_NOARGS 0x0004
#define METH_O 0x0008
struct py_api {
    py_object *none, *str_type, *bytes_type; /* _Py_NoneStruct, PyUnicode_Type, PyBytes_Type */
    void (*incref)(py_object *);
    void (*decref)(py_object *);
    py_object *(*type_of)(py_object *); /* PyObject_Type: a new reference */
    const char *(*utf8)(py_object *, py_ssize *);
    char *(*bytes_data)(py_object *);
    py_object *(*str)(py_object *);
    py_object *(*encode)(py_object *, const char *, const char *);
    void (*clear_error)(void);
    int (*is_true)(py_object *);
    py_object *(*from_long)(long);
    py_object *(*from_bool)(long);
};
static struct py_api py;

static const struct {
    const char *name;
    size_t offset;
} py_names[] = {
    {"_Py_NoneStruct", offsetof(struct py_api, none)},
    {"PyUnicode_Type", offsetof(struct py_api, str_type)},
    {"PyBytes_Type", offsetof(struct py_api, bytes_type)},
    {"Py_IncRef", offsetof(struct py_api, incref)},
    {"Py_DecRef", offsetof(struct py_api, decref)},
    {"PyObject_Type", offsetof(struct py_api, type_of)},
    {"PyUnicode_AsUTF8AndSize", offsetof(struct py_api, utf8)},
    {"PyBytes_AsString", offsetof(struct py_api, bytes_data)},
    {"PyObject_Str", offsetof(struct py_api, str)},
    {"PyUnicode_AsEncodedString", offsetof(struct py_api, encode)},
    {"PyErr_Clear", offsetof(struct py_api, clear_error)},
    {"PyObject_IsTrue", offsetof(struct py_api, is_true)},
    {"PyLong_FromLong", offsetof(struct py_api, from_long)},
    {"PyBool_FromLong", offsetof(struct py_api, from_bool)},
};

static py_object *none(void)
{
    py.incref(py.none);
    return py.none;
}

/* The label of a str (UTF-8; unencodable characters as '?'), bytes, or
 * anything else (str(obj)). *keep: a new reference to release after use
 * (NULL: none). NULL with an exception set if str(obj) raised. */
static const char *label_of(py_object *obj, py_object **keep)
{
    *keep = NULL;
    py_object *type = py.type_of(obj);
    py.decref(type); /* only compared: str and bytes exactly (as the package's
                      * fallback takes them); a subclass (a str enum) is str(obj) */
    if (type == py.bytes_type)
        return py.bytes_data(obj);
    if (type != py.str_type) {
        obj = *keep = py.str(obj);
        if (!obj)
            return NULL;
    }
    const char *s = py.utf8(obj, NULL);
    if (s)
        return s;
    py.clear_error(); /* a lone surrogate: encoded with "replace" */
    py_object *b = py.encode(obj, "utf-8", "replace");
    if (*keep)
        py.decref(*keep);
    *keep = b;
    return b ? py.bytes_data(b) : NULL;
}

typedef void (*label_fn)(const char *);

static py_object *with_label(py_object *arg, label_fn fn)
{
    py_object *keep;
    const char *label = label_of(arg, &keep);
    if (!label)
        return NULL;
    fn(label);
    if (keep)
        py.decref(keep);
    return none();
}

static py_object *py_mark(py_object *self, py_object *arg)
{
    (void)self;
    return with_label(arg, gpuledger_mark);
}

/* step(): a mark labelled "step N", N counting this process's steps from 0
 * (the number formatted here: 0.1 us less than Python's "%d"). */
static py_object *py_step(py_object *self, py_object *unused)
{
    (void)self;
    (void)unused;
    static _Atomic unsigned long long steps;
    unsigned long long n = atomic_fetch_add_explicit(&steps, 1, memory_order_relaxed);
    char label[32] = "step ", digits[24];
    size_t len = 0;
    do
        digits[len++] = (char)('0' + n % 10);
    while ((n /= 10) != 0);
    for (size_t i = 0; i < len; i++)
        label[5 + i] = digits[len - 1 - i];
    label[5 + len] = 0;
    gpuledger_mark(label);
    return none();
}

static py_object *py_range_push(py_object *self, py_object *arg)
{
    (void)self;
    return with_label(arg, gpuledger_range_push);
}

static py_object *py_range_pop(py_object *self, py_object *unused)
{
    (void)self;
    (void)unused;
    gpuledger_range_pop();
    return none();
}

static py_object *py_set_recording(py_object *self, py_object *arg)
{
    (void)self;
    int on = py.is_true(arg);
    return on < 0 ? NULL : py.from_long(gpuledger_set_recording(on));
}

static py_object *py_recording(py_object *self, py_object *unused)
{
    (void)self;
    (void)unused;
    return py.from_bool(gpuledger_recording());
}

static struct py_method_def methods[] = {
    {"mark", py_mark, METH_O, "mark(label)\n--\n\nA point in time, stored with its label (`annotations`)."},
    {"step", py_step, METH_NOARGS, "step()\n--\n\nA mark labelled \"step N\" (N: 0, 1, ... in this process)."},
    {"range_push", py_range_push, METH_O, "gpuledger_range_push(label)"},
    {"range_pop", py_range_pop, METH_NOARGS, "gpuledger_range_pop()"},
    {"set_recording", py_set_recording, METH_O, "gpuledger_set_recording(on): the state before (0 or 1)"},
    {"recording", py_recording, METH_NOARGS, "gpuledger_recording(): True or False"},
    {NULL, NULL, 0, NULL},
};

static int found; /* every CPython function found */

static void find_python(void)
{
    gl_real_init();
    found = gl_real_dlsym != NULL;
    for (size_t i = 0; i < sizeof py_names / sizeof py_names[0]; i++) {
        void *p = gl_real_dlsym ? gl_real_dlsym(RTLD_DEFAULT, py_names[i].name) : NULL;
        if (!p)
            found = 0;
        *(void **)((char *)&py + py_names[i].offset) = p;
    }
}

GL_EXPORT const void *gpuledger_python_methods(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, find_python);
    return found ? methods : NULL;
}
