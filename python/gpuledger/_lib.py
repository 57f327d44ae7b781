"""_lib.py — libgpuledger.so's functions (through ctypes, the annotations as builtins).

Under `gpuledger run` the library is preloaded, so its functions are in the
process's global symbol scope: they are looked up there (nothing is
loaded). Outside gpuledger every name below is None and every caller in this
package is a no-op.
"""
import ctypes
import itertools
import sys

_u64p = ctypes.POINTER(ctypes.c_uint64)


def _bind(scope, name, restype, argtypes):
    fn = getattr(scope, name, None)
    if fn is not None:
        fn.restype = restype
        fn.argtypes = argtypes
    return fn


try:
    _scope = ctypes.CDLL(None)
except OSError:  # pragma: no cover - a platform without a global scope
    _scope = None

def bind(name, restype, argtypes):
    """libgpuledger.so's function `name`, or None outside gpuledger."""
    return _bind(_scope, name, restype, argtypes)


# The annotations (annotate.py), taken as CPython builtins the library makes
# (annotate_py.c: ~30 ns a call, where a ctypes call costs 0.1-0.2 us); they
# take a label as str, bytes or anything str() takes. Where the library
# cannot make them (a Python whose functions it does not find), or with
# `python3 -X gpuledger_ctypes`, through ctypes: without argtypes (an int
# argument through argtypes costs ~80 ns more), every caller handing them
# bytes (label below) or an int.
class _MethodDef(ctypes.Structure):  # PyMethodDef (stable ABI)
    _fields_ = [("name", ctypes.c_char_p), ("meth", ctypes.c_void_p), ("flags", ctypes.c_int),
                ("doc", ctypes.c_char_p)]


def _builtins():
    """{name: builtin function} from gpuledger_python_methods(), or {}."""
    get = getattr(_scope, "gpuledger_python_methods", None)
    if get is None or "gpuledger_ctypes" in getattr(sys, "_xoptions", {}):
        return {}
    try:
        get.restype, get.argtypes = ctypes.c_void_p, []
        table = get()
        if not table:
            return {}
        # a prototype of our own: ctypes.pythonapi's function objects are
        # shared by every package in the process, so their argtypes are not ours to set
        new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
            ("PyCFunction_NewEx", ctypes.pythonapi))
        defs, out = ctypes.cast(table, ctypes.POINTER(_MethodDef)), {}
        for i in itertools.count():
            if not defs[i].name:
                return out
            out[defs[i].name.decode()] = new(table + i * ctypes.sizeof(_MethodDef), None, None)
    except Exception:  # noqa: BLE001 - never break the job: the ctypes path instead
        return {}


_fast = _builtins()
mark = _fast.get("mark") or _bind(_scope, "gpuledger_mark", None, None)
range_push = _fast.get("range_push") or _bind(_scope, "gpuledger_range_push", None, None)
range_pop = _fast.get("range_pop") or _bind(_scope, "gpuledger_range_pop", None, None)
set_recording = _fast.get("set_recording") or _bind(_scope, "gpuledger_set_recording", ctypes.c_int, None)
recording = _fast.get("recording") or _bind(_scope, "gpuledger_recording", ctypes.c_int, None)
step = _fast.get("step")  # "step N" counted by the library (None: annotate.py counts)
builtins = len(_fast) == 6  # the annotations are builtins


def _bytes(text):
    """What the ctypes functions take: bytes as they are, anything else as
    str(text) in UTF-8."""
    if text.__class__ is bytes:
        return text
    return (text if text.__class__ is str else str(text)).encode("utf-8", "replace")


def _as_is(text):
    """What the builtins take: str and bytes as they are, anything else as
    str(text)."""
    return text if text.__class__ is str or text.__class__ is bytes else str(text)


label = _as_is if builtins else _bytes


tag = _bind(_scope, "gpuledger_tag", None, [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t])
pool_event = _bind(_scope, "gpuledger_pool_event", None,
                   [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64])
torch_register = _bind(_scope, "gpuledger_torch_register", ctypes.c_int, [ctypes.c_void_p])
# heaps and regions of a program's own pools (pool.py)
_vp, _sz = ctypes.c_void_p, ctypes.c_size_t
heap_register = _bind(_scope, "gpuledger_heap_register", None, [_vp, _sz, _sz, ctypes.c_char_p])
heap_unregister = _bind(_scope, "gpuledger_heap_unregister", None, [_vp])
heap_reset = _bind(_scope, "gpuledger_heap_reset", None, [_vp])
region_alloc = _bind(_scope, "gpuledger_region_alloc", None, [_vp, _vp, _sz, ctypes.c_longlong])
region_free = _bind(_scope, "gpuledger_region_free", None, [_vp])
region_resize = _bind(_scope, "gpuledger_region_resize", None, [_vp, _sz])
region_used = _bind(_scope, "gpuledger_region_used", None, [_vp, _sz])
region_name = _bind(_scope, "gpuledger_region_name", None, [_vp, ctypes.c_char_p])

# gpuledger.h, enum gpuledger_tag
TAG_PARAMETERS = 1
TAG_GRADIENTS = 2
TAG_OPTIMIZER_STATE = 3
TAG_KV_CACHE = 4
TAG_BUFFERS = 5

# gpuledger.h, enum gpuledger_torch_action (those gpuledger_pool_event takes) and enum gpuledger_allocator
POOL_ALLOC, POOL_FREE_REQUESTED, POOL_FREE_COMPLETED, POOL_SEGMENT_ALLOC, POOL_SEGMENT_FREE = 1, 2, 3, 4, 5
ALLOCATOR_CUPY = 1

# gpuledger.h, GPULEDGER_TORCH_ABI: what the shim's gpuledger_torch_shim_abi() returns
TORCH_ABI = 1


def loaded():
    """True when the process runs under gpuledger (the library is there)."""
    return mark is not None
