#!/usr/bin/env python3
"""bench_annotations.py [--calls N] [--repeats R] [--cuda] — what each call of the
gpuledger Python package costs the calling thread: gpuledger.mark, step,
`with gpuledger.range(...)` (enter and exit), `with gpuledger.paused()` and
gpuledger.recording(), in ns per call (the median of R repeats of N calls,
after a warm-up).

Run it twice to compare: outside gpuledger (every call a no-op) and under it
(the library preloaded and recording; no CUDA needed):

    python3 bench/bench_annotations.py
    gpuledger run -q -o /tmp/bench.db -- python3 bench/bench_annotations.py

Prints one Markdown table row per call. Marks and ranges are events: with
many more calls than GPULEDGER_QUEUE_SLOTS between pauses the ring can fill
and the calls wait for the writer, so the calls are made in bursts of 200
with a pause for the writer between bursts (not timed).

--cuda first puts a tensor on the GPU (imports torch): a mark then also
samples the device's usage and pools, as in a training job."""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import gpuledger  # noqa: E402

BURST = 200


def timed(fn, calls):
    total = 0
    done = 0
    while done < calls:
        n = min(BURST, calls - done)
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()
        total += time.perf_counter_ns() - t0
        done += n
        time.sleep(0.005)  # let the writer drain the ring (not timed)
    return total / calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--cuda", action="store_true", help="first put a tensor on the GPU (imports torch)")
    a = ap.parse_args()
    if a.cuda:
        import torch

        kept = torch.empty(1 << 22, device="cuda")  # noqa: F841 - live while the calls are timed

    def in_range():
        with gpuledger.range("bench"):
            pass

    def in_paused():
        with gpuledger.paused():
            pass

    cases = [("mark(label)", lambda: gpuledger.mark("bench")), ("step()", gpuledger.step),
             ("with range(label)", in_range), ("with paused()", in_paused), ("recording()", gpuledger.recording)]
    empty = statistics.median(timed(lambda: None, a.calls) for _ in range(a.repeats))
    under = ("under gpuledger" if gpuledger.recording() else "without gpuledger") + (", CUDA in use" if a.cuda else "")
    print("| call (%s, Python %d.%d) | ns per call | of which the loop |" % ((under,) + sys.version_info[:2]))
    print("| --- | --- | --- |")
    for name, fn in cases:
        timed(fn, BURST)  # warm-up
        ns = statistics.median(timed(fn, a.calls) for _ in range(a.repeats))
        print("| `%s` | %.0f | %.0f |" % (name, ns, empty))


if __name__ == "__main__":
    main()
