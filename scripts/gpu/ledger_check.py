"""ledger_check.py — compare a gpuledger database of a torch_ledger.py
workload with what PyTorch said (its --json), and print one PASS/FAIL line
per check of the tensor ledger, with the numbers:

  python3 ledger_check.py RUN.db RUN.json [--label NAME] [--report GPULEDGER]
  python3 ledger_check.py LEAK.db --report GPULEDGER --leak-line N [--steps S]

Reads the database with Python's sqlite3 (the device has no sqlite3
command); with --report, also checks the report's own output (`gpuledger
report --format json`, and `--at 'generate done'` for the KV cache): the
tensor, requested and reserved peaks, the one ledger at the device peak,
parameters, optimizer state and KV cache by identity, the caching
allocator's holes, the OOM verdict. --leak-line: a torch_train.py --leak
run, whose `leaks --steps` must take its steps from the optimizer and name
line N.
Exit status: the number of FAILs (0: all passed).
"""
import argparse
import json
import sqlite3
import subprocess
import sys

MiB = 1 << 20
# store/gl_event.h: kinds, operations, tag categories
K_BLOCK, K_SEGMENT = 11, 12
O_ALLOC, O_FREE, O_MAP, O_UNMAP, O_OOM, O_MARK, O_FREE_COMPLETED, O_TAG = 1, 2, 3, 4, 11, 13, 17, 19
O_FREE_REQUESTED = 20  # a block's free whose completion comes later (free: both at once)
TAGS = {1: "parameters", 2: "gradients", 3: "optimizer_state", 4: "kv_cache", 5: "buffers"}
DEVICE_KINDS = (1, 2, 3, 5, 8)  # device, async, managed, physical, static: what CUDA holds

fails = 0
label = ""


def check(name, ok, detail):
    global fails
    fails += 0 if ok else 1
    print("%s  %-14s %s: %s" % ("PASS" if ok else "FAIL", label, name, detail))


def mib(x):
    return "%.2f MiB" % (x / MiB)


class Run:
    reserved_at_device_peak = None

    def __init__(self, path):
        self.db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        self.ev = self.db.execute(
            "SELECT seq, op, kind, device, addr, size, aux, ref_seq, api FROM event_log ORDER BY seq").fetchall()
        self.blocks = {}  # alloc seq -> [addr, requested, block, free_seq, completed_seq]
        self.tags = {}    # alloc seq -> category (the first tag)
        for seq, op, kind, dev, addr, size, aux, ref, api in self.ev:
            if kind == K_BLOCK and op == O_ALLOC:
                self.blocks[seq] = [addr, size, aux or 0, None, None]
            elif kind == K_BLOCK and op in (O_FREE, O_FREE_REQUESTED) and ref in self.blocks:
                self.blocks[ref][3] = seq
                if op == O_FREE:
                    self.blocks[ref][4] = seq
            elif kind == K_BLOCK and op == O_FREE_COMPLETED and ref in self.blocks:
                self.blocks[ref][4] = seq
                if self.blocks[ref][3] is None:
                    self.blocks[ref][3] = seq
            elif op == O_TAG and ref in self.blocks and ref not in self.tags:
                self.tags[ref] = TAGS.get(aux, str(aux))

    def one(self, sql, *a):
        r = self.db.execute(sql, a).fetchone()
        return r[0] if r else None

    def mark_seq(self, text):
        return self.one("SELECT max(seq) FROM annotations WHERE label = ?", text)

    def live_blocks(self, seq):
        """Blocks allocated at or before seq and not freed (requested) by then."""
        return [(s, b) for s, b in self.blocks.items() if s <= seq and (b[3] is None or b[3] > seq)]

    def tagged(self, seq, category):
        return sum(b[1] for s, b in self.live_blocks(seq) if self.tags.get(s) == category)

    def segments_at(self, seq):
        """The allocator's reserved bytes after event seq (its segment events)."""
        total = 0
        for s, op, kind, dev, addr, size, aux, ref, api in self.ev:
            if s > seq:
                break
            if kind == K_SEGMENT:
                total += size if op in (O_ALLOC, O_MAP) else -size if op in (O_FREE, O_UNMAP) else 0
        return total

    def cuda_at(self, seq):
        """CUDA allocations live after event seq: {addr or handle: (kind, size, api)}."""
        rows = self.db.execute(
            "SELECT a.seq, a.kind, a.addr, a.size, f.seq FROM event_log a LEFT JOIN event_log f ON f.ref_seq = a.seq "
            "AND f.op IN (2, 8) AND f.kind NOT IN (11, 12) WHERE a.op IN (1, 7) AND a.result = 0 AND a.kind IN (%s) "
            "AND a.seq <= ?" % ",".join(map(str, DEVICE_KINDS)), (seq,)).fetchall()
        return [(k, addr, size) for s, k, addr, size, f in rows if f is None or f > seq]

    def mapped_handles_in(self, ranges):
        """Handles (cuMemCreate) ever mapped inside the given address ranges
        (a handle is made, then mapped: by address, whenever)."""
        rows = self.db.execute("SELECT addr, aux FROM event_log WHERE op = 3 AND kind = 7 AND result = 0").fetchall()
        return {handle for addr, handle in rows if any(lo <= addr < hi for lo, hi in ranges)}


def gl_json(gl, *args):
    """`gpuledger ARGS... --format json`, parsed; (None, error) when it fails."""
    r = subprocess.run([gl, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return None, "exit %d: %s" % (r.returncode, r.stderr.strip()[:200])
    try:
        return json.loads(r.stdout), ""
    except ValueError as e:
        return None, "not JSON: %s" % e


def device0(rep):
    for d in rep["processes"][0]["devices"]:
        if d["device"] == 0:
            return d
    return None


def requested_of(cats, name):
    return sum(c.get("requested", 0) for c in cats if c["category"] == name)


def report_checks(gl, db, run, t, peak_seq):
    """The report's own figures (gpuledger report --format json), against
    PyTorch's and against the database."""
    rep, err = gl_json(gl, "report", "--format", "json", "--top", "1000000", db)
    check("report --format json runs", rep is not None, err or "ok")
    dev = device0(rep) if rep else None
    if not dev:
        if rep:
            check("report: device 0", False, "no device 0 in the report")
        return
    tp = dev.get("tensor_peak") or {}
    check("report: tensor peak = max_memory_allocated", tp.get("bytes") == t["max_memory_allocated"],
          "%s vs %d" % (tp.get("bytes"), t["max_memory_allocated"]))
    check("report: requested peak = requested_bytes.all.peak", tp.get("requested_peak") == t["requested_peak"],
          "%s vs %d" % (tp.get("requested_peak"), t["requested_peak"]))
    check("report: reserved peak = max_memory_reserved", tp.get("reserved_peak") == t["max_memory_reserved"],
          "%s vs %d" % (tp.get("reserved_peak"), t["max_memory_reserved"]))
    # one ledger at the device peak: its rows sum to the CUDA total, the
    # allocator's part is its segments then, every other row has a stack
    pk = dev["peak"]
    lay = pk.get("layers") or {}
    rows = pk.get("ledger", [])
    alloc_part = lay.get("tensors", 0) + lay.get("cached_free", 0) + lay.get("pending", 0)
    check("report: at the device peak, tensors + cached + outside = the CUDA total",
          lay.get("total") == pk["bytes"] and sum(r["bytes"] for r in rows) == pk["bytes"],
          "%s = %s tensors + %s cached + %s pending + %s outside; rows sum to %s; device peak %s" % (
              mib(lay.get("total", 0)), mib(lay.get("tensors", 0)), mib(lay.get("cached_free", 0)),
              mib(lay.get("pending", 0)), mib(lay.get("outside_allocator", 0)), mib(sum(r["bytes"] for r in rows)),
              mib(pk["bytes"])))
    if run.reserved_at_device_peak is not None:
        check("report: at the device peak, tensors + cached = the allocator's segments",
              alloc_part == run.reserved_at_device_peak,
              "%d vs %d from its segment events" % (alloc_part, run.reserved_at_device_peak))
    unnamed = [r for r in rows if r.get("row") != "cached_free" and not r.get("frames")]
    check("report: at the device peak, every other row named by a stack", not unnamed,
          "%d rows, %d without frames (%s)" % (len(rows), len(unnamed), mib(sum(r["bytes"] for r in unnamed))))
    # identity: parameters and optimizer state at the tensor peak (requested
    # bytes), as the model and the optimizer count them
    cats = tp.get("categories", [])
    for cat, key, whose in (("parameters", "param_bytes", "model"),
                            ("optimizer_state", "optimizer_state_bytes", "optimizer")):
        if t.get(key):
            got = requested_of(cats, cat)
            check("report: %s at the tensor peak = from the %s" % (cat, whose), got == t[key],
                  "%d vs %d (%s)" % (got, t[key], mib(t[key])))
    if t.get("kv_cache_bytes"):
        at, err = gl_json(gl, "report", "--format", "json", "--top", "1000000", "--at", "generate done", db)
        atd = device0(at).get("at", {}) if at and device0(at) else {}
        got = requested_of(atd.get("categories", []), "kv_cache")
        check("report: kv_cache at 'generate done' = from the model", got == t["kv_cache_bytes"],
              "%d vs %d (%s)%s" % (got, t["kv_cache_bytes"], mib(t["kv_cache_bytes"]), " " + err if err else ""))
    # holes over time: the caching allocator's series, the last one = the
    # last sample in the database, fragmentation by the shared arithmetic
    ah = [h for h in dev.get("holes", []) if h.get("kind") == "caching allocator"]
    last = run.db.execute("SELECT cached_free, holes, largest_hole, active - requested FROM allocator_samples "
                          "WHERE device = 0 ORDER BY seq DESC, rowid DESC LIMIT 1").fetchone()
    if not ah:
        check("report: the caching allocator's holes over time", False, "no 'caching allocator' entry in holes")
    elif last:
        e = ah[0]["end"]
        frag = 1 - e["largest_free"] / e["free"] if e["free"] else 0.0
        check("report: the caching allocator's holes at the end = the last sample",
              (e["free"], e["holes"], e["largest_free"], e.get("unused_bytes")) == tuple(last)
              and abs(e["external_fragmentation"] - frag) < 1e-6,
              "%s free in %d holes, largest %s, external fragmentation %.3f, %s unused vs %s in %d, largest %s, "
              "%s unused" % (mib(e["free"]), e["holes"], mib(e["largest_free"]), e["external_fragmentation"],
                             mib(e.get("unused_bytes") or 0), mib(last[0]), last[1], mib(last[2]), mib(last[3])))
    # an OOM: the verdict and the holes then, against the allocator's snapshot
    if t.get("oom"):
        ooms = [o for o in dev.get("oom", []) if o.get("api") == "CUDACachingAllocator"]
        v = ooms[0].get("verdict") if ooms else None
        want = "fragmentation" if t["workload"] == "frag-oom" else "demand"
        h = t["holes_at_oom"]
        check("report: OOM verdict", v is not None and v["kind"] == want,
              "%s, want %s%s" % (v["kind"] if v else "none", want, (": " + v["text"][:200]) if v else ""))
        if v:
            check("report: holes at the OOM = the allocator's snapshot",
                  (v["cached_free"], v["holes"], v["largest_hole"]) == (h["cached_free"], h["holes"], h["largest"]),
                  "%s in %d holes, largest %s vs %s in %d, largest %s" % (
                      mib(v["cached_free"]), v["holes"], mib(v["largest_hole"]), mib(h["cached_free"]), h["holes"],
                      mib(h["largest"])))


def leak_checks(gl, db, line, steps):
    """torch_train.py --leak (no marks): `leaks --steps` takes its steps
    from the optimizer and names the leaking line."""
    rep, err = gl_json(gl, "leaks", "--steps", "--format", "json", db)
    p = rep["processes"][0] if rep else {}
    check("leaks --steps: steps from the optimizer", p.get("steps_from") == "optimizer" and p.get("steps") == steps,
          "steps_from %s, %s steps (want optimizer, %d)%s" % (p.get("steps_from"), p.get("steps"), steps,
                                                              " " + err if err else ""))
    where = "torch_train.py:%d" % line

    def lines(g):
        return ["%s:%s" % (f.get("file") or "", f.get("line")) for f in g.get("frames", []) if f.get("python")]
    grow = p.get("growing") or []
    hit = [g for g in grow if any(x.endswith(where) for x in lines(g))]
    g = hit[0] if hit else (grow[0] if grow else {})
    check("leaks --steps: names the leaking line %s" % where, bool(hit),
          "%s of %d growing stacks; it grows %s over the steps; its Python lines: %s" % (
              "#%d" % (grow.index(g) + 1) if hit else "none", len(grow), mib(g.get("growth_bytes", 0)),
              ", ".join(x.rsplit("/", 1)[-1] for x in lines(g)[:6])))

def main():
    global label
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("json", nargs="?", help="what PyTorch said (torch_ledger.py --json)")
    ap.add_argument("--label", default="")
    ap.add_argument("--report", help="path of the gpuledger command: also check its own output")
    ap.add_argument("--leak-line", type=int, help="torch_train.py --leak: the line that leaks (with --report)")
    ap.add_argument("--steps", type=int, default=12, help="with --leak-line: the optimizer steps it made")
    args = ap.parse_args()
    if args.leak_line:
        label = args.label or "leak"
        leak_checks(args.report, args.db, args.leak_line, args.steps)
        return
    t = json.load(open(args.json))
    label = args.label or t.get("workload", "")
    run = Run(args.db)
    nblk = len(run.blocks)
    check("block events recorded", nblk > 0, "%d blocks, %d tags" % (nblk, len(run.tags)))
    if not nblk:
        return
    bs = run.db.execute("SELECT allocated_peak, allocated_peak_seq, requested_peak, reserved_peak, unknown "
                        "FROM block_stats WHERE device = 0").fetchone()
    alloc_peak, peak_seq, req_peak, res_peak, unknown = bs
    check("tensor peak = max_memory_allocated", alloc_peak == t["max_memory_allocated"],
          "%d vs %d (%s)" % (alloc_peak, t["max_memory_allocated"], mib(alloc_peak)))
    check("requested peak = requested_bytes.all.peak", req_peak == t["requested_peak"],
          "%d vs %d" % (req_peak, t["requested_peak"]))
    check("reserved peak = max_memory_reserved", res_peak == t["max_memory_reserved"],
          "%d vs %d (%s)" % (res_peak, t["max_memory_reserved"], mib(res_peak)))
    check("every event fit the allocator model", unknown == 0, "%d did not" % unknown)
    # replayed from the events: the same peak
    cur = top = 0
    deltas = []
    for s, b in run.blocks.items():
        deltas.append((s, b[2]))
        if b[3] is not None:
            deltas.append((b[3], -b[2]))
    for s, d in sorted(deltas):
        cur += d
        top = max(top, cur)
    check("block rows replay to the same peak", top == alloc_peak, "%d vs %d" % (top, alloc_peak))
    # the blocks live at the end, against PyTorch's own snapshot
    end = run.mark_seq("ledger end")
    if end:
        ours = sorted((b[0], b[2]) for s, b in run.live_blocks(end))
        theirs = sorted((b[0], b[1]) for b in t["blocks_end"] if b[3] == "active_allocated")
        diff = len(set(ours) ^ set(theirs))
        check("live blocks at the end = memory_snapshot()", diff == 0,
              "%d blocks (%s) vs %d (%s), %d differ" % (len(ours), mib(sum(x[1] for x in ours)), len(theirs),
                                                        mib(sum(x[1] for x in theirs)), diff))
    # identity: parameters and optimizer state
    for cat, key in (("parameters", "param_bytes"), ("optimizer_state", "optimizer_state_bytes"),
                     ("kv_cache", "kv_cache_bytes")):
        if key not in t or not t[key]:
            continue
        at = run.mark_seq("generate done") if cat == "kv_cache" else peak_seq
        got = run.tagged(at, cat)
        where = "at 'generate done'" if cat == "kv_cache" else "at the tensor peak"
        if got != t[key] and cat == "optimizer_state" and end:
            got_end = run.tagged(end, cat)
            check("%s (end of run) = from the optimizer" % cat, got_end == t[key],
                  "%d vs %d (%s); at the peak %s" % (got_end, t[key], mib(t[key]), mib(got)))
            continue
        check("%s %s = from the %s" % (cat, where, "model" if cat != "optimizer_state" else "optimizer"),
              got == t[key], "%d vs %d (%s)" % (got, t[key], mib(t[key])))
    # one ledger at the device peak: CUDA = tensors + cached + outside
    dpeak = run.db.execute("SELECT peak_bytes, peak_seq FROM device_stats WHERE device = 0").fetchone()
    if dpeak and dpeak[1]:
        cuda_total, dseq = dpeak
        live = run.cuda_at(dseq)
        # the allocator's CUDA memory: what its segment events name (by
        # address; its SEGMENT_ALLOC / SEGMENT_MAP comes right after the CUDA
        # call that made the segment), whenever they came
        seg_addrs = {e[4] for e in run.ev if e[2] == K_SEGMENT and e[1] == O_ALLOC}
        ranges = [(e[4], e[4] + e[5]) for e in run.ev if e[2] == K_SEGMENT and e[1] == O_MAP]
        handles = run.mapped_handles_in(ranges)
        mine = sum(sz for k, a, sz in live if (k == 1 and a in seg_addrs) or (k == 5 and a in handles))
        # its reserved bytes then: after the segment event that follows the peak's CUDA call
        after = next((e[0] for e in run.ev if e[0] > dseq and e[2] == K_SEGMENT), dseq)
        nxt = [e for e in run.ev if dseq < e[0] < after and e[2] == K_BLOCK]
        at = after if not nxt else dseq
        reserved = run.segments_at(at)
        run.reserved_at_device_peak = reserved
        tensors = sum(b[2] for s_, b in run.live_blocks(dseq))
        check("at the device peak: allocator segments = its reserved bytes", mine == reserved,
              "CUDA allocations of the allocator %d vs its segments %d (after event %d)" % (mine, reserved, at))
        outside = sum(sz for k, a, sz in live) - mine
        check("at the device peak: tensors + cached + outside = CUDA total",
              sum(sz for k, a, sz in live) == cuda_total and tensors <= mine,
              "%s = %s tensors + %s cached in the allocator + %s outside it" % (
                  mib(cuda_total), mib(tensors), mib(mine - tensors), mib(outside)))
    # an OOM: the holes then, against the allocator's own snapshot
    if "oom" in t and t["oom"]:
        row = run.db.execute("SELECT e.seq, e.size FROM event_log e WHERE e.op = ? AND e.kind = ? ORDER BY seq "
                             "LIMIT 1", (O_OOM, K_BLOCK)).fetchone()
        check("the OOM is an event", row is not None, "seq %s" % (row[0] if row else None))
        if row:
            s = run.db.execute("SELECT cached_free, holes, largest_hole FROM allocator_samples WHERE seq = ? "
                               "AND device = 0", (row[0],)).fetchone()
            h = t["holes_at_oom"]
            if s:
                check("holes at the OOM = the allocator's snapshot", tuple(s) == (h["cached_free"], h["holes"],
                                                                                  h["largest"]),
                      "%s in %d holes, largest %s vs %s in %d, largest %s" % (
                          mib(s[0]), s[1], mib(s[2]), mib(h["cached_free"]), h["holes"], mib(h["largest"])))
                frag = s[0] >= row[1] and s[2] < row[1]
                want = t["workload"] == "frag-oom"
                check("OOM verdict", frag == want, "%s (asked %s, cached free %s, largest %s)" % (
                    "fragmentation" if frag else "demand", mib(row[1]), mib(s[0]), mib(s[2])))
            else:
                check("holes at the OOM sampled", False, "no allocator_samples row at seq %d" % row[0])
    if args.report:
        report_checks(args.report, args.db, run, t, peak_seq)


if __name__ == "__main__":
    main()
    sys.exit(min(fails, 100))
