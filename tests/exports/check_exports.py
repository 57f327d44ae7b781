#!/usr/bin/env python3
"""check_exports.py — `gpuledger export` in the formats other viewers read,
checked the way those viewers read them, with exact values.

Runs the demo, the marks/ranges program, the VMM and two-device scenarios
under `gpuledger run` (fake CUDA), exports each, and checks:

memory_viz  a pickle of protocol 4 using only the opcodes PyTorch's
            memory_viz page unpickles; the fields torch.cuda.memory._snapshot()
            has (segments with blocks tiling them, device_traces of
            alloc/free_requested/free_completed/segment_alloc/segment_free/
            segment_map/segment_unmap/oom entries with addr, size, stream,
            frames); replaying each device's
            trace never frees what is not live nor puts a block outside a
            segment, ends in exactly the snapshot's segments, and peaks at the
            device peak `gpuledger report` states; --max-entries keeps the
            last entries.
perfetto    valid against tests/schemas/trace_event.schema.json; per device
            the category counters add up to the live-bytes counter at every
            step and it peaks at the report's peak; one slice per range and
            per mark, one instant per failed allocation.
speedscope  valid against tests/schemas/speedscope.schema.json; the peak
            profile weighs the device peak and the never-freed profile what
            the report says was never freed.

    check_exports.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import pickle
import pickletools
import sqlite3
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    sys.exit("check_exports: Python's jsonschema module is missing (Debian: python3-jsonschema; "
             "scripts/install-deps.sh installs it)")

BUILD, SRC = (os.path.abspath(a) for a in sys.argv[1:3])
GL = os.path.join(BUILD, "report", "gpuledger")
failures = []

# what PyTorch's memory_viz page (its own JavaScript unpickler) can read
VIEWER_OPCODES = {"PROTO", "FRAME", "EMPTY_DICT", "MARK", "SETITEMS", "SETITEM", "DICT", "EMPTY_LIST", "APPENDS",
                  "APPEND", "LIST", "SHORT_BINUNICODE", "BINUNICODE", "BININT", "BININT1", "BININT2", "LONG1",
                  "NONE", "NEWTRUE", "NEWFALSE", "EMPTY_TUPLE", "TUPLE", "TUPLE1", "TUPLE2", "TUPLE3", "BINFLOAT",
                  "MEMOIZE", "BINPUT", "LONG_BINPUT", "BINGET", "LONG_BINGET", "STOP"}
SEGMENT_KEYS = {"device", "address", "total_size", "allocated_size", "active_size", "requested_size", "stream",
                "segment_type", "segment_pool_id", "is_expandable", "frames", "blocks"}
BLOCK_KEYS = {"address", "size", "requested_size", "state", "frames"}
ENTRY_KEYS = {"action", "addr", "size", "stream", "frames", "time_us"}
FRAME_KEYS = {"filename", "line", "name"}


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def run(*argv, binary=False, env=None):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=dict(os.environ, **env) if env else None)
    if r.returncode:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(argv), r.returncode, r.stderr.decode()))
    return r.stdout if binary else r.stdout.decode()


def report(db):
    return json.loads(run(GL, "report", "--format", "json", "--top", "1000000", db))["processes"][0]


def check_frames(frames, where):
    return check(isinstance(frames, list) and all(isinstance(f, dict) and set(f) == FRAME_KEYS and
                                                  isinstance(f["filename"], str) and isinstance(f["line"], int) and
                                                  isinstance(f["name"], str) for f in frames),
                 "%s: frames are {filename, line, name}" % where)


def merged(segs, expandable):
    """Live segments as intervals, mapped ranges that touch merged (an
    expandable segment grows by the pages it maps)."""
    out = []
    for addr in sorted(segs):
        size = segs[addr]
        if out and addr in expandable and out[-1][2] and out[-1][0] + out[-1][1] == addr:
            out[-1][1] += size
        else:
            out.append([addr, size, addr in expandable])
    return out


def replay(trace, name, device):
    """Replay one device's trace as the viewer does; return (segments,
    expandable segment addresses, live blocks, peak of allocated bytes,
    peak of segment bytes)."""
    segs, expandable, blocks, requested, live, peak, seg_live, seg_peak = {}, set(), {}, set(), 0, 0, 0, 0
    for k, e in enumerate(trace):
        a = e["action"]
        where = "%s device %d entry %d (%s)" % (name, device, k, a)
        if a == "oom":
            check(set(e) == (ENTRY_KEYS - {"addr"}) | {"device_free"}, where + ": oom fields")
            continue
        check(set(e) == ENTRY_KEYS, where + ": fields %s" % sorted(e))
        check_frames(e["frames"], where)
        addr, size = e["addr"], e["size"]
        if a in ("segment_alloc", "segment_map"):
            check(addr not in segs, where + ": segment already live")
            segs[addr] = size
            if a == "segment_map":
                expandable.add(addr)
            seg_live += size
            seg_peak = max(seg_peak, seg_live)
        elif a in ("segment_free", "segment_unmap"):
            check(segs.get(addr) == size, where + ": not a live segment of that size")
            check(not any(addr <= b < addr + size for b in blocks), where + ": blocks still live inside")
            segs.pop(addr, None)
            expandable.discard(addr)
            seg_live -= size
        elif a == "alloc":
            check(addr not in blocks, where + ": block already live")
            check(any(s <= addr and addr + size <= s + n for s, n, _ in merged(segs, expandable)),
                  where + ": block outside segments")
            blocks[addr] = size
            live += size
            peak = max(peak, live)
        elif a == "free_requested":
            check(blocks.get(addr) == size and addr not in requested, where + ": not a live block of that size")
            requested.add(addr)
        elif a == "free_completed":
            check(addr in requested, where + ": follows its free_requested")
            requested.discard(addr)
            if check(blocks.get(addr) == size, where + ": not a live block"):
                live -= blocks.pop(addr)
        else:
            check(False, where + ": unknown action")
    return segs, expandable, blocks, peak, seg_peak


def torch_blocks(db):
    """What the database says of PyTorch's blocks (--torch blocks): the
    allocator's own figures per device (block_stats), and the blocks live at
    the end (held by a tensor, or let go of and not yet reusable)."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    if not con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'tensor_blocks'").fetchone()[0] or \
            not con.execute("SELECT count(*) FROM tensor_blocks").fetchone()[0]:
        con.close()
        return None
    stats = {d: (req, res) for d, req, res in con.execute(
        "SELECT device, requested_peak, reserved_peak FROM block_stats")}
    end = sorted((d, a, size, req, "active_allocated" if free is None else "active_pending_free")
                 for d, a, size, req, free in con.execute(
                     "SELECT device, addr, size, requested, free_ns FROM tensor_blocks "
                     "WHERE free_ns IS NULL OR released_ns IS NULL"))
    nblocks = con.execute("SELECT count(*) FROM tensor_blocks").fetchone()[0]
    con.close()
    return stats, end, nblocks


def check_memviz(db, name, work):
    out = os.path.join(work, name + ".pickle")
    run(GL, "export", "--format", "memory_viz", "-o", out, db)
    raw = open(out, "rb").read()
    check(raw[:2] == b"\x80\x04", "%s: pickle protocol 4 (the viewer refuses 5)" % name)
    used = {op.name for op, _, _ in pickletools.genops(raw)}
    check(used <= VIEWER_OPCODES, "%s: opcodes the viewer cannot read: %s" % (name, used - VIEWER_OPCODES))
    snap = pickle.loads(raw)
    check(set(snap) == {"segments", "device_traces", "allocator_settings"}, "%s: top-level keys %s" % (name, set(snap)))
    rep = report(db)
    peaks = {d["device"]: d["peak"]["bytes"] for d in rep["devices"]}
    torch = torch_blocks(db)
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    has_sub = con.execute("SELECT count(*) FROM event_log e JOIN kind_names k ON k.id = e.kind "
                          "WHERE k.layer = 'sub'").fetchone()[0] if "layer" in [
        r[1] for r in con.execute("PRAGMA table_info(kind_names)")] else 0
    con.close()
    end_blocks = []
    for seg in snap["segments"]:
        where = "%s segment %#x" % (name, seg["address"])
        check(set(seg) == SEGMENT_KEYS, where + ": fields %s" % sorted(seg))
        check(seg["segment_pool_id"] == (0, 0) and seg["segment_type"] == "large" and
              isinstance(seg["is_expandable"], bool), where + ": pool, type, expandable")
        check_frames(seg["frames"], where)
        at = seg["address"]
        for b in seg["blocks"]:
            check(set(b) == BLOCK_KEYS and b["address"] == at, where + ": blocks tile the segment")
            check(b["state"] in ("active_allocated", "active_pending_free", "inactive"), where + ": block state")
            check(b["requested_size"] <= b["size"], where + ": a block holds what was asked")
            at += b["size"]
            if b["state"] != "inactive":
                end_blocks.append((seg["device"], b["address"], b["size"], b["requested_size"], b["state"]))
        check(at == seg["address"] + seg["total_size"], where + ": blocks cover the segment")
        held = [b for b in seg["blocks"] if b["state"] == "active_allocated"]
        check(seg["allocated_size"] == sum(b["size"] for b in held) and
              seg["requested_size"] == sum(b["requested_size"] for b in held) and
              seg["active_size"] == sum(b["size"] for b in seg["blocks"] if b["state"] != "inactive"),
              where + ": allocated, requested and active sizes are its blocks'")
    for device, trace in enumerate(snap["device_traces"]):
        segs, expandable, blocks, peak, seg_peak = replay(trace, name, device)
        end = sorted((s["address"], s["total_size"]) for s in snap["segments"] if s["device"] == device)
        check([(a, n) for a, n, _ in merged(segs, expandable)] == end,
              "%s device %d: the trace ends in the snapshot's segments" % (name, device))
        if torch:
            # blocks: the allocator's own peaks (requested bytes, as PyTorch's
            # trace counts them; its segments), the device peak the report states
            req, res = torch[0].get(device, (None, None))
            check(peak == req and seg_peak == res == peaks.get(device),
                  "%s device %d: trace peaks %d (blocks) %d (segments), allocator's %s %s, report %s" % (
                      name, device, peak, seg_peak, req, res, peaks.get(device)))
        elif has_sub and device in peaks:
            # regions inside a program's heaps: the heaps' CUDA memory is the segment
            check(seg_peak == peaks[device], "%s device %d: segments' trace peak %d, report peak %d" % (
                name, device, seg_peak, peaks[device]))
        elif device in peaks:
            check(peak == peaks[device], "%s device %d: trace peak %d, report peak %d" % (name, device, peak,
                                                                                      peaks[device]))
    if torch:
        allocs = sum(e["action"] == "alloc" for t in snap["device_traces"] for e in t)
        check(allocs == torch[2], "%s: an alloc entry per block (%d), tensor_blocks has %d" % (name, allocs, torch[2]))
        check(sorted(end_blocks) == torch[1], "%s: the blocks at the end are tensor_blocks' live ones: %s, want %s" % (
            name, sorted(end_blocks)[:3], torch[1][:3]))
    # the report counts the caching allocator's failed segment cudaMalloc
    # calls with its OOM (segment_failures); the trace has an entry for each
    ooms = sum(len(d["oom"]) + sum(o.get("segment_failures", 0) for o in d["oom"]) for d in rep["devices"])
    check(sum(e["action"] == "oom" for t in snap["device_traces"] for e in t) == ooms, "%s: one oom entry per OOM" % name)
    # --max-entries: the last entries of each device, as PyTorch's ring buffer keeps them
    cut = os.path.join(work, name + "-cut.pickle")
    run(GL, "export", "--format", "memory_viz", "--max-entries", "7", "-o", cut, db)
    short = pickle.load(open(cut, "rb"))
    for full, part in zip(snap["device_traces"], short["device_traces"]):
        check(len(part) <= min(len(full), 7 + 2) and (not part or full[-len(part):] == part),
              "%s: --max-entries 7 keeps the last entries (%d of %d)" % (name, len(part), len(full)))
    print("%s: memory_viz %d bytes, %d segments live at the end, %s trace entries%s" % (
        name, len(raw), len(snap["segments"]), [len(t) for t in snap["device_traces"]],
        ", %d blocks live at the end as tensor_blocks has them" % len(torch[1]) if torch else ""))


def annotations(db):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    n = dict(con.execute("SELECT op, count(*) FROM annotations GROUP BY op").fetchall())
    fails = con.execute("SELECT count(*) FROM event_log WHERE result != 0 OR op IN (11, 12)").fetchone()[0]
    con.close()
    return n.get("mark", 0), n.get("range_push", 0), fails


def track_points(trace):
    """Each counter track's points, in order: (ts, bytes)."""
    tracks = {}
    for e in trace["traceEvents"]:
        if e["ph"] == "C":
            tracks.setdefault(e["name"], []).append((e["ts"], e["args"]["bytes"]))
    return tracks


def check_perfetto_cut(db, name, full):
    """The default trace cuts each counter track to 2000 time buckets (and
    --counter-buckets 3 to 3): each track keeps its exact highest and lowest
    value with the time of its first highest point, its last value, and at
    most 3 points a bucket, a subsequence of the full track."""
    whole = track_points(full)
    for buckets in (None, 3):
        argv = [GL, "export", "--format", "perfetto"] + (["--counter-buckets", str(buckets)] if buckets else []) + [db]
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check(r.returncode == 0, "%s: perfetto %s exit %d" % (name, argv, r.returncode))
        cut = track_points(json.loads(r.stdout))
        n, kept = sum(len(v) for v in whole.values()), sum(len(v) for v in cut.values())
        check(set(cut) == set(whole), "%s: --counter-buckets %s keeps every track" % (name, buckets))
        for t, pts in whole.items():
            got = cut.get(t, [])
            hi = max(b for _, b in pts)
            check(max(b for _, b in got) == hi and min(b for _, b in got) == min(b for _, b in pts) and
                  got[-1] == pts[-1] and next(p for p in got if p[1] == hi) == next(p for p in pts if p[1] == hi),
                  "%s: --counter-buckets %s: %s keeps its exact peak, low and end" % (name, buckets, t))
            it = iter(pts)
            check(all(p in it for p in got) and len(got) <= 3 * (buckets or 2000),
                  "%s: --counter-buckets %s: %s is a subsequence of the full track" % (name, buckets, t))
        note = "%d of %d counter points kept" % (kept, n)
        check((note in r.stderr.decode()) == (kept < n),
              "%s: --counter-buckets %s: the note says what was cut (%d of %d): %r" % (name, buckets, kept, n,
                                                                                       r.stderr.decode()))
        if buckets == 3:
            # 3 buckets keep at most 9 points a track: a longer track must be cut
            check(kept < n or all(len(v) <= 9 for v in whole.values()),
                  "%s: 3 buckets cut the counters (%d of %d)" % (name, kept, n))


def check_perfetto(db, name, schema):
    trace = json.loads(run(GL, "export", "--format", "perfetto", "--counter-buckets", "all", db))
    check_perfetto_cut(db, name, trace)
    try:
        jsonschema.validate(trace, schema)
        print("%s: perfetto trace valid against the trace-event schema (%d events)" % (name, len(trace["traceEvents"])))
    except jsonschema.ValidationError as e:
        check(False, "%s: perfetto: %s at %s" % (name, e.message, list(e.absolute_path)))
    rep = report(db)
    ev = trace["traceEvents"]
    totals, cats, peak = {}, {}, {}
    counters = [e for e in ev if e["ph"] == "C"]
    # each change: the device's total, then the categories it changed (one;
    # with PyTorch's blocks also the allocator's cache)
    groups = []
    for c in counters:
        if c["name"].endswith(" live bytes"):
            groups.append([c])
        elif check(groups, "%s: a category counter before any total" % name):
            groups[-1].append(c)
    for k, (tot, *changed) in enumerate(groups):
        dev = int(tot["name"].split()[1])
        check(tot["name"] == "device %d live bytes" % dev and 1 <= len(changed) <= 2 and
              all(c["name"].startswith("device %d: " % dev) and c["ts"] == tot["ts"] for c in changed),
              "%s: counter group %d" % (name, k))
        totals[dev] = tot["args"]["bytes"]
        for c in changed:
            cats[c["name"]] = c["args"]["bytes"]
        peak[dev] = max(peak.get(dev, 0), totals[dev])
        check(sum(v for c, v in cats.items() if c.startswith("device %d: " % dev)) == totals[dev],
              "%s: categories add up to the total at %s" % (name, tot["ts"]))
    for d in rep["devices"]:
        if d["peak"]["bytes"]:
            check(peak.get(d["device"]) == d["peak"]["bytes"], "%s: perfetto peak of device %d" % (name, d["device"]))
    marks, ranges, fails = annotations(db)
    check(sum(e["ph"] == "X" and e.get("cat") == "mark" for e in ev) == marks, "%s: a slice per mark" % name)
    check(sum(e["ph"] == "X" and e.get("cat") == "range" for e in ev) == ranges, "%s: a slice per range" % name)
    check(sum(e["ph"] == "i" for e in ev) == fails, "%s: an instant per failure" % name)
    return marks, ranges


def check_perfetto_tensors(db, name):
    """A --torch blocks run: the counters are the report's ledger (tensors
    by category, the allocator's rest as allocator_cache) at its peak."""
    rep = report(db)
    trace = json.loads(run(GL, "export", "--format", "perfetto", "--counter-buckets", "all", db))
    for d in rep["devices"]:
        want = {}
        for g in d["peak"]["ledger"]:
            want[g["category"]] = want.get(g["category"], 0) + g["bytes"]
        at = {}
        seen_peak = False  # the first change to reach the peak is the peak
        for e in trace["traceEvents"]:
            if e["ph"] != "C" or not e["name"].startswith("device %d" % d["device"]):
                continue
            if e["name"].endswith(" live bytes"):
                if seen_peak:
                    break
                seen_peak = e["args"]["bytes"] == d["peak"]["bytes"]
                continue
            at[e["name"].split(": ", 1)[1]] = e["args"]["bytes"]
        got = {c: v for c, v in at.items() if v}
        if check(got == want, "%s device %d: perfetto categories at the peak %s, the report's ledger %s" % (
                name, d["device"], got, want)):
            print("%s device %d: perfetto categories at the peak are the report's ledger: %s" % (
                name, d["device"], sorted(got.items())))


def check_tagged(db):
    """Two allocations from one line, tagged as different things: each in
    its own category's counter (the category is not the call site's)."""
    high = {}
    for e in json.loads(run(GL, "export", "--format", "perfetto", db))["traceEvents"]:
        if e["ph"] == "C":
            high[e["name"]] = max(high.get(e["name"], 0), e["args"]["bytes"])
    want = {"device 0 live bytes": 3 << 20, "device 0: parameters": 1 << 20, "device 0: optimizer_state": 2 << 20}
    check(high == want, "tagged: perfetto counters peak at %s, want %s" % (high, want))


def check_speedscope(db, name, schema):
    doc = json.loads(run(GL, "export", "--format", "speedscope", db))
    try:
        jsonschema.validate(doc, schema)
    except jsonschema.ValidationError as e:
        check(False, "%s: speedscope: %s at %s" % (name, e.message, list(e.absolute_path)))
    rep = report(db)
    nframes = len(doc["shared"]["frames"])
    for p in doc["profiles"]:
        check(len(p["samples"]) == len(p["weights"]), "%s: a weight per sample" % name)
        check(all(0 <= i < nframes for s in p["samples"] for i in s), "%s: frame indices in range" % name)
        check(p["endValue"] == sum(p["weights"]), "%s: endValue is the total weight" % name)
    for d in rep["devices"]:
        prof = [p for p in doc["profiles"] if p["name"].startswith("device %d: live at the peak" % d["device"])]
        check(len(prof) == 1 and sum(prof[0]["weights"]) == d["peak"]["bytes"], "%s: peak profile of device %d" % (
            name, d["device"]))
    never = [p for p in doc["profiles"] if p["name"].startswith("never freed")]
    # never freed: leaks, what a caching allocator holds, and tensors tagged
    # as the program's (parameters, optimizer state, ...: held_bytes)
    want = sum(g["bytes"] for d in rep["devices"] for g in d["leaks"])  # leaks, caches, tagged tensors
    check(len(never) == 1 and sum(never[0]["weights"]) == want, "%s: never-freed profile weighs %d" % (name, want))
    print("%s: speedscope valid, %d profiles, %d frames" % (name, len(doc["profiles"]), nframes))


def main():
    schemas = os.path.join(SRC, "tests", "schemas")
    trace_schema = json.load(open(os.path.join(schemas, "trace_event.schema.json")))
    speed_schema = json.load(open(os.path.join(schemas, "speedscope.schema.json")))
    jsonschema.Draft7Validator.check_schema(trace_schema)
    jsonschema.Draft7Validator.check_schema(speed_schema)
    prog = lambda p: os.path.join(BUILD, "tests", p)  # noqa: E731
    runs = {"demo": [prog("demo")], "marks": [prog("marks")], "nvtx": [prog("nvtx")],
            "vmm": [prog("procaddr")], "managed": [prog("misc"), "managed"], "devices": [prog("misc"), "devices"], "pool": [prog("misc"), "pool"],
            "heaps": [prog("nvtx_mem")], "tagged": [prog("misc"), "tagged"]}
    # PyTorch's caching allocator without torch (tests/progs/torchalloc):
    # blocks inside segments, a free completed later on another thread,
    # expandable segments, blocks there before gpuledger attached, OOMs
    small = {"FAKECUDA_MEM_BYTES": "67108864"}
    for what, env in (("basic", None), ("expandable", None), ("late", None), ("frag", small)):
        runs["torch-" + what] = ([prog("torchalloc"), what], env)
    with tempfile.TemporaryDirectory(prefix="gl-exports-") as work:
        seen_marks = seen_ranges = 0
        for name, argv in runs.items():
            db = os.path.join(work, name + ".db")
            if name.startswith("torch-"):
                argv, env = argv
                run(GL, "run", "-q", "--torch", "blocks", "-o", db, "--", *argv, env=env)
            else:
                run(GL, "run", "-q", "-o", db, "--", *argv)
            check_memviz(db, name, work)
            m, r = check_perfetto(db, name, trace_schema)
            seen_marks += m
            seen_ranges += r
            check_speedscope(db, name, speed_schema)
            if name == "tagged":
                check_tagged(db)
            if name.startswith("torch-"):
                check_perfetto_tensors(db, name)
        check(seen_marks > 0 and seen_ranges > 0, "the runs had marks (%d) and ranges (%d)" % (seen_marks, seen_ranges))
    print("exports: %d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
