"""measure.py — how much GPU memory code took, asked of gpuledger itself
(gpuledger.h: gpuledger_checkpoint, _usage, _live_stacks, _stack_text).
Each call waits until the writer thread has stored everything recorded
before it (about a millisecond): for tests and checks, not for a hot path.
Outside gpuledger, checkpoint() returns 0 and the others return None or [].

    cp = gpuledger.checkpoint()
    run_step()
    u = gpuledger.usage(cp)
    print(u.peak - u.start, "bytes over the start at the peak;",
          u.new_live, "bytes allocated since and still live")
    for s in gpuledger.live_stacks(cp, top=3):
        print(s.bytes, s.count, s.frames[0])
"""
import collections
import ctypes

from . import _lib

LAYERS = {"auto": 0, "device": 1, "blocks": 2}
_NAMES = {1: "device", 2: "blocks"}


class _Usage(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("live", "start", "peak", "new_live", "new_live_count",
                                               "allocated", "allocations", "frees")] + [("layer", ctypes.c_int)]


class _StackBytes(ctypes.Structure):
    _fields_ = [("stack_id", ctypes.c_uint64), ("bytes", ctypes.c_uint64), ("count", ctypes.c_uint64)]


_checkpoint = _lib.bind("gpuledger_checkpoint", ctypes.c_uint64, [])
_usage = _lib.bind("gpuledger_usage", ctypes.c_int, [ctypes.c_uint64, ctypes.c_int, ctypes.POINTER(_Usage)])
_stacks = _lib.bind("gpuledger_live_stacks", ctypes.c_int,
                    [ctypes.c_uint64, ctypes.c_int, ctypes.c_int, ctypes.POINTER(_StackBytes), ctypes.c_int])
_text = _lib.bind("gpuledger_stack_text", ctypes.c_int,
                  [ctypes.c_uint64, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t])

Usage = collections.namedtuple("Usage", "layer live start peak new_live new_live_count allocated allocations frees")
Usage.__doc__ = """Bytes since a checkpoint, in one layer ("blocks": PyTorch's tensor blocks; "device": CUDA
allocations): live now, live at the checkpoint (start), the most live at any moment since (peak),
allocated since and still live (new_live, in new_live_count allocations), allocated since in all
(allocated, in so many allocations) and frees since."""
Stack = collections.namedtuple("Stack", "bytes count frames")
Stack.__doc__ = """bytes in count allocations made by one stack; frames: its lines, innermost first
("function (file:line)" for Python, "symbol (module)" for native code)."""


def checkpoint():
    """A point to measure from: its id, or 0 when nothing is recorded."""
    return _checkpoint() if _checkpoint is not None else 0


def usage(cp, layer="auto"):
    """Usage since checkpoint cp, or None (not recording, unknown checkpoint).
    layer: "auto" (blocks when PyTorch's allocator is recorded, else
    device), "device" or "blocks"."""
    if _usage is None or not cp:
        return None
    u = _Usage()
    if _usage(cp, LAYERS[layer], ctypes.byref(u)) != 0:
        return None
    return Usage(_NAMES.get(u.layer, "device"), u.live, u.start, u.peak, u.new_live, u.new_live_count,
                 u.allocated, u.allocations, u.frees)


def live_stacks(cp, at="now", top=5, layer="auto", python_only=True):
    """The stacks of what was allocated since checkpoint cp and is live now
    (at="now") or was live at the peak since (at="peak"), biggest first:
    a list of Stack. python_only: only the Python lines of stacks that have
    any."""
    if _stacks is None or not cp or top <= 0:
        return []
    arr = (_StackBytes * top)()
    n = _stacks(cp, LAYERS[layer], 1 if at == "peak" else 0, arr, top)
    out = []
    for s in arr[:max(n, 0)]:
        buf = ctypes.create_string_buffer(16384)
        length = _text(s.stack_id, 1 if python_only else 0, buf, len(buf))
        frames = buf.value.decode("utf-8", "replace").splitlines() if length > 0 else []
        out.append(Stack(s.bytes, s.count, frames))
    return out
