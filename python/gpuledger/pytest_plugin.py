"""pytest_plugin.py — GPU memory limits for tests. pytest loads it through
the package's entry point (pytest11, as it loads pytest-memray); run the
tests under gpuledger and mark them:

    gpuledger run -- pytest tests/

    @pytest.mark.gpu_limit_memory("2 GiB")
    def test_forward(): ...          # peak bytes allocated during the test,
                                     # over what was live at its start
    @pytest.mark.gpu_limit_leaks("1 MiB", warmups=1)
    def test_step(): ...             # allocated during the test and still
                                     # live at its end (the test body runs
                                     # `warmups` times before the measured run)

A test over its limit fails with the stacks (their Python lines) that held
the memory. The bytes are PyTorch's tensor blocks when its allocator is
recorded (`gpuledger run --torch blocks`), else CUDA allocations. Outside
gpuledger the marks are not checked, and the session's summary says so.
Sizes: a number of bytes, or with a unit (B, KiB, MiB, GiB, TiB; K, KB, M,
MB, ... are the same binary units).
"""
import os
import re

import pytest

from . import measure
from . import annotate
from .annotate import recording

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.I)
_unchecked = []


def parse_size(text):
    """'2 GiB' -> 2147483648; an int is bytes already."""
    if isinstance(text, int) and not isinstance(text, bool) and text >= 0:
        return text
    m = _SIZE.match(str(text))
    if not m:
        raise ValueError("not a size: %r (e.g. 512, '64 KiB', '1.5 GiB')" % (text,))
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def fmt_bytes(n):
    """What gpuledger's report prints: '2.00 MiB'."""
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return "%.2f %s" % (n / size, unit)
    return "%d bytes" % n


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gpu_limit_memory(limit): under 'gpuledger run', fail when the GPU memory allocated during "
        "the test exceeds limit (e.g. '2 GiB') at its peak, over what was live at its start")
    config.addinivalue_line(
        "markers", "gpu_limit_leaks(limit, warmups=0): under 'gpuledger run', fail when the GPU memory "
        "allocated during the test and still live at its end exceeds limit; the test body runs warmups times "
        "before the measured run")


def pytest_report_header(config):
    if recording():
        return "gpuledger: recording; gpu_limit_memory and gpu_limit_leaks marks are checked"
    return None


class _Limit:
    __slots__ = ("kind", "limit", "warmups")

    def __init__(self, mark, where=""):
        """A mark's limit; arguments it cannot take are a pytest.UsageError
        naming the test (pytest then stops with one line, no traceback)."""
        self.kind = mark.name
        names = ("limit", "warmups") if self.kind == "gpu_limit_leaks" else ("limit",)
        who = "%s: %s" % (where, mark.name) if where else mark.name
        eg = "(e.g. @pytest.mark.%s(%s))" % (mark.name, "'1 GiB', warmups=1" if len(names) == 2 else "'1 GiB'")
        args = dict(zip(names, mark.args))
        extra = [repr(a) for a in mark.args[len(names):]] + [k for k in mark.kwargs if k not in names]
        extra += [k + " twice" for k in mark.kwargs if k in args]
        if extra:
            raise pytest.UsageError("%s takes %s, not %s %s" % (who, " and ".join(names), ", ".join(extra), eg))
        args.update(mark.kwargs)
        if "limit" not in args:
            raise pytest.UsageError("%s needs a limit %s" % (who, eg))
        try:
            self.limit = parse_size(args["limit"])
        except ValueError:
            raise pytest.UsageError("%s: limit %r is not a size (e.g. 512, '64 KiB', '1.5 GiB')"
                                    % (who, args["limit"])) from None
        w = args.get("warmups", 0)
        if not isinstance(w, int) or isinstance(w, bool) or w < 0:
            raise pytest.UsageError("%s: warmups wants a count >= 0, not %r %s" % (who, w, eg))
        self.warmups = w


def _limits(item):
    return [_Limit(m, item.nodeid) for name in ("gpu_limit_memory", "gpu_limit_leaks")
            for m in item.iter_markers(name)]


def pytest_collection_modifyitems(session, config, items):
    """Every mark's arguments checked before any test runs (under gpuledger
    or not): a bad one is a usage error, not a test's traceback."""
    for item in items:
        _limits(item)


_LAYER = {"blocks": "PyTorch tensor blocks", "device": "CUDA allocations"}
_NOISE = ("/_pytest/", "/pluggy/", "/gpuledger/pytest_plugin.py")


def _frames(stack, root):
    """A stack's lines for the message: from the allocating line out to the
    test function (pytest's machinery, which called it, left out), paths
    relative to the project."""
    out = []
    for f in stack.frames:
        if any(n in f for n in _NOISE):
            break
        out.append(f.replace(root + os.sep, ""))
    return out[:16]


def _held_by(cp, at, root):
    lines = []
    for s in measure.live_stacks(cp, at=at, top=5):
        lines.append("  %s in %d allocation%s" % (fmt_bytes(s.bytes), s.count, "" if s.count == 1 else "s"))
        lines.extend("      " + f for f in _frames(s, root))
    return lines


def _check(limit, cp, root):
    u = measure.usage(cp)
    if u is None:
        return None
    if limit.kind == "gpu_limit_memory":
        used = u.peak - u.start
        if used <= limit.limit:
            return None
        head = ("gpu_limit_memory: the test allocated %s of GPU memory at its peak (%s, over the %s live at "
                "its start): more than its limit of %s; held at the peak by:"
                % (fmt_bytes(used), _LAYER[u.layer], fmt_bytes(u.start), fmt_bytes(limit.limit)))
        return "\n".join([head] + _held_by(cp, "peak", root))
    if u.new_live <= limit.limit:
        return None
    head = ("gpu_limit_leaks: %s of GPU memory allocated during the test is still live at its end (%s, %d "
            "allocation%s): more than its limit of %s; allocated by:"
            % (fmt_bytes(u.new_live), _LAYER[u.layer], u.new_live_count, "" if u.new_live_count == 1 else "s",
               fmt_bytes(limit.limit)))
    return "\n".join([head] + _held_by(cp, "now", root))


def _call(item):
    """The test body once more (what pytest's own pytest_pyfunc_call does)."""
    names = getattr(getattr(item, "_fixtureinfo", None), "argnames", None) or item.funcargs
    item.obj(**{n: item.funcargs[n] for n in names})


@pytest.hookimpl(hookwrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    limits = _limits(pyfuncitem)
    if not limits:
        yield
        return
    if not recording():  # not under gpuledger: a no-op, said once at the end
        _unchecked.append(pyfuncitem.nodeid)
        yield
        return
    for _ in range(max(lim.warmups for lim in limits)):
        _call(pyfuncitem)
    cp = measure.checkpoint()
    outcome = yield
    if outcome.excinfo is not None or not cp:
        return  # the test failed by itself
    root = str(pyfuncitem.config.rootpath) if hasattr(pyfuncitem.config, "rootpath") else os.getcwd()
    problems = [p for p in (_check(lim, cp, root) for lim in limits) if p]
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Each test inside a range named after it (its setup, call and
    teardown), so the recorded run says which test allocated what."""
    if not recording():
        yield
        return
    with annotate.range(item.nodeid):
        yield


def pytest_terminal_summary(terminalreporter):
    if _unchecked:
        terminalreporter.write_line(
            "gpuledger: %d test%s with gpu_limit_memory / gpu_limit_leaks marks ran without their limits being "
            "checked: run them under 'gpuledger run -- pytest ...'" % (len(_unchecked), "" if len(_unchecked) == 1
                                                                      else "s"))
