#!/usr/bin/env python3
"""pool_cost.py — what one gpuledger.Pool annotation costs from Python, in
one process: rounds of page alloc/free pairs (a window of 64 live pages
sliding over a 4096-page pool, as a KV cache's pages come and go) alternate
with recording off and on (gpuledger_set_recording), medians of the rounds.
The pool is a CUDA tensor when torch and a GPU are there, else host memory
(the annotations do not touch the memory).

    gpuledger run -q -- python3 scripts/gpu/pool_cost.py [--ops N] [--rounds R]

Without gpuledger it prints what the no-op calls cost.
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import gpuledger  # noqa: E402
from gpuledger import _lib  # noqa: E402

PAGE = 64 * 1024
PAGES = 4096


def pool_memory():
    try:
        import torch
        if torch.cuda.is_available():
            t = torch.empty(PAGE * PAGES, dtype=torch.uint8, device="cuda")
            return t, "a CUDA tensor"
    except ImportError:
        pass
    buf = ctypes.create_string_buffer(PAGES * 64)  # addresses only
    return ctypes.addressof(buf), "host memory"


def one_round(pool, ops):
    t0 = time.perf_counter()
    for i in range(ops):
        pool.alloc(((i + 64) % PAGES) * PAGE, used=i & 1023)
        pool.free((i % PAGES) * PAGE)
    return (time.perf_counter() - t0) / (2 * ops) * 1e9


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ops", type=int, default=20000, help="alloc+free pairs per round")
    p.add_argument("--rounds", type=int, default=9)
    a = p.parse_args()
    mem, what = pool_memory()
    size = PAGE * PAGES if not isinstance(mem, int) else PAGES * 64
    pool = gpuledger.Pool(mem, size if isinstance(mem, int) else None, name="pool_cost", page_size=PAGE)
    for i in range(64):
        pool.alloc(i * PAGE)
    set_recording = _lib.set_recording
    if set_recording is None:
        v = [one_round(pool, a.ops) for _ in range(a.rounds)]
        print("pool_cost: gpuledger not loaded: %.0f ns per Pool.alloc/free call (a no-op), pool in %s"
              % (statistics.median(v), what))
        return
    off, on = [], []
    for r in range(a.rounds + 2):  # two warm-up rounds
        set_recording(0)
        x = one_round(pool, a.ops)
        set_recording(1)
        y = one_round(pool, a.ops)
        if r >= 2:
            off.append(x)
            on.append(y)
    mo, mn = statistics.median(off), statistics.median(on)
    print("pool_cost: pool in %s; ns per Pool.alloc/free call, median of %d rounds of %d pairs:"
          % (what, a.rounds, a.ops))
    print("pool_cost: recording off %.0f, on %.0f, added %.0f ns per annotation (Python stack included)"
          % (mo, mn, mn - mo))
    print("pool_cost: rounds off", [round(x) for x in off], "on", [round(x) for x in on])


if __name__ == "__main__":
    main()
