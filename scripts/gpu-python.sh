#!/usr/bin/env bash
# gpu-python.sh — on the device machine (prepared with device-prep.sh):
# Python frames with PyTorch on a real GPU.
#   1. the frame layout of this Python checked against its own headers
#   2. the small GPT (--torch tensors) with a LoRA-style planted leak and
#      marks per step: report (peak ledger), leaks --steps, frame statistics
#   3. torch.cuda.nvtx ranges (scripts/gpu-nvtx.sh)
#   4. a CPU-bound tensor allocation loop: PyTorch's recorder
#      (_record_memory_history(stacks="python")) against gpuledger with and
#      without Python frames, interleaved rounds, ns per alloc+free pair
#   5. the GPT step time: bare, gpuledger with / without Python frames
# Everything goes to stdout and $OUT/python.txt.
set -u
OUT=${OUT:-/tmp/gl-gpu-python}
. "$(dirname "$0")/gpu/preamble.sh"
ROUNDS=${ROUNDS:-3}
TT="$ROOT/scripts/gpu/torch_train.py"
TL="$ROOT/scripts/gpu/torch_alloc_loop.py"
W=$(mktemp -d)
last() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])[sys.argv[1]])' "$1"; }
{
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__)'

echo "== 1. frame layout vs. this Python's headers"
GL_TEST_PYTHONS=$(command -v python3) bash "$ROOT/tests/check_pyoffsets.sh" "$ROOT" 2>&1 | tail -3

echo "== 2. GPT, --torch tensors, LoRA-style leak, marks"
"$GL" run -o "$W/lora.db" --torch tensors -- python3 "$TT" --steps 12 --lora-leak --marks 2>&1 | tail -2
"$GL" report --top 8 "$W/lora.db" 2>&1 | cut -c1-400
"$GL" leaks --steps --top 3 "$W/lora.db" 2>&1 | head -60 | cut -c1-200
"$GL" report --format json -o "$OUT/lora-report.json" "$W/lora.db"
python3 - "$W/lora.db" <<'PYEOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
q = lambda s: db.execute(s).fetchall()
print("python_version meta:", q("SELECT value FROM meta WHERE key='python_version'"))
print("python frames stored:", q("SELECT count(*) FROM frames WHERE python"))
print("allocations, with a Python frame / without, by thread:")
for row in q("""SELECT a.tid, count(*), sum(EXISTS(SELECT 1 FROM stack_frames f WHERE f.stack_id = a.stack_id AND f.python))
               FROM allocations a GROUP BY a.tid ORDER BY 2 DESC"""):
    print("   tid %s: %d allocations, %d with Python frames" % row)
print("innermost Python line of allocations (bytes, top 10):")
for row in q("""SELECT f.symbol || ' ' || f.file || ':' || f.line, count(*), sum(a.size) FROM allocations a
               JOIN stack_frames f ON f.stack_id = a.stack_id AND f.python
               AND f.depth = (SELECT min(depth) FROM stack_frames g WHERE g.stack_id = a.stack_id AND g.python)
               GROUP BY 1 ORDER BY 3 DESC LIMIT 10"""):
    print("   %-90s %6d allocs %12d B" % row)
print("truncated stacks:", q("SELECT truncated_stacks, event_count FROM run"))
PYEOF

if [ -z "${SKIP_NVTX:-}" ]; then
  echo "== 3. NVTX"
  bash "$ROOT/scripts/gpu-nvtx.sh" 2>&1 | tail -5
fi

echo "== 4. CPU-bound loop, ns per alloc+free pair (rounds: $ROUNDS)"
for r in $(seq "$ROUNDS"); do
  echo "loop native-bare $(python3 "$TL" 2>/dev/null | last ns_per_pair)"
  echo "loop native-history $(python3 "$TL" --history 2>/dev/null | last ns_per_pair)"
  echo "loop async-bare $(PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync python3 "$TL" 2>/dev/null | last ns_per_pair)"
  echo "loop async-gl-python $("$GL" run -q --torch tensors -o "$W/lp$r.db" -- python3 "$TL" 2>/dev/null | last ns_per_pair)"
  echo "loop async-gl-python-nofreestacks $(GPULEDGER_FREE_STACKS=0 "$GL" run -q --torch tensors -o "$W/lf$r.db" -- python3 "$TL" 2>/dev/null | last ns_per_pair)"
  echo "loop async-gl-native $(GPULEDGER_PYTHON=0 "$GL" run -q --torch tensors -o "$W/ln$r.db" -- python3 "$TL" 2>/dev/null | last ns_per_pair)"
done
python3 - "$W/lp1.db" <<'PYEOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("loop stack, innermost first:", db.execute("""SELECT group_concat(coalesce(symbol, '?') || CASE WHEN python THEN ':' || line ELSE '' END, ' <- ')
  FROM (SELECT * FROM stack_frames WHERE stack_id = (SELECT stack_id FROM allocations ORDER BY id DESC LIMIT 1) ORDER BY depth)""").fetchone()[0][:1500])
PYEOF

echo "== 5. GPT step ms, 60 steps (rounds: $ROUNDS)"
for r in $(seq "$ROUNDS"); do
  echo "step bare $(PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync python3 "$TT" --steps 60 2>/dev/null | last median_step_ms)"
  echo "step gl-python $("$GL" run -q --torch tensors -o "$W/sp$r.db" -- python3 "$TT" --steps 60 2>/dev/null | last median_step_ms)"
  echo "step gl-native $(GPULEDGER_PYTHON=0 "$GL" run -q --torch tensors -o "$W/sn$r.db" -- python3 "$TT" --steps 60 2>/dev/null | last median_step_ms)"
done
} 2>&1 | tee "$OUT/python.txt"
python3 - "$OUT/python.txt" <<'PYEOF' | tee -a "$OUT/python.txt"
import statistics, sys
v = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 3 and p[0] in ("loop", "step"):
        try:
            v.setdefault((p[0], p[1]), []).append(float(p[2]))
        except ValueError:
            pass
med = {k: statistics.median(x) for k, x in v.items()}
for k in sorted(med):
    print("median %s %s: %.1f  (%s)" % (k[0], k[1], med[k], ", ".join("%.1f" % x for x in v[k])))
def ratio(a, b, kind):
    if (kind, a) in med and (kind, b) in med:
        return med[(kind, a)] - med[(kind, b)]
h = ratio("native-history", "native-bare", "loop")
gp = ratio("async-gl-python", "async-bare", "loop")
gn = ratio("async-gl-native", "async-bare", "loop")
gf = ratio("async-gl-python-nofreestacks", "async-bare", "loop")
if h and gp:
    print("added ns/pair: PyTorch recorder %.0f, gpuledger+Python %.0f, gpuledger+Python no free stacks %.0f, gpuledger native-only %.0f" % (h, gp, gf or 0, gn or 0))
    print("recorder / gpuledger+Python = %.2fx; recorder / gpuledger no free stacks = %.2fx" % (h / gp, h / gf if gf else 0))
sb = med.get(("step", "bare"))
for k in ("gl-python", "gl-native"):
    if sb and ("step", k) in med:
        print("GPT step %s: %+.2f%% vs bare" % (k, 100 * (med[("step", k)] / sb - 1)))
PYEOF
