#!/usr/bin/env python3
"""pool_cost.py — what one gpuledger.Pool annotation costs from Python, in
one process: rounds of page alloc/free pairs (a window of 64 live pages
sliding over a 4096-page pool, as a KV cache's pages come and go) alternate
with recording off and on (gpuledger_set_recording), medians of the rounds.
Under gpuledger, with ops >= 64 and R rounds: 64 + (R + 2) * ops regions
recorded (two warm-up rounds), (R + 2) * ops frees, of which 64 per
recorded round free a page taken while recording was off.
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

PAGES = 4096


def pool_memory():
    """(the pool's memory, its page size, what it is): 4096 pages of 64 KiB
    of a CUDA tensor, or of 64 bytes of host memory."""
    try:
        import torch
        if torch.cuda.is_available():
            page = 64 * 1024
            return torch.empty(page * PAGES, dtype=torch.uint8, device="cuda"), page, "a CUDA tensor"
    except ImportError:
        pass
    buf = ctypes.create_string_buffer(PAGES * 64)
    return buf, 64, "host memory"


class Window:
    """64 live pages sliding along the pool, round after round: each pair
    takes the page after the window and gives back its first page."""

    def __init__(self, pool, page):
        self.pool, self.page, self.next = pool, page, 0
        for i in range(64):
            pool.alloc(i * page)

    def round_ns(self, ops):
        pool, page, n = self.pool, self.page, self.next
        t0 = time.perf_counter()
        for i in range(n, n + ops):
            pool.alloc(((i + 64) % PAGES) * page, used=i & (page - 1))
            pool.free((i % PAGES) * page)
        dt = time.perf_counter() - t0
        self.next = n + ops
        return dt / (2 * ops) * 1e9


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ops", type=int, default=20000, help="alloc+free pairs per round")
    p.add_argument("--rounds", type=int, default=9)
    a = p.parse_args()
    mem, page, what = pool_memory()
    if isinstance(mem, ctypes.Array):
        pool = gpuledger.Pool(ctypes.addressof(mem), PAGES * page, name="pool_cost", page_size=page)
    else:
        pool = gpuledger.Pool(mem, name="pool_cost", page_size=page)
    w = Window(pool, page)
    set_recording = _lib.set_recording
    if set_recording is None:
        v = [w.round_ns(a.ops) for _ in range(a.rounds)]
        print("pool_cost: gpuledger not loaded: %.0f ns per Pool.alloc/free call (a no-op), pool in %s"
              % (statistics.median(v), what))
        return
    off, on = [], []
    for r in range(a.rounds + 2):  # two warm-up rounds
        set_recording(0)
        x = w.round_ns(a.ops)
        set_recording(1)
        y = w.round_ns(a.ops)
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
