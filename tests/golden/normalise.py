#!/usr/bin/env python3
"""normalise.py DB BUILD_ROOT SOURCE_ROOT — make a fresh recording reproducible.

Rewrites, in place, what differs between two recordings of the same program:
  * times: every *_ns column of every table becomes 1 s + 1 ms x (rank of the
    value among all time values of the database), so order and ties are kept;
    run.start_unix_ns and meta.monotonic_to_unix_ns become fixed values;
    meta.tsc_ns_per_tick becomes 1;
  * pid 1000, ppid 999, host "host"; thread ids 1000, 1001, ... in order of
    first appearance (by time);
  * addresses (addr, pool, stream, base, ip columns; aux of map events): the
    values are grouped into regions (no gap of 4 GiB or more inside one) and
    region i is moved to (i + 1) x 16 TiB, keeping each value's offset from
    its region's first 2 MiB boundary (so sizes, holes and alignment stay);
  * paths: BUILD_ROOT/ becomes build/ and SOURCE_ROOT/ is removed, in every
    text column.
Works on any table, so tables added later are normalised too."""
import sqlite3
import sys

TIME_BASE = 1_000_000_000
TIME_STEP = 1_000_000
UNIX_BASE = 1_700_000_000_000_000_000
ADDR_MIN = 0x10000
REGION_GAP = 1 << 32
REGION_STRIDE = 1 << 44
ADDR_COLUMNS = {"addr", "pool", "stream", "base", "ip"}
MAP_OP = 3


def tables(db):
    return [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]


def columns(db, table):
    return [(r[1], (r[2] or "").upper()) for r in db.execute(f'PRAGMA table_info("{table}")')]


def remap(db, table, col, mapping, where=""):
    if not mapping:
        return
    db.execute("CREATE TEMP TABLE IF NOT EXISTS m(old INTEGER PRIMARY KEY, new INTEGER)")
    db.execute("DELETE FROM m")
    db.executemany("INSERT INTO m VALUES(?, ?)", mapping.items())
    cond = f" AND ({where})" if where else ""
    db.execute(f'UPDATE "{table}" SET "{col}" = (SELECT new FROM m WHERE old = "{col}")'
               f' WHERE "{col}" IN (SELECT old FROM m){cond}')


def main():
    path, build_root, source_root = sys.argv[1:4]
    db = sqlite3.connect(path)
    cols = {t: columns(db, t) for t in tables(db)}

    # times
    time_cols = [(t, c) for t, cs in cols.items() for c, _ in cs if c.endswith("_ns") and c != "start_unix_ns"]
    values = set()
    for t, c in time_cols:
        values.update(r[0] for r in db.execute(f'SELECT DISTINCT "{c}" FROM "{t}" WHERE "{c}" IS NOT NULL'))
    tmap = {v: TIME_BASE + i * TIME_STEP for i, v in enumerate(sorted(values))}
    for t, c in time_cols:
        remap(db, t, c, tmap)
    db.execute("UPDATE run SET start_unix_ns = ?", (UNIX_BASE,))
    db.execute("UPDATE meta SET value = ? WHERE key = 'monotonic_to_unix_ns'", (str(UNIX_BASE - TIME_BASE),))
    db.execute("UPDATE meta SET value = '1' WHERE key = 'tsc_ns_per_tick'")

    # process, host, threads
    pid = db.execute("SELECT pid FROM run").fetchone()
    tids = []
    for t, cs in cols.items():
        if "tid" in [c for c, _ in cs]:
            ts = "ts_ns" if "ts_ns" in [c for c, _ in cs] else "NULL"
            tids += db.execute(f'SELECT {ts}, tid FROM "{t}" WHERE tid IS NOT NULL').fetchall()
    order = []
    if pid:
        order.append(pid[0])
    for _, tid in sorted(tids, key=lambda r: (r[0] is None, r[0] or 0)):
        if tid not in order:
            order.append(tid)
    tidmap = {v: 1000 + i for i, v in enumerate(order)}
    for t, cs in cols.items():
        if "tid" in [c for c, _ in cs]:
            remap(db, t, "tid", tidmap)
    db.execute("UPDATE run SET pid = 1000, ppid = 999, hostname = 'host'")

    # addresses
    addr_cols = [(t, c, "") for t, cs in cols.items() for c, _ in cs if c in ADDR_COLUMNS]
    for events in ("event_log", "event_rows"):  # the table of schemas 1-3, of schema 4
        if events in cols:
            addr_cols.append((events, "aux", f"op = {MAP_OP}"))
    values = set()
    for t, c, w in addr_cols:
        cond = f" AND ({w})" if w else ""
        values.update(r[0] for r in db.execute(f'SELECT DISTINCT "{c}" FROM "{t}" WHERE "{c}" >= {ADDR_MIN}{cond}'))
    amap, region, floor, last = {}, -1, 0, None
    for v in sorted(values):
        if last is None or v - last >= REGION_GAP:
            region += 1
            floor = v & ~((1 << 21) - 1)
        amap[v] = (region + 1) * REGION_STRIDE + (v - floor)
        last = v
    for t, c, w in addr_cols:
        remap(db, t, c, amap, w)

    # paths in text
    for t, cs in cols.items():
        for c, ty in cs:
            if ty == "TEXT":
                for old, new in ((build_root.rstrip("/") + "/", "build/"), (source_root.rstrip("/") + "/", "")):
                    db.execute(f'UPDATE "{t}" SET "{c}" = replace("{c}", ?, ?) WHERE instr("{c}", ?) > 0',
                               (old, new, old))
    db.commit()
    # small files: rollback journal (no -wal beside a checked-in file), 1 KiB pages
    db.execute("PRAGMA journal_mode = DELETE")
    db.execute("PRAGMA page_size = 1024")
    db.execute("VACUUM")
    db.close()


if __name__ == "__main__":
    main()
