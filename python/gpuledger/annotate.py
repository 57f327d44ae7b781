"""annotate.py — marks, ranges, steps and the pause switch from Python.

Each is a cheap no-op when the process is not under gpuledger, so the calls
can stay in production code. Under gpuledger each costs well under 1 us
(docs/performance.md): no object is made per call where one can be reused
(a range is made once per label), and the library's functions are CPython
builtins that take the label as it is given (_lib.py).
"""
import functools
import itertools

from . import _lib

_mark, _push, _pop, _set, _recording = _lib.mark, _lib.range_push, _lib.range_pop, _lib.set_recording, _lib.recording
_step = _lib.step
_label = _lib.label  # what the library's functions take: str and bytes as they are, else str(label)


def mark(label):
    """A point in time, stored with its label (`annotations`)."""
    if _mark is not None:
        _mark(_label(label))


if _lib.builtins:  # the library's builtin takes any label itself: no Python frame per mark
    mark = _mark  # noqa: F811


_steps = itertools.count()


def step(label=None):
    """The end of a step (`gpuledger leaks --steps` cuts the run there): a
    mark labelled "step N". For loops without an optimizer (serving); with
    one, steps come from it ("optimizer step N")."""
    if label is not None:
        if _mark is not None:
            _mark(_label(label))
    elif _step is not None:
        _step()
    elif _mark is not None:
        _mark(b"step %d" % next(_steps))


class _Inert:
    """A context manager that does nothing: what _Range and paused are
    outside gpuledger (their working methods are defined over these only
    when the library's functions are there, once, at class creation)."""

    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        return False


class _Range(_Inert):
    """One label's range. Holds nothing but the label: the library keeps
    each thread's open ranges, so one object serves every use of the label,
    nested, re-entered and on any thread."""

    __slots__ = ("_label", "__weakref__")

    def __init__(self, label):
        self._label = _label(label)

    if _push is not None:

        def __enter__(self):
            _push(self._label)
            return self

        def __exit__(self, exc_type, exc, tb):
            _pop()
            return False

    def __call__(self, func):
        """As a decorator: every call of func runs inside the range."""

        @functools.wraps(func)
        def inside(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return inside

    def __repr__(self):
        return "gpuledger.range(%r)" % (self._label,)


class _Ranges(dict):
    """str or bytes label -> its _Range, made at the first use (a bounded
    cache: a program that makes a new label for each call gets a new object
    each time past _CACHED labels, never unbounded memory)."""

    def __missing__(self, label):
        r = _Range(label)
        if len(self) < _CACHED:
            self[label] = r
        return r


_CACHED = 4096
_ranges = _Ranges()
_range_of = _ranges.__getitem__


def range(label):  # noqa: A001 - the name users expect
    """Every allocation made inside is tagged with this range (it nests):
    `with gpuledger.range("forward"): ...` or `@gpuledger.range("load")`."""
    if label.__class__ is str or label.__class__ is bytes:
        return _range_of(label)
    # anything else is used as str(label), and never kept: a cache keyed by
    # the object would keep it alive (a module, a tensor), and equal objects
    # (1, True, 1.0; a str enum and its value) would share one label
    return _Range(label)


class paused(_Inert):  # noqa: N801 - used like a function: `with gpuledger.paused():`
    """Nothing is recorded inside (for the whole process); the state before
    comes back at the end (paused blocks nest)."""

    __slots__ = ("_before",)

    if _set is not None:

        def __enter__(self):
            self._before = _set(0)
            return self

        def __exit__(self, exc_type, exc, tb):
            _set(self._before)
            return False


def recording():
    """True when gpuledger is loaded and recording (not paused)."""
    return _recording is not None and _recording() != 0
