"""annotate.py — marks, ranges, steps and the pause switch from Python.

Each is a cheap no-op when the process is not under gpuledger, so the calls
can stay in production code.
"""
import contextlib
import itertools

from . import _lib

_mark, _push, _pop, _set = _lib.mark, _lib.range_push, _lib.range_pop, _lib.set_recording


def _b(label):
    return label if isinstance(label, bytes) else str(label).encode("utf-8", "replace")


def mark(label):
    """A point in time, stored with its label (`annotations`)."""
    if _mark is not None:
        _mark(_b(label))


_steps = itertools.count()


def step(label=None):
    """The end of a step (`gpuledger leaks --steps` cuts the run there): a
    mark labelled "step N". For loops without an optimizer (serving); with
    one, steps come from it ("optimizer step N")."""
    if _mark is not None:
        _mark(_b(label if label is not None else "step %d" % next(_steps)))


class range(contextlib.ContextDecorator):  # noqa: A001 - the name users expect
    """Every allocation made inside is tagged with this range (it nests):
    `with gpuledger.range("forward"): ...` or `@gpuledger.range("load")`."""

    __slots__ = ("_label",)

    def __init__(self, label):
        self._label = _b(label)

    def __enter__(self):
        if _push is not None:
            _push(self._label)
        return self

    def __exit__(self, *exc):
        if _pop is not None:
            _pop()
        return False


class paused:  # noqa: N801 - used like a function: `with gpuledger.paused():`
    """Nothing is recorded inside (for the whole process). A class rather
    than a generator-based context manager: half the cost per use."""

    __slots__ = ("_before",)

    def __enter__(self):
        self._before = _set(0) if _set is not None else None
        return self

    def __exit__(self, *exc):
        if self._before is not None:
            _set(self._before)
        return False


def recording():
    """True when gpuledger is loaded and recording (not paused)."""
    return bool(_lib.recording()) if _lib.recording is not None else False

