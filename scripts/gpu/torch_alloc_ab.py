"""torch_alloc_ab.py — in-process A/B cost of a memory recorder in a
CPU-bound tensor allocation loop (torch.empty(1024) + del), so that machine
drift between processes does not swamp the effect.

  python3 torch_alloc_ab.py history     PyTorch's _record_memory_history(
                                        stacks="python") on / off (native
                                        caching allocator; it refuses the
                                        cudaMallocAsync backend)
  python3 torch_alloc_ab.py gpuledger   gpuledger_set_recording(1) / (0)
                                        (run under gpuledger run --torch tensors)
  python3 torch_alloc_ab.py both        under gpuledger run --torch blocks: rounds
                                        cycle off / gpuledger on / PyTorch's
                                        recorder on, in one process, so both
                                        costs are measured against the same
                                        baseline (the allocator with our tracker
                                        attached, paused)

Alternates off/on rounds of --pairs pairs (--rounds of each) and prints one
JSON line: the median ns per pair off and on, and the difference. In `both`,
each cycle is off, gpuledger, off, history: the cost of a round is its time
minus the mean of the off rounds on either side of it, and the figures are
the medians of those paired differences (a machine whose speed drifts
between two levels for seconds at a time, as the GPU machine's vCPUs do,
moves a round and its neighbours together).

--pin-main: the loop's thread runs on the first CPU the process may use
only (the H200 VM: the recorder's writer then lands on that CPU too at
times, and gpuledger's rounds cost twice as much; off by default).
`writer_cpu_ns_per_pair`: the CPU time gpuledger's writer thread spent per
pair during its rounds (from /proc): above the loop's own time per pair,
the writer sets the pace.
"""
import argparse
import ctypes
import json
import os
import statistics
import threading
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("what", choices=["history", "gpuledger", "both"])
ap.add_argument("--pairs", type=int, default=20000)
ap.add_argument("--rounds", type=int, default=9)
ap.add_argument("--stacks", default="python", choices=["python", "all"], help="history: stacks= (all: Python and C++)")
ap.add_argument("--pin-main", action="store_true",
                help="keep the loop's thread on the first CPU the process may use")
args = ap.parse_args()
dev = torch.device("cuda")
cpus = sorted(os.sched_getaffinity(0))
if args.pin_main and len(cpus) > 1:
    os.sched_setaffinity(threading.get_native_id(), {cpus[0]})  # this thread only


def history(on):
    torch.cuda.memory._record_memory_history(enabled="all" if on else None, stacks=args.stacks)


if args.what == "history":
    switch = history
else:
    set_recording = getattr(ctypes.CDLL(None), "gpuledger_set_recording", None)
    if set_recording is None:
        raise SystemExit("torch_alloc_ab.py gpuledger: run it under gpuledger run")

    def switch(on):
        set_recording(1 if on else 0)



def writer_cpu_ns():
    """CPU time of gpuledger's writer thread so far (ns; 0 if none)."""
    for tid in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/comm" % tid) as f:
                if not f.read().startswith("gpuledger-wr"):
                    continue
            with open("/proc/self/task/%s/schedstat" % tid) as f:
                return int(f.read().split()[0])
        except OSError:
            continue
    return 0


def round_ns():
    t0 = time.perf_counter_ns()
    for _ in range(args.pairs):
        t = torch.empty(1024, device=dev)
        del t
    return (time.perf_counter_ns() - t0) / args.pairs


if args.what == "both":
    def state(which):
        set_recording(1 if which == "gpuledger" else 0)
        history(which == "history")

    for which in ("off", "gpuledger", "history"):  # warm-up in every state
        state(which)
        round_ns()
    rounds = {"off": [], "gpuledger": [], "history": []}
    seq = []  # (state, ns) in the order run
    writer = []  # the writer's CPU ns per pair of each cycle's gpuledger round
    for _ in range(args.rounds):
        w0 = writer_cpu_ns()
        for which in ("off", "gpuledger", "off", "history"):
            state(which)
            ns = round_ns()
            rounds[which].append(ns)
            seq.append((which, ns))
        writer.append((writer_cpu_ns() - w0) / args.pairs)  # only the gpuledger round has events
    state("off")
    seq.append(("off", round_ns()))  # the right-hand neighbour of the last history round
    state("gpuledger")
    # each measured round minus the mean of the off rounds beside it
    paired = {"gpuledger": [], "history": []}
    for i in range(1, len(seq) - 1):
        if seq[i][0] != "off":
            paired[seq[i][0]].append(seq[i][1] - (seq[i - 1][1] + seq[i + 1][1]) / 2)
    gl, hist = statistics.median(paired["gpuledger"]), statistics.median(paired["history"])
    med = {k: statistics.median(v) for k, v in rounds.items()}
    print(json.dumps({"what": "both", "stacks": args.stacks, "backend": torch.cuda.memory.get_allocator_backend(),
                      "cpus": cpus, "pin_main": bool(args.pin_main and len(cpus) > 1),
                      "off_ns": med["off"], "gpuledger_added_ns": gl, "history_added_ns": hist,
                      "ratio": hist / gl if gl > 0 else None,
                      "writer_cpu_ns_per_pair": statistics.median(writer) if writer else None,
                      "median_rounds_added_ns": {"gpuledger": med["gpuledger"] - med["off"],
                                                 "history": med["history"] - med["off"]},
                      "rounds": {k: [round(x) for x in v] for k, v in rounds.items()}}))
    raise SystemExit(0)


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
