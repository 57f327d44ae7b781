#!/usr/bin/env python3
"""check_pack.py — a packed recording (schema 6, GPULEDGER_PACK=1, store/pack.h)
gives what a recording of one SQLite row per event gives: the same events
written through the store both ways (bench_gen_db: a training loop with a
leak per step; bench_writer --mix torch: segments, blocks with their
completions, ranges and marks), then every verb's output byte for byte, and
the documented views through the SQL module (libgpuledger_sql) row for row;
a recorded program under `gpuledger run --pack`; the packed file's size.

usage: check_pack.py BUILD_DIR"""
import os
import sqlite3
import subprocess
import sys
import tempfile

build = sys.argv[1]
gl = os.path.join(build, "report", "gpuledger")
ext = os.path.join(build, "store", "libgpuledger_sql")
failures = []


def check(what, got, want):
    if got != want:
        failures.append(what)
        print("%s:\n--- got\n%s\n--- expected\n%s" % (what, str(got)[:2000], str(want)[:2000]))


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def connect(path, load=True):
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    if load:
        con.enable_load_extension(True)
        con.load_extension(ext)
    return con


VERBS = [["summary"], ["report"], ["report", "--format", "json"], ["report", "--format", "html"],
         ["leaks"], ["leaks", "--steps"], ["leaks", "--lifetime-ms", "1"], ["holes"],
         ["gate", "--max-leak-bytes", "1G"], ["export", "--format", "perfetto"],
         ["export", "--format", "memory_viz"], ["export", "--format", "speedscope"]]

VIEWS = ["SELECT * FROM event_log ORDER BY seq", "SELECT * FROM events ORDER BY seq",
         "SELECT * FROM allocations ORDER BY id", "SELECT * FROM tensor_blocks ORDER BY id",
         "SELECT * FROM event_log WHERE seq BETWEEN 500 AND 520 ORDER BY seq",
         "SELECT seq FROM event_log WHERE ref_seq = 300", "SELECT count(*), max(seq) FROM event_rows",
         "SELECT count(*) FROM event_log WHERE op = 1 AND kind = 11",
         "SELECT max(seq) FROM event_log WHERE ts_ns <= (SELECT min(ts_ns) + 100000 FROM event_log)"]


def same_answers(name, rows_db, packed_db):
    for verb in VERBS:
        a = subprocess.run([gl] + verb + [rows_db], capture_output=True)
        b = subprocess.run([gl] + verb + [packed_db], capture_output=True)
        norm = lambda s, p: s.replace(p.encode(), b"DB")
        check("%s: gpuledger %s: exit" % (name, " ".join(verb)), b.returncode, a.returncode)
        check("%s: gpuledger %s: output" % (name, " ".join(verb)), norm(b.stdout, packed_db),
              norm(a.stdout, rows_db))
        check("%s: gpuledger %s: stderr" % (name, " ".join(verb)), norm(b.stderr, packed_db),
              norm(a.stderr, rows_db))
    r, p = connect(rows_db, load=False), connect(packed_db)
    for q in VIEWS:
        check("%s: %s" % (name, q), p.execute(q).fetchall(), r.execute(q).fetchall())
    check("%s: schema" % name, [p.execute("PRAGMA user_version").fetchone()[0],
                                p.execute("SELECT schema_version FROM run").fetchone()[0]], [6, 6])
    check("%s: every event in a pack" % name,
          p.execute("SELECT sum(n) FROM event_packs").fetchone()[0],
          r.execute("SELECT count(*) FROM event_rows").fetchone()[0])
    return os.path.getsize(rows_db), os.path.getsize(packed_db)


with tempfile.TemporaryDirectory() as tmp:
    gen = os.path.join(build, "bench", "bench_gen_db")
    rows_db, packed_db = os.path.join(tmp, "gen.db"), os.path.join(tmp, "gen-packed.db")
    for out, extra in ((rows_db, []), (packed_db, ["--pack"])):
        r = run([gen, "--events", "40000", "--write-only", "--out", out] + extra)
        check("bench_gen_db %s" % " ".join(extra), r.returncode, 0)
    full, packed = same_answers("training loop", rows_db, packed_db)
    print("training loop: %d events, %d bytes in rows, %d packed" % (40000, full, packed))
    per_event = connect(packed_db).execute("SELECT 1.0 * sum(length(data)) / sum(n) FROM event_packs").fetchone()[0]
    print("training loop: %.1f bytes per event in the packs" % per_event)
    check("training loop: at most 16 bytes per event in the packs", per_event <= 16, True)

    writer = os.path.join(build, "bench", "bench_writer")
    rows_db, packed_db = os.path.join(tmp, "torch.db"), os.path.join(tmp, "torch-packed.db")
    for out, layout in ((rows_db, "rows"), (packed_db, "packed")):
        r = run([writer, "--events", "30000", "--rounds", "1", "--mix", "torch", "--layout", layout, "--keep", out])
        check("bench_writer --layout %s" % layout, r.returncode, 0)
    same_answers("tensor blocks", rows_db, packed_db)

    # without the module, a packed recording says what it needs
    con = connect(packed_db, load=False)
    try:
        con.execute("SELECT count(*) FROM event_log").fetchone()
        check("event_log without the module", "read", "an error naming gl_packed_events")
    except sqlite3.OperationalError as e:
        check("event_log without the module", "gl_packed_events" in str(e), True)

    # a recorded program, packed: the demo's figures as unpacked
    env = dict(os.environ)
    dbs = {}
    for name, extra in (("rows", []), ("packed", ["--pack"])):
        dbs[name] = os.path.join(tmp, "demo-%s.db" % name)
        r = run([gl, "run", "-q", "-o", dbs[name]] + extra + ["--", os.path.join(build, "tests", "demo")], env=env)
        check("gpuledger run %s demo" % " ".join(extra), r.returncode, 0)
    q = ("SELECT op, kind, device, size, stack_id IS NOT NULL, seq - coalesce(ref_seq, seq), result"
         " FROM event_log ORDER BY seq")
    check("demo: the same events", connect(dbs["packed"]).execute(q).fetchall(),
          connect(dbs["rows"], load=False).execute(q).fetchall())
    check("demo: packed", connect(dbs["packed"]).execute("SELECT value FROM meta WHERE key = 'packed'").fetchone(),
          ("1",))
    r = run([gl, "run", "-q", "--pack", "--budget", "64M", "-o", os.path.join(tmp, "b.db"), "--",
             os.path.join(build, "tests", "demo")], env=env)
    check("--pack with --budget: said, recorded unpacked",
          ["keeps its rows unpacked" in r.stderr, r.returncode,
           connect(os.path.join(tmp, "b.db"), load=False).execute("PRAGMA user_version").fetchone()[0]],
          [True, 0, 5])

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("packed recordings: the same answers, views and events as rows")
