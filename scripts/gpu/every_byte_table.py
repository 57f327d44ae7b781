"""every_byte_table.py — the tables of scripts/gpu-every-byte.sh, from one
run of every_byte under gpuledger (its database and its STEP lines) and
compute-sanitizer's output for the same binary.

    python3 every_byte_table.py VARIANT DB STEPS.txt SANITIZER.txt LEAKS.txt REPORT.txt

Prints Markdown: per step, what the device's used memory grew by (cudaMemGetInfo)
next to what gpuledger's ledger and the stream-ordered pools' cache grew by at
that step's mark, and for each step that does not match, what is known to
account for it; the remainder ("outside any allocation API") next to
nvidia-smi; and which leaked path each tool names (compute-sanitizer's byte
counts as it gives them, and what else it calls leaked)."""
import re
import sqlite3
import sys

MiB = 1 << 20
COUNTED = ("device", "async", "managed", "physical", "static", "array", "graph")
# What no API accounts for, as measured on the H200 (docs/h200/every-byte-2026-12-03.md).
EXPECTED = {
    "cudaMallocManaged_32MiB_touched":
        "managed memory: the first touch on the device took 128 MiB for 32 MiB touched on the H200 (the "
        "UVM driver's own, no API reports it), and NVML's per-process figure (nvidia-smi) shows none of it",
    "cudaMallocManaged_another_32MiB_touched":
        "managed memory again: what a second allocation's touch takes beyond its 32 MiB",
    "cudaFree_both_managed": "managed memory freed: what of the UVM driver's memory stays",
    "cudaMallocAsync_48MiB":
        "the pool reserves in 32 MiB chunks (64 MiB for 48 on the H200): its 16 MiB cache should show in "
        "the pool cache column; if it is +0 the pool was not sampled at the mark",
    "cudaMalloc3DArray_512x512x22_uchar4":
        "the layout pads the volume (32 MiB on the H200 for 22 asked): the row has the padded size only "
        "where the driver answers for the array's deferred-mapping twin",
    "end_leaks_left":
        "the pool keeps a 32 MiB chunk for the 1,000 B still allocated from it (its cache) and the 12,345 B "
        "cudaMalloc takes a 2 MiB page of the device",
}
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

    def pool_cache_at(seq):  # stream-ordered pools' reserved - used, last sample at or before the mark
        ts = db.execute("SELECT ts_ns FROM event_log WHERE seq = ?", (seq,)).fetchone()[0]
        row = db.execute("SELECT sum(reserved - used) FROM (SELECT pool, reserved, used, max(ts_ns) FROM "
                         "pool_samples WHERE device = 0 AND ts_ns <= ? GROUP BY pool)", (ts,)).fetchone()
        return row[0] or 0

    print("### %s: ledger vs device, step by step\n" % variant)
    print("Device used = `cudaMemGetInfo` after the step; ledger = gpuledger's live bytes at the step's mark; "
          "pool cache = the stream-ordered pools' reserved − used (`pool_samples`, taken at each mark): "
          "device memory the process holds that no allocation is in, which the ledger does not count; "
          "outside = what NVML's per-process figure (what nvidia-smi shows) holds beyond the ledger, sampled "
          "at the mark. A step is matched when ledger + pool cache grew by what the device did, to 2 MiB.\n")
    print("| step | device used grew (MiB) | ledger grew (MiB) | pool cache grew (MiB) | "
          "ledger + cache − device (MiB) | within 2 MiB | outside grew (MiB) | nvidia-smi for the process (MiB) | "
          "ledger (MiB) |")
    print("|---|---:|---:|---:|---:|:-:|---:|---:|---:|")
    prev = None
    ok, missed = 0, []
    for name, used, smi in steps:
        seq = marks.get("step " + name)
        led = ledger_at(seq) if seq is not None else None
        out = outside_at(seq) if seq is not None else None
        cache = pool_cache_at(seq) if seq is not None else None
        cells = ["—"] * 6
        if prev is not None and led is not None and prev[1] is not None:
            du_b, dl_b, dc_b = used - prev[0], led - prev[1], cache - prev[2]
            res = dl_b + dc_b - du_b
            within = abs(res) <= 2 * MiB
            cells = ["%.2f" % (du_b / MiB), "%.2f" % (dl_b / MiB), "%+.2f" % (dc_b / MiB), "%+.2f" % (res / MiB),
                     "yes" if within else "**no**",
                     "%+.2f" % ((out - prev[3]) / MiB) if out is not None and prev[3] is not None else "?"]
            if within:
                ok += 1
            else:
                missed.append((name, du_b, dl_b, dc_b))
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, *cells, smi if smi >= 0 else "?", "%.2f" % (led / MiB) if led is not None else "no mark"))
        prev = (used, led, cache, out)
    print("\n%d steps matched, %d not.\n" % (ok, len(missed)))
    for name, du_b, dl_b, dc_b in missed:
        why = EXPECTED.get(name, "not explained: look at this step")
        print("- `%s`: the device grew by %.2f MiB, the ledger by %.2f and the pool cache by %+.2f — %s" % (
            name, du_b / MiB, dl_b / MiB, dc_b / MiB, why))
    if missed:
        print()

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
    reports = []  # (bytes, text) per "Leaked N bytes" block of compute-sanitizer
    for b in san.split("Leaked ")[1:]:
        m = re.match(r"([\d,]+) bytes", b)
        reports.append((int(m.group(1).replace(",", "")) if m else 0, b.split("=========\n")[0]))
    named = lambda fn, text: re.search(r"\b%s\b" % fn, text) is not None

    def san_match(fn, asked):  # the sanitizer's report of a leaked path (a graph's: at its launch)
        for i, (n, text) in enumerate(reports):
            if named(fn, text) or (fn == "leaky_graph_alloc" and "cudaGraphLaunch" in text and n == asked):
                return i
        return None

    unfreed = {}
    for sym, size in db.execute(
            "SELECT f.symbol, a.size FROM allocations a JOIN stack_frames f ON f.stack_id = a.stack_id "
            "WHERE a.free_ns IS NULL AND a.kind IN (%s) AND f.symbol LIKE 'leaky_%%'" % kinds):
        name = re.sub(r"\(.*", "", sym)
        unfreed[name] = unfreed.get(name, 0) + size
    print("| leaked path | bytes asked | gpuledger `leaks` | bytes in the ledger | compute-sanitizer (bytes it says) |")
    print("|---|---:|:-:|---:|:-:|")
    used = set()
    for fn, what, asked in LEAKY:
        gl = "yes" if named(fn, leaks_txt) else "**no**"
        i = san_match(fn, asked)
        if i is not None:
            used.add(i)
            where = " at the launch (`main`), not the node's function" if fn == "leaky_graph_alloc" else ""
            cs = "yes (%d)%s" % (reports[i][0], where)
        else:
            cs = "**no**"
        print("| %s (`%s`) | %d | %s | %s | %s |" % (what, fn, asked, gl, unfreed.get(fn, "—"), cs))
    others = [(n, t) for i, (n, t) in enumerate(reports) if i not in used]
    if others:
        print("\ncompute-sanitizer also reports, as leaked:")
        for n, text in others:
            frames = re.findall(r"Host Frame: (\S+)(?: in (\S+))?", text)
            site = " <- ".join(f[0] + (" (%s)" % f[1] if f[1] else "") for f in frames[:5])
            print("- %d bytes: %s%s" % (n, site, " — the kept graph allocation, which the program freed with "
                  "cudaFree after its launch: not a leak" if n == 16 * MiB and "cudaGraphLaunch" in text else ""))
    print()


if __name__ == "__main__":
    main()
