#!/usr/bin/env python3
"""kv_check.py — the checks of scripts/gpu-kvcache.sh, one
"PASS  ..." or "FAIL  ..." line each (and INFO lines for figures that have
no target):

    kv_check.py bench BENCH_OUTPUT... [-- OPS ROUNDS NDEPTHS DB...]
                                           NVTX page annotation <= 300 ns added;
                                           each DB holds every annotation
    kv_check.py pycost POOL_COST_OUTPUT... gpuledger.Pool's figure (stated)
    kv_check.py engine HOLES_JSON ENGINE_OUTPUT DB
    kv_check.py leak LEAKS_JSON ENGINE_OUTPUT LINE
    kv_check.py steptime BARE_SUMMARIES GPULEDGER_SUMMARIES

BENCH_OUTPUT: what bench/bench_nvtxmem.c printed under gpuledger;
ENGINE_OUTPUT: what scripts/gpu/kv_paged.py printed (its own figures);
LINE: the line of Engine.cancel that calls RetryCache.keep.
"""
import json
import re
import sqlite3
import statistics
import sys

TARGET_NS = 300  # the target: one annotation through NVTX from C, stack included
KEYS = ["pages_in_use", "pages_free", "holes", "largest_free_run", "external_fragmentation",
        "largest_free_ratio", "internal_fragmentation"]


def verdict(ok, text):
    print("%s  %s" % ("PASS" if ok else "FAIL", text))


def engine_lines(path):
    """The engine's JSON lines by their "what" (the last of each)."""
    out = {}
    for line in open(path, errors="replace"):
        if line.startswith("kv_paged "):
            rec = json.loads(line[len("kv_paged "):])
            out[rec["what"]] = rec
    return out


def bench_recorded(dbs, ops, rounds, ndepths):
    """The "on" figures are the cost of recording only if every annotation
    made while recording was on became one event and none was dropped."""
    want = 2 * ndepths * (rounds + 2) * ops  # 2 paths, 2 warm-up rounds
    got = []
    for db in dbs:
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
        n = con.execute("SELECT count(*) FROM event_log WHERE op = 1 AND kind = 14").fetchone()[0]
        dropped = con.execute("SELECT dropped_events FROM run").fetchone()[0]
        con.close()
        got.append((n, dropped))
    verdict(got and all(g == (want, 0) for g in got),
            "every annotation made while recording was on is recorded, none dropped: (regions, dropped) %s,"
            " want (%d, 0) each" % (got, want))


def bench(paths):
    if "--" in paths:
        k = paths.index("--")
        ops, rounds, ndepths = (int(x) for x in paths[k + 1:k + 4])
        bench_recorded(paths[k + 4:], ops, rounds, ndepths)
        paths = paths[:k]
    rows = {}  # (path, depth) -> [added ns per repeat]
    row = re.compile(r"^\| (.+?) \| (\d+) \| (-?\d+) \| (-?\d+) \| (-?\d+) \|$")
    for p in paths:
        for line in open(p):
            m = row.match(line.strip())
            if m:
                rows.setdefault((m.group(1), int(m.group(2))), []).append(int(m.group(5)))
    if not rows:
        verdict(False, "bench_nvtxmem printed no table under gpuledger (was the library loaded?)")
        return
    for (path, depth), added in sorted(rows.items()):
        med = statistics.median(added)
        what = "%s, loop %d frames down: %.0f ns added per annotation (median of %d processes: %s)" % (
            path, depth, med, len(added), added)
        if path.startswith("NVTX"):
            verdict(med <= TARGET_NS, "annotation cost through " + what + ", target <= %d" % TARGET_NS)
        else:
            print("INFO  " + what)


def pycost(paths):
    added = []
    for p in paths:
        for line in open(p):
            m = re.search(r"recording off (-?\d+), on (-?\d+), added (-?\d+) ns", line)
            if m:
                added.append(int(m.group(3)))
    if not added:
        verdict(False, "pool_cost.py printed no figure under gpuledger")
        return
    print("INFO  gpuledger.Pool from Python: %.0f ns added per annotation, Python stack included"
          " (median of %d processes: %s; no target, stated apart)" % (statistics.median(added), len(added), added))


def ours(p, page):
    return [p["pages_in_use"], p["pages_free"], p["holes"], p["largest_free_pages"],
            round(p["external_fragmentation"], 6), round(p["largest_free_ratio"], 6),
            round(p["internal_fragmentation"] or 0.0, 6)]


def engine(holes_json, engine_out, db):
    d = json.load(open(holes_json))["processes"][0]
    eng = engine_lines(engine_out)
    summary = eng.get("summary", {})
    heaps = d.get("heaps", [])
    layers = summary.get("layers", 0)
    verdict(len(heaps) == layers and layers > 0,
            "one heap per layer's KV tensor: %d heaps, %d layers" % (len(heaps), layers))
    if not heaps:
        return
    verdict(all(h["allocation"] != 0 for h in heaps),
            "every heap lies inside a CUDA allocation gpuledger recorded: %s" % [h["allocation"] for h in heaps])
    h = heaps[0]
    print("layer 0 over time (gpuledger: seq, pages in use, free, holes, largest free run, external fragmentation,"
          " largest_free_ratio, internal fragmentation):")
    series = h["series"]
    for p in series[:: max(1, len(series) // 16)]:
        print("   ", p["seq"], *ours(p, h["page_size"]))
    verdict(len(series) >= 16, "the series over time has %d points" % len(series))
    for what in ("peak", "end"):
        e = eng.get(what)
        theirs = [e[k] for k in KEYS] if e else None
        print("%-4s engine    %s" % (what, theirs))
        for k, hp in enumerate(heaps):
            mine = ours(hp[what], hp["page_size"])
            if k == 0 or mine != theirs:
                print("%-4s gpuledger %s (%s)" % (what, mine, hp["name"]))
        verdict(theirs is not None and all(ours(hp[what], hp["page_size"]) == theirs for hp in heaps),
                "gpuledger's figures at the %s equal the engine's own, in every layer (%s)" % (what, ", ".join(KEYS)))
    print("worst (gpuledger):", ours(h["worst"], h["page_size"]))
    leaked = [x["leaked_regions"] for x in heaps]
    verdict(not any(leaked), "no region left behind without the planted leak: %s" % leaked)
    # the regions live inside the KV tensors: the device's peak counts the tensors once
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    peak = con.execute("SELECT max(peak_bytes) FROM device_stats WHERE device >= 0").fetchone()[0] or 0
    con.close()
    kv, reserved = summary.get("kv_bytes", 0), summary.get("max_reserved", 0)
    verdict(kv > 0 and kv <= peak < reserved + kv // 2,
            "device peak %d B: holds the KV tensors (%d B) once, not twice (torch's max reserved %d B)"
            % (peak, kv, reserved))


def leak(leaks_json, engine_out, line):
    d = json.load(open(leaks_json))["processes"][0]
    eng = engine_lines(engine_out)
    end = eng.get("end", {})
    want = end.get("pages_in_use")
    hl = d.get("heap_leaks", [])
    counts = [x["leaked_regions"] for x in hl]
    verdict(len(hl) == eng.get("summary", {}).get("layers", -1) and want and all(c == want for c in counts),
            "regions never given back per heap %s = the engine's own count of pages still held by its retry cache (%s)"
            % (counts, want))

    def at_cancel(frames):
        return any((f.get("file") or "").endswith("kv_paged.py") and f.get("line") == line
                   and "cancel" in (f.get("symbol") or "") for f in frames)

    from_cancel = [sum(g["count"] for g in x["leaks"] if at_cancel(g["frames"])) for x in hl]
    verdict(hl and from_cancel == counts,
            "every leaked region's stack goes through Engine.cancel at kv_paged.py:%d (the cancel path): %s of %s"
            % (line, from_cancel, counts))
    if hl and hl[0]["leaks"]:
        g = hl[0]["leaks"][0]
        print("the leak in %s, %d regions, %d B:" % (hl[0]["name"], g["count"], g["bytes"]))
        py = [f for f in g["frames"] if f.get("python")]
        for f in (py or g["frames"])[:12]:
            print("    %s (%s:%s)" % (f.get("symbol"), f.get("file") or f.get("module"), f.get("line") or f.get("offset")))


def steptime(bare, gl):
    def ms(path):
        return [json.loads(s[len("kv_paged "):])["ms_per_step"] for s in open(path) if s.startswith("kv_paged ")]
    b, g = ms(bare), ms(gl)
    if not b or not g:
        verdict(False, "no step-time summary (bare %s, gpuledger %s)" % (b, g))
        return
    mb, mg = statistics.median(b), statistics.median(g)
    print("INFO  engine time per step: bare %.3f ms %s, under gpuledger %.3f ms %s: %+.1f %%"
          % (mb, b, mg, g, (mg / mb - 1) * 100))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmd, args = sys.argv[1], sys.argv[2:]
    try:
        if cmd == "bench":
            bench(args)
        elif cmd == "pycost":
            pycost(args)
        elif cmd == "engine":
            engine(*args)
        elif cmd == "leak":
            leak(args[0], args[1], int(args[2]))
        elif cmd == "steptime":
            steptime(*args)
        else:
            sys.exit(__doc__)
    except (OSError, ValueError, KeyError, IndexError, TypeError, AttributeError, sqlite3.Error) as e:
        verdict(False, "%s: could not check (%s: %s)" % (cmd, type(e).__name__, e))


if __name__ == "__main__":
    main()
