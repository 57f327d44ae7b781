"""Sub-allocations inside a program's own pool (a KV cache handing out
pages, an arena), for gpuledger's heap reports: occupancy, holes, external
and internal fragmentation over time, live pages by stack at the peak, and
pages never given back, each with the Python line that took it.

    kv = torch.empty(num_pages * page_bytes, dtype=torch.uint8, device="cuda")
    pool = gpuledger.Pool(kv, name="kv_cache layer 0", page_size=page_bytes)
    pool.alloc(page * page_bytes, used=tokens * token_bytes)  # an offset...
    pool.used(page * page_bytes, tokens * token_bytes)      # more written
    pool.free(kv.data_ptr() + page * page_bytes)             # ...or an address

The same operations as the NVTX memory API (nvtx3/nvToolsExtMem.h), which a
C/C++ pool can use instead. A position below the pool's size is an offset
from its base, anything else an address. Without gpuledger every method is
a cheap no-op. Each call made under gpuledger is one event with the
caller's stack (about 1 us from Python, most of it ctypes).
"""
from . import _lib

_heap_register = _lib.heap_register
_heap_unregister = _lib.heap_unregister
_heap_reset = _lib.heap_reset
_region_alloc = _lib.region_alloc
_region_free = _lib.region_free
_region_resize = _lib.region_resize
_region_used = _lib.region_used
_region_name = _lib.region_name
_on = _region_alloc is not None


def _extent(tensor_or_addr, size):
    """(base address, size in bytes) of a tensor, or of an address and size."""
    ptr = getattr(tensor_or_addr, "data_ptr", None)
    if ptr is not None:
        base = ptr()
        if size is None:
            size = tensor_or_addr.numel() * tensor_or_addr.element_size()
        return base, int(size)
    if size is None:
        raise TypeError("gpuledger.Pool(address, size): the size of a pool given by its address is needed")
    return int(tensor_or_addr), int(size)


class Pool:
    """A heap: `size` bytes at `tensor_or_addr` (a tensor: its data, and by
    default all of it), handed out by the program in regions. page_size: the
    size of a page when the pool hands out pages (its holes are then counted
    in pages), 0 otherwise."""

    __slots__ = ("base", "size", "page_size", "name", "_open")

    def __init__(self, tensor_or_addr, size=None, name="", page_size=0):
        self.base, self.size = _extent(tensor_or_addr, size)
        self.page_size = int(page_size)
        self.name = str(name)
        self._open = _on
        if _on:
            _heap_register(self.base, self.size, self.page_size, self.name.encode())

    def _addr(self, where):
        return self.base + where if where < self.size else where

    def alloc(self, offset_or_addr, size=None, used=None):
        """A region handed out: `size` bytes (default: one page) at an
        offset or address; `used`: bytes of it really in use (e.g. the
        tokens written in a sequence's last page), if known."""
        if self._open:
            where = self.base + offset_or_addr if offset_or_addr < self.size else offset_or_addr
            _region_alloc(self.base, where, self.page_size if size is None else size, -1 if used is None else used)

    def free(self, offset_or_addr):
        """The region at this offset or address is given back."""
        if self._open:
            _region_free(self.base + offset_or_addr if offset_or_addr < self.size else offset_or_addr)

    def used(self, offset_or_addr, used):
        """Bytes of a live region really in use now."""
        if self._open:
            _region_used(self._addr(offset_or_addr), used)

    def resize(self, offset_or_addr, size):
        """A live region grows or shrinks in place."""
        if self._open:
            _region_resize(self._addr(offset_or_addr), size)

    def name_region(self, offset_or_addr, name):
        """Give a live region a name (e.g. the request that owns it)."""
        if self._open:
            _region_name(self._addr(offset_or_addr), str(name).encode())

    def reset(self):
        """Every region of the pool is given back at once."""
        if self._open:
            _heap_reset(self.base)

    def close(self):
        """The pool ends, with every region still in it."""
        if self._open:
            self._open = False
            _heap_unregister(self.base)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return "gpuledger.Pool(0x%x, %d, name=%r, page_size=%d)" % (self.base, self.size, self.name, self.page_size)
