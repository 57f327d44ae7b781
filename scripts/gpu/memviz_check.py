"""memviz_check.py — what PyTorch's memory viewer will make of a
memory_viz pickle (gpuledger's export, or PyTorch's own snapshot), in
numbers: protocol, segments and blocks, trace entries by action, the peak
of allocated (block) bytes and of segment bytes over the trace, and, given
torch_train.py's JSON line, PyTorch's own counters beside them.

    python3 memviz_check.py FILE.pickle [TRAIN.json] [--label NAME]
"""
import collections
import json
import pickle
import sys

args = [a for a in sys.argv[1:] if not a.startswith("--label")]
label = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--label=")), args[0])
raw = open(args[0], "rb").read()
snap = pickle.loads(raw)
proto = raw[1] if raw[:1] == b"\x80" else None
acts = collections.Counter(e["action"] for t in snap["device_traces"] for e in t)
peaks = []
for dev, trace in enumerate(snap["device_traces"]):
    blocks = segs = pb = ps = 0
    for e in trace:
        a = e["action"]
        if a == "alloc":
            blocks += e["size"]
        elif a == "free_completed":
            blocks -= e["size"]
        elif a in ("segment_alloc", "segment_map"):
            segs += e["size"]
        elif a in ("segment_free", "segment_unmap"):
            segs -= e["size"]
        pb, ps = max(pb, blocks), max(ps, segs)
    if trace:
        peaks.append((dev, pb, ps))
nblocks = sum(len(s["blocks"]) for s in snap["segments"])
print("%s: protocol %s, %d bytes, %d segments (%d blocks) at the end, trace entries %s" % (
    label, proto, len(raw), len(snap["segments"]), nblocks, dict(sorted(acts.items()))))
for dev, pb, ps in peaks:
    print("  device %d: peak of allocated (blocks) %d, peak of segments %d" % (dev, pb, ps))
if len(args) > 1:
    with open(args[1]) as f:
        line = [l for l in f if l.startswith("{")][-1]
    t = json.loads(line)
    print("  torch: max_memory_allocated %d, max_memory_reserved %d" % (t["max_memory_allocated"],
                                                                      t["max_memory_reserved"]))
    for dev, pb, ps in peaks:
        print("  device %d: blocks - max_memory_allocated = %d, segments - max_memory_reserved = %d" % (
            dev, pb - t["max_memory_allocated"], ps - t["max_memory_reserved"]))
