"""torch_alloc_loop.py — a CPU-bound tensor allocation loop, for the cost
per allocation+free pair of a memory recorder.

  python3 torch_alloc_loop.py [--pairs N] [--history]

--history turns on torch.cuda.memory._record_memory_history(stacks="python")
(PyTorch's own recorder; it refuses the cudaMallocAsync backend). Prints a
JSON line with the median ns per pair over 5 rounds.
"""
import argparse
import json
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--pairs", type=int, default=20000)
ap.add_argument("--history", action="store_true")
args = ap.parse_args()
dev = torch.device("cuda")
for _ in range(2000):  # warm-up
    t = torch.empty(1024, device=dev)
    del t
if args.history:
    torch.cuda.memory._record_memory_history(stacks="python")
rounds = []
for _ in range(5):
    t0 = time.perf_counter_ns()
    for _ in range(args.pairs):
        t = torch.empty(1024, device=dev)
        del t
    rounds.append((time.perf_counter_ns() - t0) / args.pairs)
rounds.sort()
entries = None
if args.history:  # prove the recorder was on: count its trace entries
    snap = torch.cuda.memory._snapshot()
    entries = sum(len(t) for t in snap.get("device_traces", []))
print(json.dumps({"ns_per_pair": rounds[2], "history": args.history, "trace_entries": entries,
                  "backend": torch.cuda.memory.get_allocator_backend()}))
