"""gpuledger — annotations and PyTorch integration for the gpuledger GPU
memory profiler (pure Python + ctypes).

Under `gpuledger run` the library is preloaded and these calls reach it;
without it they are cheap no-ops, so they can stay in production code:

    import gpuledger
    with gpuledger.range("load"):       # also a decorator
        model = load()
    for batch in loader:
        serve(batch)
        gpuledger.step()                # a step boundary for `leaks --steps`
    gpuledger.mark("warm")
    with gpuledger.paused():            # nothing recorded inside
        ...
    gpuledger.recording()               # True when recording
    pool = gpuledger.Pool(kv, name="kv_cache", page_size=page_bytes)
    pool.alloc(offset, used=tokens * token_bytes)   # a page handed out
    pool.free(offset)                   # given back (holes, fragmentation, leaks)

PyTorch jobs need no calls at all: `gpuledger run` attaches to PyTorch's
caching allocator and takes steps and categories from its hooks
(gpuledger.autoload).

How much GPU memory a piece of code took, asked of gpuledger itself
(gpuledger.measure; for tests — the pytest plugin's gpu_limit_memory and
gpu_limit_leaks marks are built on it):

    cp = gpuledger.checkpoint()
    train_step()
    u = gpuledger.usage(cp)              # u.peak - u.start, u.new_live, ...
    gpuledger.live_stacks(cp, top=3)     # what allocated what is still live
"""
__version__ = "0.1.0"

from .annotate import mark, paused, range, recording, step  # noqa: E402,F401
from .measure import checkpoint, live_stacks, usage  # noqa: E402,F401
from .pool import Pool  # noqa: E402,F401
