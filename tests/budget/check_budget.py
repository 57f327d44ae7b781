#!/usr/bin/env python3
"""check_budget.py — a bounded recording gives the answers of a full one.

The same synthetic job (tests/progs/torchalloc.c "long": 400 steps of a
PyTorch-like mix through the stand-in caching allocator, a batch leaked from
step 100 on, a 24 MiB temporary at step 200 — the peak until the leak passes
it —, an OOM for 1 GiB at step 300) is recorded in full and with
--budget 1M. The peak and its ledger, the OOM and its ledger, the leaks at
exit, `leaks --steps`, the OOM's holes sample and the diagnosis must be EQUAL (every field
of their JSON, times aside: the two runs are two processes), the calls and
events counted the same, and the budgeted file under its budget while the
full one is over it. Then two devices whose peaks come in different steps
(tests/progs/twopeaks.c): each device's peak and its ledger equal a full
recording's (a window still holding device 0's peak is not dropped when
device 1's rises). Then steps with pool growth (tests/progs/poolsteps.c):
`report --at` / `diff --at` inside an aggregated step refused (exit 2, the
exact line naming the step and the kept steps on either side, with their
times; from step_ends, and the same from the reader's own steps when the
table is missing), a step's end answered as a full recording does, the
exports' stderr note and perfetto's otherData.gpuledger_budget, `holes`'s
`not seen:` line and JSON "aggregated". Usage: check_budget.py BUILD_ROOT
"""
import csv
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

BUILD = sys.argv[1]
GL = os.path.join(BUILD, "report", "gpuledger")
PROG = os.path.join(BUILD, "tests", "torchalloc")
BUDGET = 1 << 20
TIME = re.compile(r"\+\d+\.\d+s|\d+\.\d+ s\b")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def record(d, name, *opts, prog=(PROG, "long", "400")):
    db = os.path.join(d, name)
    env = dict(os.environ, FAKECUDA_MEM_BYTES=str(256 << 20))
    r = subprocess.run([GL, "run", "-q", *opts, "-o", db, *prog], env=env, capture_output=True,
                       text=True, timeout=120)
    check(r.returncode == 0, f"{name}: gpuledger run exit {r.returncode}: {r.stderr}")
    return db


def verb(*args):
    r = subprocess.run([GL, *args], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, f"gpuledger {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    check(r.stderr == "", f"gpuledger {' '.join(args)} said: {r.stderr}")
    return r.stdout


def untimed(x):
    """x without what differs between two runs of one program: times, pid, path, and what
    the writer samples by time (outside_api: usage_samples at marks at most every 10 ms; holes:
    allocator_samples every 20 ms), which a budget never folds."""
    if isinstance(x, dict):
        return {k: untimed(v) for k, v in x.items()
                if not k.endswith("_ns") and k not in ("pid", "ppid", "path", "timeline", "budget", "holes",
                                                                   "outside_api")}
    if isinstance(x, list):  # the finding on what no API shows reads those samples too
        return [untimed(v) for v in x if not (isinstance(v, dict) and v.get("kind") == "outside")]
    if isinstance(x, str):
        return TIME.sub("T", x)
    return x


def first_diff(a, b, path=""):
    if type(a) is not type(b):
        return f"{path}: {str(a)[:80]} | {str(b)[:80]}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: only in one"
            d = first_diff(a[k], b[k], f"{path}.{k}")
            if d:
                return d
    elif isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items | {len(b)}"
        for i, (p, q) in enumerate(zip(a, b)):
            d = first_diff(p, q, f"{path}[{i}]")
            if d:
                return d
    elif a != b:
        return f"{path}: {str(a)[:120]} | {str(b)[:120]}"
    return None


def two_devices(d):
    """Device 0's peak at step 10, device 1's at step 25: both windows kept, both ledgers exact."""
    prog = (os.path.join(BUILD, "tests", "twopeaks"),)
    full = record(d, "twopeaks-full.db", prog=prog)
    bud = record(d, "twopeaks-budget.db", "--budget", "1M", prog=prog)
    db = sqlite3.connect(bud)
    windows = db.execute("SELECT step, why FROM step_windows ORDER BY step").fetchall()
    check(windows == [(0, "peak"), (1, "first"), (10, "peak"), (25, "peak"), (40, "last")],
          f"twopeaks: windows {windows}")
    meta = dict(db.execute("SELECT key, value FROM meta WHERE key LIKE 'budget%'"))
    check(meta.get("budget_steps_folded") == "36" and meta.get("budget_pairs_folded") == str(36 * 8),
          f"twopeaks: {meta.get('budget_steps_folded')} steps, {meta.get('budget_pairs_folded')} pairs folded")
    check(meta.get("budget_windows_dropped") == "0", f"twopeaks: {meta.get('budget_windows_dropped')} dropped")
    # step_ends: 41 steps (40 marks, then the rest up to the exit), each of the 40 at its mark
    ends = db.execute("SELECT count(*), max(step) FROM step_ends").fetchone()
    check(ends == (41, 40), f"twopeaks: step_ends {ends}")
    at_marks = db.execute("SELECT count(*) FROM step_ends e JOIN annotations a ON a.seq = e.seq AND a.ts_ns = e.ts_ns"
                          " AND a.op = 'mark' WHERE a.label = 'step ' || e.step").fetchone()[0]
    check(at_marks == 40, f"twopeaks: {at_marks} step ends at their marks")
    last = db.execute("SELECT e.seq = (SELECT max(seq) FROM event_log), e.ts_ns = r.end_ns FROM step_ends e, run r"
                      " WHERE e.step = 40").fetchone()
    check(last == (1, 1), f"twopeaks: the last step's end {last}")
    db.close()
    devs = [json.loads(verb("report", "--format", "json", p))["processes"][0]["devices"] for p in (full, bud)]
    want = {0: (9 << 20, 10), 1: (14 << 20, 25)}
    for f, b in zip(*devs):
        dev = f["device"]
        check((f["peak"]["bytes"], f["peak"]["step"]) == want.get(dev),
              f"twopeaks: device {dev}'s peak {f['peak']['bytes']} at step {f['peak']['step']}")
        ledger = [(e["bytes"], e["count"]) for e in f["peak"]["ledger"]]
        check(sorted(ledger) == sorted([(1 << 20 if dev == 0 else 2 << 20, 1),
                                        (8 << 20 if dev == 0 else 12 << 20, 1)]),
              f"twopeaks: device {dev}'s ledger {ledger}")
        dif = first_diff(untimed(f["peak"]), untimed(b["peak"]))
        check(dif is None, f"twopeaks: device {dev}'s peak differs with a budget: {dif}")
    check(len(devs[0]) == 2 and len(devs[1]) == 2, f"twopeaks: {len(devs[0])} and {len(devs[1])} devices")


def run_gl(*args):
    """gpuledger ARGS: its exit code, stdout (bytes: memory_viz is a pickle) and stderr as text."""
    r = subprocess.run([GL, *args], capture_output=True, timeout=120)
    r.stderr = r.stderr.decode()
    return r


def csv_rows(data):
    """An export's CSV rows without what differs from process to process (addr, alloc_ns, free_ns)."""
    return [[c for i, c in enumerate(row) if i not in (4, 6, 7)] for row in csv.reader(io.StringIO(data.decode()))]


def gaps(d):
    """poolsteps: 30 steps of 3 pool temporaries, 1 MiB kept at steps 5, 15, 25: what is aggregated is said."""
    prog = (os.path.join(BUILD, "tests", "poolsteps"),)
    full = record(d, "poolsteps-full.db", prog=prog)
    bud = record(d, "poolsteps-budget.db", "--budget", "1M", prog=prog)
    db = sqlite3.connect(bud)
    windows = db.execute("SELECT step, why FROM step_windows ORDER BY step").fetchall()
    # 6 and 16 raised the peak too, each dropped when the next growth step raised it again
    check(windows == [(0, "peak"), (1, "first"), (5, "peak"), (15, "peak"), (25, "peak"), (26, "peak"), (30, "last")],
          f"poolsteps: windows {windows}")
    ends = dict(db.execute("SELECT step, ts_ns FROM step_ends"))
    first = db.execute("SELECT min(ts_ns) FROM event_log").fetchone()[0]
    db.close()
    check(len(ends) == 31, f"poolsteps: {len(ends)} step ends")

    def rel(step):
        return "+%.6fs" % ((ends[step] - first) / 1e9)

    def refusal(path, when):
        return (f"gpuledger report: {path}: --at '{when}' is inside step 6 ({rel(5)} to {rel(6)}), which the budget"
                " aggregated (its alloc+free pairs are counts by stack, not events); ask for a moment of a step kept"
                f" in full instead: step 5 (peak, {rel(4)} to {rel(5)}) before it, step 15 (peak, {rel(14)} to"
                f" {rel(15)}) after it\n")

    # step 6: events 44 .. 50 (#44-#49 its pairs, folded; #50 its mark)
    mid = (ends[5] + ends[6]) // 2 - first
    for when in ("#46", f"{mid}ns"):
        r = run_gl("report", "--at", when, bud)
        check(r.returncode == 2 and r.stdout == b"" and r.stderr == refusal(bud, when),
              f"poolsteps: report --at {when}: exit {r.returncode}, {r.stderr!r}")
    r = run_gl("diff", "--at", "step 3", "--at", "#46", bud)
    check(r.returncode == 2 and r.stderr == refusal(bud, "#46").replace("gpuledger report:", "gpuledger diff:"),
          f"poolsteps: diff --at #46: exit {r.returncode}, {r.stderr!r}")
    # a step's end (its mark) is exact: the same ledger as the full recording's
    at = [json.loads(verb("report", "--at", "step 6", "--format", "json", p)) for p in (full, bud)]
    dif = first_diff(untimed(at[0]), untimed(at[1]))
    check(dif is None, f"poolsteps: report --at 'step 6' differs with a budget: {dif}")
    check(run_gl("report", "--at", "#43", bud).returncode == 0, "poolsteps: --at #43 (step 5, kept) refused")
    # an older schema-5 file without step_ends: the reader's own steps (the marks), the same answer
    old = os.path.join(d, "poolsteps-old.db")
    src = sqlite3.connect(bud)
    src.execute(f"VACUUM INTO '{old}'")
    src.close()
    o = sqlite3.connect(old)
    o.execute("DROP TABLE step_ends")
    o.commit()
    o.close()
    r = run_gl("report", "--at", "#46", old)
    check(r.returncode == 2 and r.stderr == refusal(old, "#46"), f"poolsteps: without step_ends: {r.stderr!r}")

    note = ("steps 2-4, 6-14, 16-24 and 27-29 (24 of 31) aggregated by the budget: 72 alloc+free pairs not shown"
            " (step_aggregates has them by step and stack)")
    # perfetto with every counter point: its downsampling note depends on how the points fall in time buckets
    for fmt, *what in (("perfetto", "--counter-buckets", "all"), ("memory_viz",), ("csv",),
                       ("folded", "--what", "allocs")):
        r = run_gl("export", "--format", fmt, *what, bud)
        check(r.returncode == 0 and r.stderr == f"gpuledger export: {bud}: {note}\n",
              f"poolsteps: export {fmt}: exit {r.returncode}, {r.stderr!r}")
        rf = run_gl("export", "--format", fmt, *what, full)
        check(rf.returncode == 0 and rf.stderr == "", f"poolsteps: export {fmt} of the full recording: {rf.stderr!r}")
        if fmt == "perfetto":
            other = json.loads(r.stdout).get("otherData")
            check(other == {"gpuledger_budget": note}, f"poolsteps: perfetto otherData {other}")
            check("otherData" not in json.loads(rf.stdout), "poolsteps: otherData in a full recording's trace")
    # the peak's live set and what was never freed are a full recording's: no note, the same output
    for fmt, *what in (("folded",), ("folded", "--what", "leaks"), ("csv", "--what", "peak"),
                       ("csv", "--what", "leaks"), ("speedscope",)):
        r, rf = (run_gl("export", "--format", fmt, *what, p) for p in (bud, full))
        same = (csv_rows(r.stdout) == csv_rows(rf.stdout)) if fmt == "csv" else r.stdout == rf.stdout
        check(r.returncode == 0 and r.stderr == "" and same and (r.stdout or what == ["--what", "leaks"]),
              f"poolsteps: export {fmt} {what}: exit {r.returncode}, {r.stderr!r}, same as full: {same}")
    text = verb("holes", bud).splitlines()
    check(len(text) > 1 and text[1] == "not seen: steps 2-4, 6-14, 16-24 and 27-29 (24 of 31) aggregated by the"
          " budget (72 alloc+free pairs): pools, reserved ranges and heaps are seen at those steps' ends only; the"
          " caching allocator's samples are all there", f"poolsteps: holes says {text[1:2]}")
    check(not any(t.startswith("not seen:") for t in verb("holes", full).splitlines()), "poolsteps: full holes")
    hj = [json.loads(verb("holes", "--format", "json", p))["processes"][0] for p in (full, bud)]
    check(hj[1].get("aggregated") == {"steps": 24, "of": 31, "ranges": "2-4, 6-14, 16-24 and 27-29", "pairs": 72},
          f"poolsteps: holes JSON aggregated {hj[1].get('aggregated')}")
    check("aggregated" not in hj[0], "poolsteps: 'aggregated' in a full recording's holes")
    print(f"poolsteps: {len(windows)} windows, 24 of 31 steps aggregated; refusals, notes and holes checked")
    check(len(hj[0]["holes"]) == 1 and untimed(hj[0]["holes"][0]["series"][-1]) ==
          untimed(hj[1]["holes"][0]["series"][-1]), "poolsteps: the pool's holes at the end")


def program_marks(d):
    """poolsteps optimizer: the program marks "forward" inside each of the optimizer's steps, so the writer's
    steps (one per mark) are halves of the reader's: what is said is in the reader's steps, as the report's."""
    prog = (os.path.join(BUILD, "tests", "poolsteps"), "optimizer")
    full = record(d, "optsteps-full.db", prog=prog)
    bud = record(d, "optsteps-budget.db", "--budget", "1M", prog=prog)
    db = sqlite3.connect(bud)
    windows = db.execute("SELECT step, why FROM step_windows ORDER BY step").fetchall()
    # the writer's step 2k is the reader's step k before "forward", 2k + 1 the rest; the growth (a peak)
    # comes after "forward" in steps 5, 15, 25; 60: what follows the last mark
    check(windows == [(0, "peak"), (1, "first"), (11, "peak"), (31, "peak"), (51, "peak"), (60, "last")],
          f"optsteps: windows {windows}")
    ends = [t for _, t in db.execute("SELECT step, ts_ns FROM step_ends ORDER BY step")]
    first = db.execute("SELECT min(ts_ns) FROM event_log").fetchone()[0]
    marks = db.execute("SELECT seq, label FROM annotations WHERE op = 'mark' ORDER BY seq").fetchall()
    db.close()
    check(len(ends) == 61 and len(marks) == 60, f"optsteps: {len(ends)} step ends, {len(marks)} marks")

    def rel(step):
        return "+%.6fs" % ((ends[step] - first) / 1e9)

    # the reader's steps 1-29 have an aggregated half; 0 and 30 (after the last mark) are whole
    note = ("steps 1-29 (29 of 31) aggregated by the budget: 165 alloc+free pairs not shown"
            " (step_aggregates has them by step and stack)")
    r = run_gl("export", "--format", "csv", bud)
    check(r.returncode == 0 and r.stderr == f"gpuledger export: {bud}: {note}\n", f"optsteps: export: {r.stderr!r}")
    text = verb("report", bud)
    check("steps aggregated by stack (165 alloc+free pairs), 2 steps of full events" in text and
          "29 steps aggregated" in text, "optsteps: the budget line in the reader's steps")
    # an event of the reader's step 10, before its "forward": the writer's step 20
    seq = next(q for q, label in marks if label == "optimizer step 10") + 2
    r = run_gl("report", "--at", f"#{seq}", bud)
    want = (f"gpuledger report: {bud}: --at '#{seq}' is inside step 10 (its part from {rel(19)} to {rel(20)}, between"
            " two marks), which the budget aggregated (its alloc+free pairs are counts by stack, not events); ask for"
            f" a moment of a step kept in full instead: step 5 (peak, {rel(10)} to {rel(11)}) before it, step 15"
            f" (peak, {rel(30)} to {rel(31)}) after it\n")
    check(r.returncode == 2 and r.stderr == want, f"optsteps: report --at #{seq}: {r.stderr!r}")
    # the answers in the same steps as a full recording's
    rep_full, rep_bud = (json.loads(verb("report", "--format", "json", p)) for p in (full, bud))
    peak_f, peak_b = (x["processes"][0]["devices"][0]["peak"] for x in (rep_full, rep_bud))
    check(peak_f["step"] == peak_b["step"] == 25 and peak_b["ledger"] == peak_f["ledger"],
          f"optsteps: the peak in step {peak_f['step']} / {peak_b['step']}")
    leaks_f, leaks_b = (json.loads(verb("leaks", "--steps", "--format", "json", p)) for p in (full, bud))
    dif = first_diff(untimed(leaks_f), untimed(leaks_b))
    check(dif is None, f"optsteps: leaks --steps differs: {dif}")
    print("optsteps: 6 windows of 61 writer steps, said in the reader's 31")


def damaged(d, bud, events):
    """Aggregates no writer makes (pairs below 0, or 2^63 - 1: their sums
    would wrap): those rows are not counted, and the rest is."""
    bad = os.path.join(d, "damaged.db")
    shutil.copy(bud, bad)
    db = sqlite3.connect(bad)
    rows = db.execute("SELECT rowid, pairs FROM step_stacks ORDER BY rowid LIMIT 2").fetchall()
    db.execute("UPDATE step_stacks SET pairs = -5 WHERE rowid = ?", (rows[0][0],))
    db.execute("UPDATE step_stacks SET pairs = 9223372036854775807 WHERE rowid = ?", (rows[1][0],))
    db.commit()
    db.close()
    rep = json.loads(verb("report", "--format", "json", bad))
    got = rep["processes"][0]["events"]
    want = events - 2 * (rows[0][1] + rows[1][1])
    check(got == want, f"damaged step_stacks: {got} events, not {want}")


def main():
    for bad in ("lots", "12X", "1000"):  # not a size; below the smallest budget (1M)
        r = subprocess.run([GL, "run", "--budget", bad, "true"], capture_output=True, text=True, timeout=60)
        check(r.returncode == 2 and f"--budget wants a size of at least 1M (e.g. 512M, 1G, 2GiB), not '{bad}'"
              in r.stderr, f"run --budget {bad}: exit {r.returncode}, {r.stderr!r}")
    with tempfile.TemporaryDirectory() as d:
        # the recorder itself may split a block's free in two events (its
        # completion taken after 200 us, architecture.md): two runs then
        # differ by an event whatever the budget; such a pair is run again
        for attempt in range(5):
            full = record(d, f"full{attempt}.db")
            bud = record(d, f"budget{attempt}.db", "--budget", "1M")
            counts = [sqlite3.connect(p).execute("SELECT event_count FROM run").fetchone()[0] for p in (full, bud)]
            if counts[0] == counts[1]:
                break
            print(f"runs of {counts[0]} and {counts[1]} events: again")
        full_size, bud_size = os.path.getsize(full), os.path.getsize(bud)
        check(not os.path.exists(bud + "-wal") or os.path.getsize(bud + "-wal") == 0, "budget.db left a WAL")
        check(full_size > BUDGET, f"the full recording ({full_size} B) should be over 1 MiB")
        check(bud_size < BUDGET, f"the budgeted recording ({bud_size} B) is over its budget")
        db = sqlite3.connect(bud)
        meta = dict(db.execute("SELECT key, value FROM meta WHERE key LIKE 'budget%'"))
        check(meta.get("budget_bytes") == str(BUDGET), f"meta budget_bytes {meta.get('budget_bytes')}")
        check(int(meta.get("budget_steps_folded", 0)) >= 390, f"steps aggregated: {meta.get('budget_steps_folded')}")
        check(int(meta.get("budget_rows_dropped", 1)) == 0, "rows dropped under a budget that holds the run")
        check(db.execute("PRAGMA integrity_check").fetchone()[0] == "ok", "budget.db integrity")
        pairs = db.execute("SELECT sum(pairs) FROM step_stacks").fetchone()[0]
        check(pairs == int(meta.get("budget_pairs_folded", -1)), f"step_stacks holds {pairs} pairs")
        why = dict(db.execute("SELECT why, count(*) FROM step_windows GROUP BY why"))
        check(why.get("failure") == 1 and why.get("last") == 1 and why.get("peak", 0) >= 1 and
              sum(why.values()) == int(meta.get("budget_steps_full", -1)), f"windows kept: {why}")
        db.close()

        rep_full, rep_bud = (json.loads(verb("report", "--format", "json", p)) for p in (full, bud))
        dev_f, dev_b = rep_full["processes"][0]["devices"][0], rep_bud["processes"][0]["devices"][0]
        # the answers themselves, exact
        check(dev_f["peak"]["bytes"] == 102760448, f"peak {dev_f['peak']['bytes']}")
        check(dev_b["peak"]["bytes"] == dev_f["peak"]["bytes"] and dev_b["peak"]["seq"] == dev_f["peak"]["seq"],
              "peak bytes and event")
        check(dev_b["peak"]["ledger"] == dev_f["peak"]["ledger"], "the peak's ledger")
        check(dev_b["tensor_peak"]["bytes"] == dev_f["tensor_peak"]["bytes"] == 98598912, "the tensor peak")
        check(len(dev_f["oom"]) == 1 and dev_f["oom"][0]["step"] == 300, f"the OOM: {dev_f['oom']}")
        check(untimed(dev_b["oom"]) == untimed(dev_f["oom"]), "the OOM and its ledger")
        check(dev_b["leak_bytes"] == dev_f["leak_bytes"], "leak bytes")
        check(rep_bud["processes"][0]["budget"]["steps_aggregated"] >= 390, "the report's budget")
        d = first_diff(untimed(rep_full), untimed(rep_bud))
        check(d is None, f"report --format json differs: {d}")

        leaks_f, leaks_b = (json.loads(verb("leaks", "--steps", "--format", "json", p)) for p in (full, bud))
        g = leaks_f["processes"][0]["growing"]
        check(len(g) == 1 and g[0]["growth_bytes"] == 299 * 256 * 1024, f"growing: {[x['growth_bytes'] for x in g]}")
        leak = leaks_f["processes"][0]["leaks"][0]
        check(leak["bytes"] == 300 * 256 * 1024 and leak["count"] == 300, f"leak {leak['bytes']} {leak['count']}")
        d = first_diff(untimed(leaks_f), untimed(leaks_b))
        check(d is None, f"leaks --steps differs: {d}")

        # holes: the caching allocator's come from allocator_samples, taken
        # every 20 ms and at each OOM (never folded): two runs sample at
        # other moments, so only the OOM's sample is compared
        oom_sample = "SELECT reserved, allocated, cached_free, holes, largest_hole FROM allocator_samples" \
                     " WHERE seq IN (SELECT seq FROM event_log WHERE op = 11)"
        samples = [sqlite3.connect(p).execute(oom_sample).fetchall() for p in (full, bud)]
        check(len(samples[0]) == 1 and samples[0] == samples[1], f"the OOM's holes sample: {samples}")
        verb("holes", bud)

        damaged(os.path.dirname(bud), bud, rep_bud["processes"][0]["events"])
        text = verb("report", bud)
        check("budget 1.00 MiB: " in text and "steps aggregated by stack" in text, "the report's budget line")
        print(f"full {full_size} B, budgeted {bud_size} B; {meta.get('budget_steps_folded')} steps aggregated,"
              f" {pairs} pairs")
    with tempfile.TemporaryDirectory() as tmp:
        two_devices(tmp)
        gaps(tmp)
        program_marks(tmp)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
