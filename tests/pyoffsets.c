/* pyoffsets.c — prints the layout row that interpose/pyframes.c must hold
 * for the CPython whose headers it is compiled against (Py_BUILD_CORE for
 * the interpreter-frame structs of 3.11+). Run by tests/check_pyoffsets.sh
 * for every interpreter found; scripts/gpu-python.sh runs it on the device. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#if PY_VERSION_HEX >= 0x030b0000
#include "internal/pycore_frame.h"
#else
#include <frameobject.h>
#endif

#define O(t, f) ((int)offsetof(t, f))

int main(void)
{
    int minor = PY_MINOR_VERSION;
#if PY_VERSION_HEX < 0x030b0000
    printf("{%d, ST_FRAMEOBJ, %d, -1, %d, %d, %d, %d, -1, -1, ", minor, O(PyThreadState, frame),
           O(PyFrameObject, f_code), O(PyFrameObject, f_back), O(PyFrameObject, f_lasti), minor == 9 ? 1 : 2);
    printf("%d, %d, %d, -1, ", O(PyCodeObject, co_filename), O(PyCodeObject, co_name), O(PyCodeObject, co_firstlineno));
#else
#if PY_VERSION_HEX < 0x030c0000
    printf("{%d, ST_311, %d, %d, %d, %d, %d, 0, %d, %d, ", minor, O(PyThreadState, cframe), O(_PyCFrame, current_frame),
           O(_PyInterpreterFrame, f_code), O(_PyInterpreterFrame, previous), O(_PyInterpreterFrame, prev_instr),
           O(_PyInterpreterFrame, is_entry), O(_PyInterpreterFrame, owner));
#elif PY_VERSION_HEX < 0x030d0000
    printf("{%d, ST_312, %d, %d, %d, %d, %d, 0, -1, %d, ", minor, O(PyThreadState, cframe), O(_PyCFrame, current_frame),
           O(_PyInterpreterFrame, f_code), O(_PyInterpreterFrame, previous), O(_PyInterpreterFrame, prev_instr),
           O(_PyInterpreterFrame, owner));
#else
    printf("{%d, ST_313, %d, -1, %d, %d, %d, 0, -1, %d, ", minor, O(PyThreadState, current_frame),
           O(_PyInterpreterFrame, f_executable), O(_PyInterpreterFrame, previous), O(_PyInterpreterFrame, instr_ptr),
           O(_PyInterpreterFrame, owner));
#endif
    printf("%d, %d, %d, %d, ", O(PyCodeObject, co_filename), O(PyCodeObject, co_qualname),
           O(PyCodeObject, co_firstlineno), O(PyCodeObject, co_code_adaptive));
#endif
    printf("%d, %d},\n", (int)sizeof(PyASCIIObject), (int)sizeof(PyCompactUnicodeObject));
    return 0;
}
