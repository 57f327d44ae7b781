#!/usr/bin/env python3
"""check_many_steps.py — `leaks --steps` over a run of many steps ended by
the program's marks (bench_gen_db --marks: one 1 MiB buffer leaked a step,
400 tensors made and freed in it): the growing chain's live bytes at every
step end exact in JSON (k MiB after step k), and the text's line for a
person cut to the first and last six steps, said as such.

usage: check_many_steps.py BUILD_DIR"""
import json
import os
import subprocess
import sys
import tempfile

build = sys.argv[1]
gl = os.path.join(build, "report", "gpuledger")
failures = []


def check(what, got, want):
    if got != want:
        failures.append(what)
        print("%s:\n--- got\n%s\n--- expected\n%s" % (what, str(got)[:1500], str(want)[:1500]))


MIB = 1 << 20
with tempfile.TemporaryDirectory() as tmp:
    for events, pack in ((40000, []), (400000, ["--pack"])):
        db = os.path.join(tmp, "steps-%d.db" % events)
        r = subprocess.run([os.path.join(build, "bench", "bench_gen_db"), "--events", str(events), "--marks",
                            "--write-only", "--out", db] + pack, capture_output=True, text=True)
        check("bench_gen_db --marks %d" % events, r.returncode, 0)
        n = events // 802  # a step: 400 allocations, 400 frees, the leak, the mark
        r = subprocess.run([gl, "leaks", "--steps", "--format", "json", db], capture_output=True, text=True)
        check("%d events: leaks --steps --format json exit" % events, r.returncode, 0)
        p = json.loads(r.stdout)["processes"][0]
        g = p["growing"]
        check("%d events: one growing chain" % events, len(g), 1)
        steps = [s if isinstance(s, int) else s.get("bytes") for s in g[0]["steps"]] if g else []
        check("%d events: live bytes at each of the %d step ends" % (events, len(steps)), steps,
              [k * MIB for k in range(1, len(steps) + 1)])
        check("%d events: about one step per 802 events" % events, abs(len(steps) - n) <= 1, True)
        check("%d events: growth" % events, g[0]["growth_bytes"] if g else None, (len(steps) - 1) * MIB)
        r = subprocess.run([gl, "leaks", "--steps", db], capture_output=True, text=True)
        line = [l.strip() for l in r.stdout.splitlines() if l.strip().startswith("live per step")]
        m = len(steps)
        fmt = lambda k: "%d.00 MiB" % k if k < 1024 else "%.2f GiB" % (k / 1024)
        want = "live per step (steps 1-8 and %d-%d of %d): %s ... %s" % (
            m - 7, m, m, " ".join(fmt(k) for k in range(1, 9)), " ".join(fmt(k) for k in range(m - 7, m + 1)))
        check("%d events: the text's line, cut" % events, line, [want])

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("leaks --steps over many steps: every step exact, the line cut for a person")
