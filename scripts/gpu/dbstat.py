"""dbstat.py — print figures from a gpuledger database as JSON (the device
machine has python3's sqlite3 but no sqlite3 command)."""
import json
import sqlite3
import sys

db = sqlite3.connect(sys.argv[1])
q = lambda sql: db.execute(sql).fetchone()[0]
print(json.dumps({
    "events": q("SELECT count(*) FROM events"),
    "dropped": q("SELECT dropped_events FROM run"),
    "peak_dev0": q("SELECT peak_bytes FROM device_stats WHERE device = 0"),
    "allocs": q("SELECT count(*) FROM allocations"),
    "unfreed_bytes": q("SELECT coalesce(sum(size), 0) FROM allocations WHERE free_ns IS NULL AND kind != 'host'"),
    "unfreed": q("SELECT count(*) FROM allocations WHERE free_ns IS NULL AND kind != 'host'"),
    "ooms": q("SELECT count(*) FROM events WHERE op = 'oom'"),
    "by_api": dict(db.execute("SELECT api, count(*) FROM events GROUP BY api").fetchall()),
    "top_frame_of_unfreed": [r[0] for r in db.execute(
        "SELECT f.symbol FROM allocations a JOIN stack_frames f ON f.stack_id = a.stack_id AND f.depth = 0 "
        "WHERE a.free_ns IS NULL AND a.kind != 'host' ORDER BY a.id")],
}))
