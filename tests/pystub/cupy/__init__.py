"""A stand-in for CuPy, for gpuledger's tests only (not CuPy's code): what
the gpuledger package touches. Arrays take their memory from a memory pool
(cupy.cuda.memory) that gets its chunks with cudaMalloc from the CUDA
runtime on the library path (the fake one of tests/fakecuda) and calls the
thread's memory hooks where CuPy's does: alloc (a chunk from the device),
malloc (a block handed out), free (given back)."""
from . import cuda  # noqa: F401

__version__ = "13.6.0+stub"


class ndarray:  # noqa: N801
    """nbytes of device memory from the default pool."""

    def __init__(self, nbytes):
        self.nbytes = nbytes
        self.data = cuda.memory.get_default_memory_pool().malloc(nbytes)

    def __del__(self):
        data, self.data = self.data, None
        if data is not None:
            data.release()


def empty(nbytes):
    return ndarray(nbytes)


def get_default_memory_pool():
    return cuda.memory.get_default_memory_pool()
