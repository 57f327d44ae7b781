# py_pool2.py — run by pyembed (tests/progs/pyembed.c) with the source tree's
# python/ on PYTHONPATH: the rest of gpuledger.Pool (py_pool.py has alloc,
# free and used). A pool given as a tensor (anything with data_ptr, numel
# and element_size), regions given by offset and by address, resized,
# named, a reset, the pool closed by its with-block, calls after close.
import glalloc
import gpuledger


class Tensor:
    """What Pool reads of a torch tensor."""

    def __init__(self, ptr, numel):
        self.ptr, self.n = ptr, numel

    def data_ptr(self):
        return self.ptr

    def numel(self):
        return self.n

    def element_size(self):
        return 2


t = Tensor(glalloc.malloc(16384), 8192)
with gpuledger.Pool(t, name="arena") as arena:
    arena.alloc(0, 1000)
    arena.alloc(t.data_ptr() + 4096, 2048, used=100)
    arena.resize(0, 3000)
    arena.name_region(4096, "req 7")
    arena.reset()
    arena.alloc(8192, 512)
arena.alloc(12288, 64)  # closed: a no-op
arena.close()
print("py_pool2:", arena)
try:
    gpuledger.Pool(t.data_ptr())
except TypeError as e:
    print("py_pool2: TypeError:", e)
