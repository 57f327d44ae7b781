"""_lib.py — libgpuledger.so's functions through ctypes.

Under `gpuledger run` the library is preloaded, so its functions are in the
process's global symbol scope: they are looked up there (nothing is
loaded). Outside gpuledger every name below is None and every caller in this
package is a no-op.
"""
import ctypes

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


# The annotations (annotate.py): no argtypes, ctypes converts a bytes or
# int argument by itself (0.1 us less per call than with argtypes); every
# caller hands them bytes (label below) or an int.
mark = _bind(_scope, "gpuledger_mark", None, None)
range_push = _bind(_scope, "gpuledger_range_push", None, None)
range_pop = _bind(_scope, "gpuledger_range_pop", None, None)
set_recording = _bind(_scope, "gpuledger_set_recording", ctypes.c_int, None)
recording = _bind(_scope, "gpuledger_recording", ctypes.c_int, None)


def label(text):
    """What mark / range_push take: bytes as they are, anything else as
    str(text) in UTF-8."""
    if text.__class__ is bytes:
        return text
    return (text if text.__class__ is str else str(text)).encode("utf-8", "replace")


tag = _bind(_scope, "gpuledger_tag", None, [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t])
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

# gpuledger.h, GPULEDGER_TORCH_ABI: what the shim's gpuledger_torch_shim_abi() returns
TORCH_ABI = 1


def loaded():
    """True when the process runs under gpuledger (the library is there)."""
    return mark is not None
