"""torch_alloc_ab.py — in-process A/B cost of a memory recorder in a
CPU-bound tensor allocation loop (torch.empty(1024) + del), so that machine
drift between processes does not swamp the effect.

  python3 torch_alloc_ab.py history     PyTorch's _record_memory_history(
                                        stacks="python") on / off (native
                                        caching allocator; it refuses the
                                        cudaMallocAsync backend)
  python3 torch_alloc_ab.py gpuledger   gpuledger_set_recording(1) / (0)
                                        (run under gpuledger run --torch tensors)

Alternates off/on rounds of --pairs pairs (--rounds of each) and prints one
JSON line: the median ns per pair off and on, and the difference.
"""
import argparse
import ctypes
import json
import statistics
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("what", choices=["history", "gpuledger"])
ap.add_argument("--pairs", type=int, default=20000)
ap.add_argument("--rounds", type=int, default=9)
ap.add_argument("--stacks", default="python", choices=["python", "all"], help="history: stacks= (all: Python and C++)")
args = ap.parse_args()
dev = torch.device("cuda")

if args.what == "history":
    def switch(on):
        torch.cuda.memory._record_memory_history(enabled="all" if on else None, stacks=args.stacks)
else:
    set_recording = getattr(ctypes.CDLL(None), "gpuledger_set_recording", None)
    if set_recording is None:
        raise SystemExit("torch_alloc_ab.py gpuledger: run it under gpuledger run")

    def switch(on):
        set_recording(1 if on else 0)


def round_ns():
    t0 = time.perf_counter_ns()
    for _ in range(args.pairs):
        t = torch.empty(1024, device=dev)
        del t
    return (time.perf_counter_ns() - t0) / args.pairs


for on in (False, True):  # warm-up in both states
    switch(on)
    round_ns()
off, on = [], []
for _ in range(args.rounds):
    switch(False)
    off.append(round_ns())
    switch(True)
    on.append(round_ns())
switch(True)
print(json.dumps({"what": args.what, "stacks": args.stacks if args.what == "history" else None, "backend": torch.cuda.memory.get_allocator_backend(),
                  "off_ns": statistics.median(off), "on_ns": statistics.median(on),
                  "added_ns": statistics.median(on) - statistics.median(off),
                  "off": [round(x) for x in off], "on": [round(x) for x in on]}))
