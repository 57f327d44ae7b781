"""memviz_check.py — what PyTorch's memory viewer will make of a
memory_viz pickle (gpuledger's export, or PyTorch's own snapshot), in
numbers: protocol, segments and blocks, trace entries by action, the peak
of allocated (block) bytes and of segment bytes over the trace, and, given
torch_train.py's JSON line, PyTorch's own counters beside them.

    python3 memviz_check.py FILE.pickle [TRAIN.json] [--label=NAME]
    python3 memviz_check.py --compare GPULEDGER.pickle PYTORCH.pickle

--compare puts gpuledger's export of a `--torch blocks` run beside
PyTorch's own snapshot of the same process (_record_memory_history): the
block entries (alloc / free_requested / free_completed, by address and
size) found in both, in PyTorch's only (should be none) and in gpuledger's
only (CUDA memory outside the caching allocator, each its own block, and
frees after PyTorch's dump); for the entries in both, whether the innermost
Python line (file and line) agrees; and the blocks of the two end states.
"""
import collections
import json
import os
import pickle
import sys

BLOCK_ACTIONS = ("alloc", "free_requested", "free_completed")


def load(path):
    raw = open(path, "rb").read()
    return raw, pickle.loads(raw)


def python_line(frames):
    """The innermost Python frame as (file name, line), or None."""
    for f in frames or []:
        if f.get("filename", "").endswith(".py"):
            return os.path.basename(f["filename"]), f["line"]
    return None


def summary(path, train, label):
    raw, snap = load(path)
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
    states = collections.Counter(b["state"] for s in snap["segments"] for b in s["blocks"])
    nblocks = sum(len(s["blocks"]) for s in snap["segments"])
    print("%s: protocol %s, %d bytes, %d segments (%d blocks: %s) at the end, trace entries %s" % (
        label, proto, len(raw), len(snap["segments"]), nblocks, dict(sorted(states.items())),
        dict(sorted(acts.items()))))
    for dev, pb, ps in peaks:
        print("  device %d: peak of allocated (blocks, requested bytes) %d, peak of segments %d" % (dev, pb, ps))
    if train:
        with open(train) as f:
            line = [l for l in f if l.startswith("{")][-1]
        t = json.loads(line)
        print("  torch: max_memory_allocated %d, max_memory_reserved %d" % (t["max_memory_allocated"],
                                                                          t["max_memory_reserved"]))
        for dev, pb, ps in peaks:
            print("  device %d: blocks - max_memory_allocated = %d, segments - max_memory_reserved = %d" % (
                dev, pb - t["max_memory_allocated"], ps - t["max_memory_reserved"]))


def block_entries(snap):
    out = collections.Counter()
    lines = {}
    for dev, trace in enumerate(snap["device_traces"]):
        for e in trace:
            if e["action"] in BLOCK_ACTIONS:
                key = (dev, e["action"], e["addr"], e["size"])
                out[key] += 1
                if e["action"] == "alloc":
                    lines.setdefault(key, []).append(python_line(e.get("frames")))
    return out, lines


def end_blocks(snap):
    return collections.Counter((s["device"], b["address"], b["size"], b["requested_size"], b["state"])
                               for s in snap["segments"] for b in s["blocks"] if b["state"] != "inactive")


def compare(ours_path, theirs_path):
    _, ours = load(ours_path)
    _, theirs = load(theirs_path)
    mine, my_lines = block_entries(ours)
    their, their_lines = block_entries(theirs)
    both = mine & their
    only_mine, only_theirs = mine - their, their - mine
    for what, c in (("in both", both), ("only in PyTorch's", only_theirs), ("only in gpuledger's", only_mine)):
        by = collections.Counter()
        for (dev, act, addr, size), n in c.items():
            by[act] += n
        print("compare: block entries %s: %d %s, %d bytes allocated" % (
            what, sum(c.values()), dict(sorted(by.items())),
            sum(k[3] * n for k, n in c.items() if k[1] == "alloc")))
    for (dev, act, addr, size), n in sorted(only_theirs.items())[:5]:
        print("  only in PyTorch's: device %d %s %#x %d (x%d)" % (dev, act, addr, size, n))
    same = differ = unknown = 0
    shown = 0
    for key in both:
        if key[1] != "alloc":
            continue
        for a, b in zip(my_lines.get(key, []), their_lines.get(key, [])):
            if a is None or b is None:
                unknown += 1
            elif a == b:
                same += 1
            else:
                differ += 1
                if shown < 5:
                    shown += 1
                    print("  python line differs at %#x (%d B): gpuledger %s:%d, PyTorch %s:%d" % (
                        key[2], key[3], a[0], a[1], b[0], b[1]))
    print("compare: innermost Python line of the allocations in both: %d agree, %d differ, %d without one" % (
        same, differ, unknown))
    mine_end, their_end = end_blocks(ours), end_blocks(theirs)
    print("compare: live blocks at the end (address, size, requested, state): %d in both, %d only in PyTorch's, "
          "%d only in gpuledger's" % (sum((mine_end & their_end).values()), sum((their_end - mine_end).values()),
                                      sum((mine_end - their_end).values())))


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--label")]
    if args and args[0] == "--compare":
        compare(args[1], args[2])
        return
    label = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--label=")), args[0])
    summary(args[0], args[1] if len(args) > 1 else None, label)


if __name__ == "__main__":
    main()
