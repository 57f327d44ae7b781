"""A stand-in for JAX, for gpuledger's tests only (not JAX's code): what the
gpuledger package touches. At the first array the backend starts and, as
XLA's BFC allocator does, reserves one arena with the driver's VMM calls
(cuMemAddressReserve, cuMemCreate, cuMemMap on the fake libcuda of
tests/fakecuda); arrays are placed inside it with no CUDA call, and only
Device.memory_stats() tells what is in use (bytes_in_use,
peak_bytes_in_use, bytes_limit, ...)."""
import ctypes

from . import numpy  # noqa: F401
from ._src import xla_bridge

__version__ = "0.11.0+stub"

ARENA = 64 << 20  # bytes_limit: the reservation
_UNIT = 256


class _Prop(ctypes.Structure):  # CUmemAllocationProp
    _fields_ = [("type", ctypes.c_int), ("handle_types", ctypes.c_int), ("loc_type", ctypes.c_int),
                ("loc_id", ctypes.c_int), ("win32", ctypes.c_void_p), ("flags", ctypes.c_uint64)]


class _Access(ctypes.Structure):  # CUmemAccessDesc
    _fields_ = [("loc_type", ctypes.c_int), ("loc_id", ctypes.c_int), ("flags", ctypes.c_int)]


class Device:
    platform = "gpu"

    def __init__(self, i):
        self.id = self.local_hardware_id = i
        self.base, self.used, self.peak, self.count, self.largest = 0, 0, 0, 0, 0

    def _arena(self):
        if self.base:
            return
        cu = ctypes.CDLL("libcuda.so.1")
        cu.cuInit(0)
        va, handle = ctypes.c_uint64(), ctypes.c_uint64()
        assert cu.cuMemAddressReserve(ctypes.byref(va), ctypes.c_size_t(ARENA), ctypes.c_size_t(0),
                                      ctypes.c_uint64(0), ctypes.c_uint64(0)) == 0
        prop = _Prop(type=1, loc_type=1, loc_id=self.id)
        assert cu.cuMemCreate(ctypes.byref(handle), ctypes.c_size_t(ARENA), ctypes.byref(prop),
                              ctypes.c_uint64(0)) == 0
        assert cu.cuMemMap(ctypes.c_uint64(va.value), ctypes.c_size_t(ARENA), ctypes.c_size_t(0), handle,
                           ctypes.c_uint64(0)) == 0
        access = _Access(loc_type=1, loc_id=self.id, flags=3)
        cu.cuMemSetAccess(ctypes.c_uint64(va.value), ctypes.c_size_t(ARENA), ctypes.byref(access),
                          ctypes.c_size_t(1))
        self.base = va.value

    def take(self, nbytes):
        self._arena()
        n = (nbytes + _UNIT - 1) // _UNIT * _UNIT
        self.used += n
        self.count += 1
        self.peak = max(self.peak, self.used)
        self.largest = max(self.largest, n)
        return n

    def give(self, n):
        self.used -= n

    def memory_stats(self):
        return {"num_allocs": self.count, "bytes_in_use": self.used, "peak_bytes_in_use": self.peak,
                "largest_alloc_size": self.largest, "bytes_limit": ARENA, "bytes_reserved": 0}


def local_devices():
    if not xla_bridge._backends:
        xla_bridge._backends["cuda"] = [Device(0)]
    return xla_bridge._backends["cuda"]


devices = local_devices
