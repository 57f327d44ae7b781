"""_jax.py — what JAX's allocator says of itself, beside the arena it
reserves. XLA's BFC allocator takes one large reservation at the first use
(cuMemCreate / cuMemAlloc, most of the device) and sub-allocates every
buffer inside it with no API gpuledger can see. So, under `gpuledger run`,
when the job imports jax (autoload.py), each device's own statistics
(Device.memory_stats(): bytes_in_use, peak_bytes_in_use, bytes_limit, ...)
are recorded at every gpuledger.mark() and gpuledger.step() and at exit,
each sample one mark labelled

    gpuledger.stats jax device=0 bytes_in_use=N peak_bytes_in_use=N bytes_limit=N ...

which the report reads as the arena's in-use bytes and peak (not a step,
not a leak). What stays invisible: which buffers are inside the arena,
their stacks, and the holes between them. GPULEDGER_JAX_STATS=0 turns it
off.
"""
import atexit
import sys

from . import _lib

PREFIX = "gpuledger.stats jax"
_KEYS = ("bytes_in_use", "peak_bytes_in_use", "bytes_limit", "bytes_reserved", "largest_alloc_size", "num_allocs",
         "largest_free_block_bytes", "pool_bytes")
_jax = []


def _started(jax):
    """True when JAX has made its backends (asking for devices before would
    start it: never start the job's framework for it)."""
    bridge = sys.modules.get("jax._src.xla_bridge")
    ask = getattr(bridge, "backends_are_initialized", None)
    if ask is not None:
        try:
            return bool(ask())
        except Exception:  # noqa: BLE001
            return False
    return bool(getattr(bridge, "_backends", None))


def sample():
    """One mark per GPU device with its allocator's statistics now."""
    if not _jax or _lib.mark is None or not _started(_jax[0]):
        return
    try:
        devices = _jax[0].local_devices()
    except Exception:  # noqa: BLE001 - never break the job
        return
    for d in devices:
        if getattr(d, "platform", "") not in ("gpu", "cuda", "rocm"):
            continue
        try:
            st = d.memory_stats() or {}
        except Exception:  # noqa: BLE001
            continue
        dev = getattr(d, "local_hardware_id", None)
        dev = d.id if dev is None else dev
        fields = " ".join("%s=%d" % (k, int(st[k])) for k in _KEYS if k in st)
        _lib.mark(_lib.label("%s device=%d %s" % (PREFIX, dev, fields)))


def _after(fn):
    def with_sample(*args, **kwargs):
        out = fn(*args, **kwargs)
        sample()
        return out
    with_sample.__name__, with_sample.__doc__ = getattr(fn, "__name__", "mark"), getattr(fn, "__doc__", None)
    return with_sample


def install(jax):
    """jax has just been imported: samples at marks, steps and exit."""
    if _jax or _lib.mark is None:
        return
    _jax.append(jax)
    import gpuledger
    from . import annotate
    for name in ("mark", "step"):
        wrapped = _after(getattr(annotate, name))
        setattr(annotate, name, wrapped)
        setattr(gpuledger, name, wrapped)
    atexit.register(sample)
