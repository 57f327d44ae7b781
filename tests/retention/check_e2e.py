#!/usr/bin/env python3
"""check_e2e.py BUILD_ROOT SOURCE_ROOT — what keeps memory alive, end to
end: train_retention.py (an unmodified loop on the stand-in torch,
tests/pystub, keeping each step's logits in a global list) under
`gpuledger run --torch blocks` on a fake device of 64 MiB runs out of memory
after 6 steps; the database's retention table then holds the paths found at
the steps that grew, at the out-of-memory and at exit (exact rows), each on a
block live then; `gpuledger leaks --steps` shows them under the growing
chain (text and JSON); with GPULEDGER_RETENTION=0 the table stays empty; a
path longer than a ring slot is cut at a character and flagged."""
import json
import os
import shutil
import sqlite3
import sys
import tempfile

BUILD, SRC = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SRC, "tests", "pytest"))
from check_plugin import GL, line_of, run, stand_in_torch  # noqa: E402 - the stand-in torch, as the plugin's test sets it up

failures = []


def check(what, got, want):
    if got != want:
        failures.append("%s:\n--- got\n%r\n--- expected\n%r" % (what, got, want))


def record(d, db, extra):
    env = {"PYTHONPATH": d, "GPULEDGER_CACHE_DIR": os.path.join(d, "cache"),
           "LD_LIBRARY_PATH": os.path.join(BUILD, "tests", "fakecuda"), "FAKECUDA_MEM_BYTES": str(64 << 20)}
    env.update(extra)
    r = run([GL, "run", "-q", "--torch", "blocks", "-o", db, "--", sys.executable, "train_retention.py"], env, d)
    check("train_retention.py ran (%s)" % extra, (r.returncode, r.stdout),
          (0, "train_retention: out of memory after 6 steps\n"))
    return r


def main():
    d = tempfile.mkdtemp(prefix="gl-retention-e2e-")
    try:
        checks(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    if failures:
        print("\n\n".join(failures))
        return 1
    print("check_e2e: retention rows, leaks text and JSON, GPULEDGER_RETENTION=0: as expected")
    return 0


def checks(d):
    stand_in_torch(d)
    shutil.copy(os.path.join(SRC, "tests", "retention", "train_retention.py"), d)
    prog = os.path.join(d, "train_retention.py")
    g = line_of(prog, "logits_kept = []")
    db = os.path.join(d, "t.db")
    r = record(d, db, {})
    check("nothing said on stderr", [ln for ln in r.stderr.splitlines() if "shim" not in ln and "built it" not in ln],
          [])
    con = sqlite3.connect(db)
    rows = con.execute("SELECT moment, step, bytes, path, root_file, root_line, complete, cut, pid = (SELECT pid"
                       " FROM run), elapsed_us > 0 FROM retention ORDER BY rowid").fetchall()
    path = "train_retention.py: global logits_kept (list, %d items) → [%d] → Tensor 8 MiB"
    want = [("step", s, 8 << 20, path % (s, s - 1), prog, g, 1, 0, 1, 1) for s in (3, 4, 5, 6)]
    # at the OOM and at exit: the root that holds the most, its newest item first
    want += [(m, 6, 8 << 20, path % (6, i), prog, g, 1, 0, 1, 1) for m in ("oom", "exit") for i in range(5, -1, -1)]
    check("retention rows", rows, want)
    # each path on a tensor block live when it was found (the newest at a step)
    live = con.execute("SELECT count(*) FROM retention r WHERE EXISTS (SELECT 1 FROM event_log a WHERE a.kind = 11"
                       " AND a.op = 1 AND a.addr = r.ptr AND a.seq <= r.seq AND NOT EXISTS (SELECT 1 FROM event_log f"
                       " WHERE f.ref_seq = a.seq AND f.op IN (2, 20) AND f.seq <= r.seq))").fetchone()[0]
    check("rows on live blocks", live, len(want))
    check("schema version", con.execute("PRAGMA user_version").fetchone()[0], 5)
    con.close()

    r = run([GL, "leaks", "--steps", db], {}, d)
    out = r.stdout.replace(d + "/", "")
    tail = out.split("\n")[-6:]
    check("leaks --steps: kept alive by", tail, [
        "           kept alive by (at the out-of-memory, after 6 optimizer steps; 6 paths):",
        "             " + path % (6, 5), "             " + path % (6, 4), "             " + path % (6, 3),
        "             and 3 more", ""])
    check("leaks --steps: the chain above them", "train_step (train_retention.py:%d)" % line_of(
        prog, "logits = torch.empty(8 << 20)") in out, True)
    r = run([GL, "leaks", "--steps", "--format", "json", db], {}, d)
    j = json.loads(r.stdout)
    runs = j["processes"]
    grow = runs[0]["growing"]
    k = grow[0].get("kept_alive", {})
    check("JSON kept_alive", (k.get("moment"), k.get("total"), [p["path"] for p in k.get("paths", [])],
                              [(os.path.basename(p["root_file"]), p["root_line"], p["step"], p["bytes"],
                                p["complete"]) for p in k.get("paths", [])]),
          ("oom", 6, [path % (6, 5), path % (6, 4), path % (6, 3)], [("train_retention.py", g, 6, 8 << 20, True)] * 3))

    r = run([GL, "report", "--format", "json", db], {}, d)
    ret = json.loads(r.stdout)["processes"][0].get("retention", [])
    check("report JSON: retention", [(x["moment"], x["step"], x["path"], x["complete"], x["block_seq"] > 0)
                                     for x in ret], [(w[0], w[1], w[3], True, True) for w in want])

    off = os.path.join(d, "off.db")
    record(d, off, {"GPULEDGER_RETENTION": "0"})
    con = sqlite3.connect(off)
    check("GPULEDGER_RETENTION=0: no rows", con.execute("SELECT count(*) FROM retention").fetchone()[0], 0)
    con.close()
    r = run([GL, "leaks", "--steps", off], {}, d)
    check("GPULEDGER_RETENTION=0: no kept-alive lines", "kept alive" in r.stdout, False)

    # a path longer than a ring slot: cut at a character, flagged; a moment
    # that is not one: refused
    cut_db = os.path.join(d, "cut.db")
    prog = ("from gpuledger import retention_torch as rt\n"
            "long = 'x.py: global kept (list, 1 item) ' + '→ [0] ' * 3000\n"
            "print(rt._record(2, -1, 4096, 8, 5, 0, long.encode(), b'/x.py', 7), "
            "rt._record(9, -1, 1, 1, 1, 1, b'p', b'', 0))\n")
    r = run([GL, "run", "-q", "-o", cut_db, "--", sys.executable, "-c", prog],
            {"LD_LIBRARY_PATH": os.path.join(BUILD, "tests", "fakecuda"), "GPULEDGER_STACK_DEPTH": "8"}, d)
    check("a long path: cut (1), a bad moment refused (-1)", r.stdout, "1 -1\n")
    con = sqlite3.connect(cut_db)
    row = con.execute("SELECT moment, step, ptr, bytes, root_file, root_line, elapsed_us, complete, cut,"
                      " length(CAST(path AS BLOB)), substr(path, 1, 38), path FROM retention").fetchall()
    plen = row[0][9] if row else 0
    full = len(("x.py: global kept (list, 1 item) " + "→ [0] " * 3000).encode())
    check("the cut row", [r_[:9] for r_ in row], [("exit", None, 4096, 8, "/x.py", 7, 5, 0, 1)])
    # a slot holds GPULEDGER_STACK_DEPTH + 24 (+ the Python depth) words; the
    # text was read back as UTF-8 by sqlite3 (a cut character would not be)
    check("the cut text: its start, shorter, whole characters",
          (row[0][10] if row else "", 200 < plen < full, len(row[0][11].encode()) == plen if row else False),
          ("x.py: global kept (list, 1 item) → [0]", True, True))
    con.close()


if __name__ == "__main__":
    sys.exit(main())
