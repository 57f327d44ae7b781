"""A stand-in for PyTorch, for gpuledger's tests only (not PyTorch's code):
what the gpuledger package touches. CUDA tensors take their memory from
lib/libc10_cuda.so, the stand-in caching allocator of tests/torchstub,
which tells trace trackers about every block as PyTorch's does; nn.Module
has global and per-instance forward hooks; optim.Optimizer has the global
step hooks, and AdamW makes its state at its first step; cuda has
memory_allocated and the out-of-memory observers; a tensor has its
untyped_storage. A toy autograd: a forward keeps its outputs for backward,
backward frees them and gives every parameter a new gradient.

The test copies this directory next to the built library (lib/) and the
stand-in header (include/)."""
import ctypes
import os

__version__ = "2.11.0+stub"


class version:  # noqa: N801 - torch.version
    cuda = "13.0"
    hip = None


class _C:  # noqa: N801
    _GLIBCXX_USE_CXX11_ABI = True

    @staticmethod
    def _cuda_attach_out_of_memory_observer(observer):
        cuda.memory._attach(observer)


_here = os.path.dirname(os.path.abspath(__file__))
_c10 = ctypes.CDLL(os.path.join(_here, "lib", "libc10_cuda.so"), mode=ctypes.RTLD_GLOBAL)
_c10.fa_malloc.restype = ctypes.c_uint64
_c10.fa_malloc.argtypes = [ctypes.c_uint64, ctypes.c_int, ctypes.c_void_p]
_c10.fa_free.argtypes = [ctypes.c_uint64]
_c10.fa_record_stream.argtypes = [ctypes.c_uint64]
_c10.stub_install_bridge.argtypes = [ctypes.c_int, ctypes.c_uint64]
_c10.stub_set_pool.argtypes = [ctypes.c_uint64, ctypes.c_uint64]
_c10.stub_install_bridge("expandable_segments:True" in os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""), 0)

_tape = []  # outputs kept for backward


_live = [0]  # bytes of live tensors (cuda.memory_allocated)


class OutOfMemoryError(RuntimeError):
    """torch.OutOfMemoryError (torch.cuda.OutOfMemoryError)."""


class _Storage:
    def __init__(self, t):
        self._p, self._n = t._p, t._n

    def data_ptr(self):
        return self._p

    def nbytes(self):
        return self._n


class Tensor:
    """nbytes of device memory (a block of the stand-in allocator). Where
    the allocator has none left, the out-of-memory observers are called and
    OutOfMemoryError raised, as PyTorch does."""

    is_cuda = True

    def __init__(self, nbytes):
        self._n, self._p = nbytes, 0
        self._p = _c10.fa_malloc(nbytes, 0, None) if nbytes else 0
        if nbytes and not self._p:
            for obs in list(cuda.memory._oom_observers):
                obs(0, nbytes, 0, 0)
            raise OutOfMemoryError("CUDA out of memory. Tried to allocate %d bytes" % nbytes)
        _live[0] += nbytes
        self.grad = None
        self.requires_grad = False

    def data_ptr(self):
        return self._p

    def untyped_storage(self):
        return _Storage(self)

    @property
    def nbytes(self):
        return self._n

    def sum(self):
        return Tensor(4)

    def backward(self):
        del _tape[:]  # what forward saved for backward goes
        for p in list(nn.Parameter._all):
            if p.requires_grad:
                p.grad = Tensor(p.nbytes)

    def __del__(self):
        if self._p:
            _c10.fa_free(self._p)
            _live[0] -= self._n
            self._p = 0


def empty(nbytes, device=None):
    return Tensor(nbytes)


from . import cuda, nn, optim  # noqa: E402,F401
