#!/usr/bin/env python3
"""check_pack.py — a packed recording (schema 6, GPULEDGER_PACK=1, store/pack.h)
gives what a recording of one SQLite row per event gives: the same events
written through the store both ways (bench_gen_db: a training loop with a
leak per step; bench_writer --mix torch: segments, blocks with their
completions, ranges and marks), then every verb's output byte for byte, and
the documented views through the SQL module (libgpuledger_sql) row for row;
a recorded program under `gpuledger run --pack`; the packed file's size;
`gpuledger export --format sqlite [--pack]` both ways (every table and view
of a round trip row for row, every verb byte for byte) and its errors.

usage: check_pack.py BUILD_DIR"""
import os
import shutil
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


def same_tables(name, a_db, b_db):
    """every table and view of two unpacked files, row for row"""
    a, b = connect(a_db, load=False), connect(b_db, load=False)
    q = "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY 1"
    names = [r[0] for r in a.execute(q)]
    check("%s: the same tables and views" % name, [r[0] for r in b.execute(q)], names)
    for t in names:
        rows = lambda c: sorted(map(repr, c.execute('SELECT * FROM "%s"' % t)))
        check("%s: %s row for row" % (name, t), rows(b), rows(a))
    return len(names)


def export_sqlite(src, out, pack):
    r = run([gl, "export", "--format", "sqlite"] + (["--pack"] if pack else []) + ["-o", out, src])
    check("export --format sqlite %s%s: exit" % ("--pack " if pack else "", os.path.basename(src)),
          [r.returncode, r.stdout], [0, ""])
    check("export %s: its line" % os.path.basename(src), "-> %s (schema %d" % (out, 6 if pack else 5) in r.stderr,
          True)
    return r


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

    # export --format sqlite: rows -> packed -> rows gives every table back
    rows_db = os.path.join(tmp, "gen.db")
    conv_packed, conv_rows = os.path.join(tmp, "gen-conv-packed.db"), os.path.join(tmp, "gen-conv-rows.db")
    export_sqlite(rows_db, conv_packed, True)
    same_answers("exported packed", rows_db, conv_packed)
    export_sqlite(conv_packed, conv_rows, False)
    n = same_tables("rows -> packed -> rows", rows_db, conv_rows)
    print("export --format sqlite: rows -> packed -> rows, %d tables and views the same" % n)
    check("rows -> packed -> rows: schema 5, no module needed",
          connect(conv_rows, load=False).execute("SELECT count(*), max(schema_version) FROM event_log, run").fetchone(),
          (40000, 5))
    # a packed recording (the torch mix) unpacked for tools without the module
    torch_rows = os.path.join(tmp, "torch-conv-rows.db")
    export_sqlite(os.path.join(tmp, "torch-packed.db"), torch_rows, False)
    same_answers("exported rows", torch_rows, os.path.join(tmp, "torch-packed.db"))
    same_tables("torch mix: recorded as rows, and packed then exported", os.path.join(tmp, "torch.db"), torch_rows)
    # a bounded recording's rows (gaps in seq where pairs were folded), packed
    b_packed = os.path.join(tmp, "b-packed.db")
    export_sqlite(os.path.join(tmp, "b.db"), b_packed, True)
    same_answers("bounded recording, packed by export", os.path.join(tmp, "b.db"), b_packed)
    # what export refuses: exit 2, one line, nothing left behind
    golden = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "db", "demo.db")
    junk = os.path.join(tmp, "junk.db")
    with open(junk, "w") as f:
        f.write("not a database\n" * 20)
    damaged = os.path.join(tmp, "damaged.db")
    shutil.copy(conv_packed, damaged)
    con = sqlite3.connect(damaged)
    seq = con.execute("SELECT seq_lo FROM event_packs ORDER BY seq_lo LIMIT 1 OFFSET 3").fetchone()[0]
    con.execute("UPDATE event_packs SET data = substr(data, 1, 10) WHERE seq_lo = ?", (seq,))
    con.commit()
    con.close()
    r = run([gl, "summary", damaged])
    check("a damaged pack: summary says so", [r.returncode, "a pack of event_packs cannot be decoded" in r.stderr],
          [2, True])
    for args, says in (([damaged, "-o", os.path.join(tmp, "d.db")], "damaged.db: the pack of events from seq %d is "
                        "damaged" % seq),
                       ([rows_db, "-o", conv_rows], "exists: a database is never overwritten"),
                       ([golden, "-o", os.path.join(tmp, "old.db")], "schema 1: only recordings of schema 5 or 6"),
                       ([junk, "-o", os.path.join(tmp, "j.db")], "not a SQLite database"),
                       ([os.path.join(tmp, "none.db"), "-o", os.path.join(tmp, "n.db")], "No such file"),
                       ([rows_db], "name it with -o FILE"),
                       (["--pack", "--format", "csv", rows_db], "--pack applies to sqlite, not csv")):
        fmt = [] if "--format" in args else ["--format", "sqlite"]
        r = run([gl, "export"] + fmt + args)
        check("export %s: refused" % " ".join(args[-3:]), [r.returncode, says in r.stderr, r.stderr.count("\n")],
              [2, True, 1])
    # an interrupted export: the copy whole, or nothing (the partial file removed, the signal's own end)
    import signal
    import time
    for delay in (0.0, 0.02, 0.05):
        out = os.path.join(tmp, "interrupted.db")
        p = subprocess.Popen([gl, "export", "--format", "sqlite", "--pack", "-o", out, rows_db],
                             stderr=subprocess.DEVNULL)
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        rc = p.wait()
        left = sorted(f for f in os.listdir(tmp) if f.startswith("interrupted"))
        check("export interrupted after %.2f s: whole or nothing" % delay,
              left == [] and rc == -signal.SIGINT or left == ["interrupted.db"] and rc == 0, True)
        if os.path.exists(out):
            os.unlink(out)
    check("export: no partial file left", [f for f in os.listdir(tmp) if "partial" in f or f in ("old.db", "j.db", "d.db")],
          [])

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("packed recordings: the same answers, views and events as rows")
