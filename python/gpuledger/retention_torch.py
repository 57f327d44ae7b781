"""retention_torch.py — when and for which tensors the retention finder
(retention.py) runs in a PyTorch job, through public hooks only, and how its
paths reach the database (gpuledger_retention: one event each on the ring,
stored in the retention table):

* at an out-of-memory (torch._C._cuda_attach_out_of_memory_observer, as
  PyTorch's memory docs attach one; torch 2.11 has no other): the
  tensors of the roots that hold the most (bound: 1 s; by_root);
* at the end of an optimizer step whose live tensor bytes
  (torch.cuda.memory_allocated) grew by at least MIN_GROWTH since the step
  before (Optimizer.register_optimizer_step_post_hook): the tensors not
  reached the same way at the previous search, of the roots that hold the
  most (bound: 50 ms);
* at exit (atexit): as at an out-of-memory (bound: 1 s).
Parameters and the tensors torch_hooks tagged (gradients, optimizer state,
buffers, KV cache) are the program's by design and are left out.

GPULEDGER_RETENTION=0 turns it off; GPULEDGER_RETENTION=OOM_MS,STEP_MS sets
the time bounds. Nothing here may break the job: a failure is one line on
stderr and the hooks go quiet.
"""
import atexit
import ctypes
import os
import re
import sys
import time

from . import _lib, retention

MOMENT_OOM, MOMENT_STEP, MOMENT_EXIT = 0, 1, 2  # gpuledger.h, GPULEDGER_RETENTION_*
MIN_GROWTH = 1 << 20  # live tensor bytes a step must add to be searched
MIN_BYTES = 1 << 20   # smaller storages are not recorded
TOP = 8               # paths recorded at an OOM or at exit (by_root)
TOP_STEP = 4          # at a step (new ones, biggest first)

_record = _lib.bind("gpuledger_retention", ctypes.c_int,
                    [ctypes.c_int, ctypes.c_int64, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int,
                     ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int])


class _State:
    def __init__(self):
        self.torch = None
        self.tensors = None
        self.oom_s, self.step_s = 1.0, 0.05
        self.steps = 0          # optimizer steps ended
        self.optimizer_seen = False
        self.allocated_fn = None
        self.allocated = None   # memory_allocated() at the last step's end
        self.previous = None    # storage addresses at the last search (None: none yet)
        self.busy = False
        self.broken = False
        self.recorded = 0       # paths sent
        self.cut = 0            # of them, with their text cut to fit


_st = _State()


def parse(value):
    """GPULEDGER_RETENTION's value: None (off), or (oom_s, step_s)."""
    v = (value or "1").strip().lower()
    if v in ("0", "no", "false", "off"):
        return None
    if v in ("1", "yes", "true", "on", ""):
        return 1.0, 0.05
    try:
        oom_ms, step_ms = (float(x) for x in v.split(","))
        if oom_ms >= 0 and step_ms >= 0:
            return oom_ms / 1000.0, step_ms / 1000.0
    except ValueError:
        pass
    sys.stderr.write("gpuledger: GPULEDGER_RETENTION=%r is not 0, 1 or OOM_MS,STEP_MS; using 1000,50\n" % value)
    return 1.0, 0.05


def torch_tensors(torch):
    """What a tensor is in PyTorch: a CUDA tensor, its untyped storage's
    address (the block's) and bytes; parameters are left out."""
    base = torch.Tensor
    param = getattr(getattr(torch, "nn", None), "Parameter", ())

    def storage(t):
        if not t.is_cuda or isinstance(t, param):
            return None
        s = t.untyped_storage()
        return s.data_ptr(), s.nbytes()
    return retention.Tensors(base, storage)


def _identity_ptrs():
    """Addresses of parameters and of the tensors tagged by identity."""
    out = set()
    mod = sys.modules.get(__package__ + ".torch_hooks")
    if mod is None:
        return out
    for st in list(mod._opts.values()):
        for seen in (st.seen_p, st.seen_g, st.seen_s):
            out.update(seen.refs)
    for st in list(mod._roots.values()):
        for seen in (st.seen_p, st.seen_b, st.seen_kv):
            out.update(seen.refs)
    return out


def search(moment, budget_s, keep):
    """Run the finder; send the paths of the storages keep(found) picks."""
    st = _st
    if st.busy or st.broken or _record is None:
        return []
    st.busy = True
    try:
        res = retention.find(st.tensors, budget_s=budget_s)
        skip = _identity_ptrs()
        found = [f for p, f in res.found.items() if p not in skip and f.nbytes >= MIN_BYTES]
        chosen = keep(res, found)
        step = st.steps if st.optimizer_seen else -1
        for f in chosen:
            rc = _record(moment, step, f.ptr, f.nbytes, res.elapsed_us, 1 if res.complete else 0,
                         f.path.encode("utf-8", "replace"), (f.root_file or "").encode("utf-8", "replace"),
                         int(f.root_line or 0))
            if rc >= 0:
                st.recorded += 1
                st.cut += rc
        st.previous = set(way(f) for f in res.found.values())
        return chosen
    except Exception as e:  # noqa: BLE001 - never break the job
        st.broken = True
        sys.stderr.write("gpuledger: the retention finder stopped (%s: %s); the job runs on\n" % (type(e).__name__, e))
        return []
    finally:
        st.busy = False


def root_of(path):
    """The root a path starts from: "train.py: global kept (list, 18 items)"."""
    return path.split(" \u2192 ", 1)[0]


_COUNTS = re.compile(r" \((\w+), \d+ items?\)")


def way(f):
    """How f was reached, its containers' sizes left out ("(list, 18
    items)" grows every step): (address, path)."""
    return f.ptr, _COUNTS.sub(r" (\1)", f.path)


def by_root(found, top, pick=None):
    """Up to `top` of found, spread over the roots that hold the most: the
    roots ordered by the bytes all their tensors hold, one path of each
    first, then the rest root by root; in a root, the biggest first, then
    the last found (a list's newest item). pick(f): which may be chosen
    (default all)."""
    roots = {}
    for n, f in enumerate(found):
        roots.setdefault(root_of(f.path), []).append((n, f))
    order = sorted(roots.values(), key=lambda fs: -sum(f.nbytes for _, f in fs))
    lists = [[f for _, f in sorted(fs, key=lambda nf: (-nf[1].nbytes, -nf[0])) if pick is None or pick(f)]
             for fs in order]
    lists = [fs for fs in lists if fs]
    chosen = [fs[0] for fs in lists][:top]
    for fs in lists:
        chosen += fs[1:top - len(chosen) + 1] if len(chosen) < top else []
    return chosen[:top]


def _biggest(res, found):
    return by_root(found, TOP)


def _new_since(previous):
    def keep(res, found):
        if previous is None:
            return []  # the first search: what is there is the baseline
        # new: a storage not reached the same way before (addresses are reused)
        return by_root(found, TOP_STEP, lambda f: way(f) not in previous)
    return keep


def on_oom(device, alloc, device_allocated, device_free):
    search(MOMENT_OOM, _st.oom_s, _biggest)


def on_step(opt, args, kwargs):
    st = _st
    st.optimizer_seen = True
    st.steps += 1
    try:
        now = st.allocated_fn()
    except Exception:  # noqa: BLE001
        return
    before, st.allocated = st.allocated, now
    if before is not None and now >= before + MIN_GROWTH:
        search(MOMENT_STEP, st.step_s, _new_since(st.previous))


def on_exit():
    search(MOMENT_EXIT, _st.oom_s, _biggest)


def install(torch, value=None):
    """Register the hooks (once per process). value: GPULEDGER_RETENTION's."""
    if getattr(install, "done", False) or _record is None:
        return False
    bounds = parse(os.environ.get("GPULEDGER_RETENTION") if value is None else value)
    if bounds is None:
        return False
    install.done = True
    st = _st
    st.torch = torch
    st.oom_s, st.step_s = bounds
    st.tensors = torch_tensors(torch)
    st.allocated_fn = torch.cuda.memory_allocated
    # each hook on its own: a torch without one still gets the others
    for what, register in (("out-of-memory observer", lambda: torch._C._cuda_attach_out_of_memory_observer(on_oom)),
                           ("optimizer step hook", _register_step_hook), ("exit", lambda: atexit.register(on_exit))):
        try:
            register()
        except Exception as e:  # noqa: BLE001 - never break the job
            sys.stderr.write("gpuledger: no retention search at the %s (%s: %s)\n" % (what, type(e).__name__, e))
    return True


def _register_step_hook():
    import torch.optim.optimizer as optimizer
    optimizer.register_optimizer_step_post_hook(on_step)


def cost(moment, budget_s=None):
    """Time one search as the hooks would run it, without recording (for
    scripts/gpu-retention.sh): (milliseconds, result)."""
    t0 = time.perf_counter()
    res = retention.find(_st.tensors, budget_s=budget_s if budget_s is not None else
                         (_st.oom_s if moment != MOMENT_STEP else _st.step_s))
    return (time.perf_counter() - t0) * 1e3, res
