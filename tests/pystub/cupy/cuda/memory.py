"""cupy.cuda.memory of the stand-in (tests only): CuPy's pool in small —
sizes rounded up to 512 bytes, the smallest free chunk that fits taken
(split when bigger), a new chunk cudaMalloc'ed when none fits, freed
chunks merged with free neighbours of the same allocation, all kept until
free_all_blocks() gives back the allocations that are wholly free."""
import ctypes

from . import memory_hook

_rt = ctypes.CDLL("libcudart.so.13")
_rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
_rt.cudaFree.argtypes = [ctypes.c_void_p]
_UNIT = 512


class _Chunk:
    __slots__ = ("mem", "ptr", "size", "free")

    def __init__(self, mem, ptr, size):
        self.mem, self.ptr, self.size, self.free = mem, ptr, size, True


class MemoryPointer:
    def __init__(self, pool, chunk):
        self.pool, self.chunk, self.ptr = pool, chunk, chunk.ptr

    def release(self):
        if self.chunk is not None:
            self.pool.free(self.ptr, self.chunk.size)
            self.chunk = None


def _call(kind, **kw):
    for h in list(memory_hook.get_memory_hooks().values()):
        getattr(h, kind)(**kw)


class MemoryPool:
    def __init__(self):
        self.chunks = {}  # allocation base -> its chunks in address order

    def _round(self, size):
        return (size + _UNIT - 1) // _UNIT * _UNIT

    def _alloc(self, size):
        _call("alloc_preprocess", device_id=0, mem_size=size)
        p = ctypes.c_void_p()
        if _rt.cudaMalloc(ctypes.byref(p), size) != 0:
            raise MemoryError("out of memory allocating %d bytes" % size)
        _call("alloc_postprocess", device_id=0, mem_size=size, mem_ptr=p.value)
        self.chunks[p.value] = [_Chunk(p.value, p.value, size)]
        return self.chunks[p.value][0]

    def malloc(self, size):
        rounded = self._round(size)
        _call("malloc_preprocess", device_id=0, size=size, mem_size=rounded)
        fits = [c for cs in self.chunks.values() for c in cs if c.free and c.size >= rounded]
        chunk = min(fits, key=lambda c: (c.size, c.ptr)) if fits else self._alloc(rounded)
        if chunk.size > rounded:  # the rest stays free
            cs = self.chunks[chunk.mem]
            rest = _Chunk(chunk.mem, chunk.ptr + rounded, chunk.size - rounded)
            cs.insert(cs.index(chunk) + 1, rest)
            chunk.size = rounded
        chunk.free = False
        _call("malloc_postprocess", device_id=0, size=size, mem_size=rounded, mem_ptr=chunk.ptr, pmem_id=id(self))
        return MemoryPointer(self, chunk)

    def free(self, ptr, size):
        _call("free_preprocess", device_id=0, mem_size=size, mem_ptr=ptr, pmem_id=id(self))
        for cs in self.chunks.values():
            for i, c in enumerate(cs):
                if c.ptr == ptr:
                    c.free = True
                    if i + 1 < len(cs) and cs[i + 1].free:
                        c.size += cs.pop(i + 1).size
                    if i > 0 and cs[i - 1].free:
                        cs[i - 1].size += cs.pop(i).size
                    break
        _call("free_postprocess", device_id=0, mem_size=size, mem_ptr=ptr, pmem_id=id(self))

    def used_bytes(self):
        return sum(c.size for cs in self.chunks.values() for c in cs if not c.free)

    def total_bytes(self):
        return sum(c.size for cs in self.chunks.values() for c in cs)

    def free_bytes(self):
        return self.total_bytes() - self.used_bytes()

    def free_all_blocks(self):
        for base in [b for b, cs in self.chunks.items() if len(cs) == 1 and cs[0].free]:
            _rt.cudaFree(base)
            del self.chunks[base]


_default = MemoryPool()


def get_default_memory_pool():
    return _default
