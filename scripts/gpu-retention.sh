#!/usr/bin/env bash
# gpu-retention.sh — on the device machine (prepared with device-prep.sh):
# what keeps memory alive, with real torch. scripts/gpu/retention_oom.py
# (a small GPT-2 if transformers is there) keeps each step's logits in a
# global list until it runs out of memory (a 6 GiB memory fraction), under
# `gpuledger run --torch blocks`. Checks: the retention table has the OOM's
# and the growing steps' paths through `global logits_kept` at its line;
# `leaks --steps` prints them under the growing chain; GPULEDGER_RETENTION=0
# records none. Measures the finder's cost at a step and at an OOM (median
# ms: as recorded by the hooks, and 21 runs in the process afterwards).
# PASS/FAIL lines; everything also in $OUT/retention.txt. About a minute.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${GL_BUILD:-$ROOT/build-device}
OUT=${OUT:-/tmp/gl-gpu-retention}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$ROOT/.device-deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
GL="$B/report/gpuledger"
PROG="$ROOT/scripts/gpu/retention_oom.py"
W=$(mktemp -d)
{
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__)'
echo "== 1. the loop that keeps its logits, to the OOM"
timeout 150 "$GL" run -q --torch blocks -o "$W/r.db" -- python3 "$PROG" 2>&1 | tail -3 | tee "$W/run.txt"
LINE=$(grep -n '^logits_kept = \[\]' "$PROG" | cut -d: -f1)
python3 - "$W/r.db" "$LINE" "$W/run.txt" <<'PYEOF'
import json, sqlite3, statistics, sys
db, line, run = sys.argv[1], int(sys.argv[2]), sys.argv[3]
con = sqlite3.connect(db)
rows = con.execute("SELECT moment, step, bytes, path, root_file, root_line, elapsed_us, complete FROM retention"
                   " ORDER BY rowid").fetchall()
for r in rows[:6] + ([("...",)] if len(rows) > 12 else []) + rows[-6:] if len(rows) > 12 else rows:
    print("  ", r)
want = "retention_oom.py: global logits_kept (list, "
def ok(what, cond, detail=""):
    print("%s %s%s" % ("PASS" if cond else "FAIL", what, (": " + detail) if detail else ""))
oom = [r for r in rows if r[0] == "oom"]
step = [r for r in rows if r[0] == "step"]
ok("the OOM's paths go through the global list, at its line", bool(oom) and all(r[3].startswith(want) and
   r[5] == line for r in oom[:1]), oom[0][3] if oom else "no oom row")
ok("the growing steps' paths go through it too", bool(step) and all(r[3].startswith(want) for r in step),
   "%d step rows" % len(step))
ok("every search complete", all(r[7] for r in rows), "%d rows" % len(rows))
med = lambda xs: statistics.median(xs) / 1000 if xs else float("nan")
print("COST as recorded: at a step median %.2f ms (max %.2f, %d searches); at the OOM %.2f ms; at exit %.2f ms" % (
    med([r[6] for r in step]), max([r[6] for r in step] or [0]) / 1000, len({r[1] for r in step}),
    med([r[6] for r in oom]), med([r[6] for r in rows if r[0] == "exit"])))
ok("a step's search within its 50 ms bound", bool(step) and max(r[6] for r in step) <= 50000 * 1.2)
j = json.loads(open(run).read().strip().splitlines()[-1])
print("COST in process (21 runs):", json.dumps(j))
PYEOF
echo "== 2. leaks --steps"
"$GL" leaks --steps --top 2 "$W/r.db" 2>&1 | sed -n '/growing/,$p' | cut -c1-200 | tee "$W/leaks.txt" | head -40
if grep -q "kept alive by" "$W/leaks.txt" && grep -q "global logits_kept" "$W/leaks.txt"; then
  echo "PASS leaks shows the retention path under the growing chain"
else
  echo "FAIL leaks shows no retention path"
fi
"$GL" report "$W/r.db" 2>&1 | head -30 | cut -c1-200
echo "== 3. GPULEDGER_RETENTION=0"
GPULEDGER_RETENTION=0 timeout 150 "$GL" run -q --torch blocks -o "$W/off.db" -- python3 "$PROG" 2>&1 | tail -2 | head -1
N=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM retention").fetchone()[0])' "$W/off.db")
[ "$N" = 0 ] && echo "PASS GPULEDGER_RETENTION=0: no rows" || echo "FAIL GPULEDGER_RETENTION=0: $N rows"
cp "$W/r.db" "$OUT/retention.db" 2>/dev/null
} 2>&1 | tee "$OUT/retention.txt"
rm -rf "$W"
