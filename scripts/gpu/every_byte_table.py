"""every_byte_table.py — the tables of scripts/gpu-every-byte.sh, from one
run of every_byte under gpuledger (its database and its STEP lines) and
compute-sanitizer's output for the same binary.

    python3 every_byte_table.py VARIANT DB STEPS.txt SANITIZER.txt LEAKS.txt REPORT.txt

Prints Markdown: per step, what the device's used memory grew by (cudaMemGetInfo)
next to what gpuledger's ledger grew by at that step's mark; the remainder
("outside any allocation API") next to nvidia-smi; and which leaked path each
tool names."""
import re
import sqlite3
import sys

MiB = 1 << 20
COUNTED = ("device", "async", "managed", "physical", "static", "array", "graph")
LEAKY = [  # function, what it leaks, bytes asked
    ("leaky_cudaMalloc", "cudaMalloc", 12345),
    ("leaky_cudaMallocAsync", "cudaMallocAsync", 1000),
    ("leaky_vmm", "cuMemCreate handle (mapped)", 32 * MiB),
    ("leaky_array", "cudaMalloc3DArray", 512 * 512 * 22 * 4),
    ("leaky_graph_alloc", "graph allocation (cudaGraphAddMemAllocNode)", 8 * MiB),
]


def main():
    variant, db_path, steps_path, san_path, leaks_path, report_path = sys.argv[1:7]
    db = sqlite3.connect(db_path)
    steps = []
    for line in open(steps_path):
        m = re.match(r"STEP (\d+) (\S+) used=(\d+) smi=(-?\d+)", line)
        if m:
            steps.append((m.group(2), int(m.group(3)), int(m.group(4))))
    marks = dict(db.execute("SELECT a.label, a.seq FROM annotations a WHERE a.op = 'mark'").fetchall())
    kinds = ",".join("'%s'" % k for k in COUNTED)

    def ledger_at(seq):
        return db.execute(
            "SELECT coalesce(sum(size), 0) FROM allocations WHERE device = 0 AND kind IN (%s) AND id <= ? "
            "AND (free_seq IS NULL OR free_seq > ?)" % kinds, (seq, seq)).fetchone()[0]

    def outside_at(seq):  # the usage sample gpuledger_mark took at this mark
        try:
            row = db.execute("SELECT used - ledger FROM usage_samples WHERE device = 0 AND seq = ?",
                             (seq,)).fetchone()
        except sqlite3.Error:
            return None
        return max(0, row[0]) if row else None

    def pool_cache_at(seq):  # stream-ordered pools' reserved - used, last sample before the mark
        ts = db.execute("SELECT ts_ns FROM event_log WHERE seq = ?", (seq,)).fetchone()[0]
        row = db.execute("SELECT sum(reserved - used) FROM (SELECT pool, reserved, used, max(ts_ns) FROM "
                         "pool_samples WHERE device = 0 AND ts_ns <= ? GROUP BY pool)", (ts,)).fetchone()
        return row[0] or 0

    print("### %s: ledger vs device, step by step\n" % variant)
    print("Device used = `cudaMemGetInfo` after the step; ledger = gpuledger's live bytes at the step's mark; "
          "outside = what no allocation API shows (the process's NVML figure − the ledger, sampled at the mark); "
          "pool cache = stream-ordered pools' reserved − used (`pool_samples`).\n")
    print("| step | device used grew (MiB) | ledger grew (MiB) | ledger − device (MiB) | within 2 MiB | "
          "outside grew (MiB) | pool cache (MiB) | nvidia-smi for the process (MiB) | ledger (MiB) |")
    print("|---|---:|---:|---:|:-:|---:|---:|---:|---:|")
    prev_used = prev_ledger = prev_out = None
    ok = bad = 0
    for name, used, smi in steps:
        seq = marks.get("step " + name)
        led = ledger_at(seq) if seq is not None else None
        out = outside_at(seq) if seq is not None else None
        cache = pool_cache_at(seq) if seq is not None else 0
        if prev_used is None or led is None:
            du = dl = diff = do = "—"
            within = ""
        else:
            du_b, dl_b = used - prev_used, led - prev_ledger
            du, dl, diff = "%.2f" % (du_b / MiB), "%.2f" % (dl_b / MiB), "%+.2f" % ((dl_b - du_b) / MiB)
            do = "%+.2f" % ((out - prev_out) / MiB) if out is not None and prev_out is not None else "?"
            within = "yes" if abs(dl_b - du_b) <= 2 * MiB else "**no**"
            ok, bad = (ok + 1, bad) if within == "yes" else (ok, bad + 1)
        print("| %s | %s | %s | %s | %s | %s | %.2f | %s | %s |" % (
            name, du, dl, diff, within, do, cache / MiB, smi if smi >= 0 else "?",
            "%.2f" % (led / MiB) if led is not None else "no mark"))
        prev_used, prev_ledger, prev_out = used, led, out
    print("\n%d steps within 2 MiB, %d not (a step that is not: its difference should show in 'outside grew' "
          "or the pool cache).\n" % (ok, bad))

    print("### %s: the remainder row\n" % variant)
    rows = [l.rstrip() for l in open(report_path) if "outside any allocation API" in l]
    print("```")
    for l in rows[:6]:
        print(l)
    print("```")
    try:
        for dev, used, ledger, source in db.execute(
                "SELECT device, used, ledger, source FROM usage_samples ORDER BY ts_ns DESC LIMIT 1"):
            print("\nlast sample (%s): process %.2f MiB, ledger %.2f MiB, outside any allocation API %.2f MiB; "
                  "nvidia-smi at the last step %s MiB\n" % (source, used / MiB, ledger / MiB,
                                                              max(0, used - ledger) / MiB, steps[-1][2]))
    except sqlite3.Error as e:
        print("\n(no usage_samples: %s)\n" % e)

    print("### %s: leaks, gpuledger next to compute-sanitizer --leak-check full\n" % variant)
    leaks_txt = open(leaks_path).read()
    san = open(san_path).read()
    blocks = san.split("Leaked ")[1:]
    san_named = {}
    named = lambda fn, text: re.search(r"\b%s\b" % fn, text) is not None
    for b in blocks:
        m = re.match(r"(\d+) bytes", b)
        for fn, _, _ in LEAKY:
            if named(fn, b):
                san_named.setdefault(fn, int(m.group(1)) if m else 0)
    unfreed = {}
    for sym, size in db.execute(
            "SELECT f.symbol, a.size FROM allocations a JOIN stack_frames f ON f.stack_id = a.stack_id "
            "WHERE a.free_ns IS NULL AND a.kind IN (%s) AND f.symbol LIKE 'leaky_%%'" % kinds):
        name = re.sub(r"\(.*", "", sym)
        unfreed[name] = unfreed.get(name, 0) + size
    print("| leaked path | bytes asked | gpuledger `leaks` | bytes in the ledger | compute-sanitizer |")
    print("|---|---:|:-:|---:|:-:|")
    for fn, what, asked in LEAKY:
        gl = "yes" if named(fn, leaks_txt) else "**no**"
        cs = ("yes (%d B)" % san_named[fn]) if fn in san_named else "**no**"
        print("| %s (`%s`) | %d | %s | %s | %s |" % (what, fn, asked, gl, unfreed.get(fn, "—"), cs))
    print()


if __name__ == "__main__":
    main()
