"""_cupy.py — CuPy's memory pool as a second layer, like PyTorch's blocks:
under `gpuledger run`, when the job imports cupy (autoload.py), a
cupy.cuda.MemoryHook is entered on the importing thread (no change to the
job's code). CuPy calls it for every chunk its pool takes from the device
(`alloc`: a segment), every array's block handed out (`malloc`) and given
back (`free`); each becomes one gpuledger_pool_event with the caller's
stack, so a block has the Python line that made it, the pool's free chunks
are its cache (category allocator_cache, not leaks) and the holes inside
its chunks are measured as PyTorch's are.

What it cannot see: CuPy's hooks are per thread (arrays made on another
thread are in the CUDA ledger only, inside the pool's segments), and
free_all_blocks() calls no hook (the segments' cudaFree is seen; their
segment rows stay open). GPULEDGER_CUPY_HOOK=0 turns it off.
"""
from . import _lib

_event = _lib.pool_event
_CUPY = _lib.ALLOCATOR_CUPY
_ALLOC, _FREE, _DONE, _SEGMENT = _lib.POOL_ALLOC, _lib.POOL_FREE_REQUESTED, _lib.POOL_FREE_COMPLETED, \
    _lib.POOL_SEGMENT_ALLOC


def _hook_class(base):
    class GpuledgerHook(base):
        """Every pool operation of this thread, told to gpuledger."""

        name = "gpuledger"

        def alloc_postprocess(self, device_id=0, mem_size=0, mem_ptr=0, **_):
            if mem_ptr:
                _event(_CUPY, _SEGMENT, device_id, mem_ptr, mem_size, 0)

        def malloc_postprocess(self, device_id=0, size=0, mem_size=0, mem_ptr=0, pmem_id=0, **_):
            if mem_ptr:
                _event(_CUPY, _ALLOC, device_id, mem_ptr, size, mem_size)

        def free_postprocess(self, device_id=0, mem_size=0, mem_ptr=0, pmem_id=0, **_):
            if mem_ptr:
                _event(_CUPY, _FREE, device_id, mem_ptr, mem_size, 0)
                _event(_CUPY, _DONE, device_id, mem_ptr, mem_size, 0)

    return GpuledgerHook


_hook = []  # the hook entered, once per process


def install(cupy):
    """Enter the hook on this thread (once); cupy has just been imported."""
    if _hook or _event is None:
        return
    hook = _hook_class(cupy.cuda.MemoryHook)()
    hook.__enter__()
    _hook.append(hook)
