#!/usr/bin/env bash
# gpu-ab.sh — on the device machine: the in-process A/B of recorder cost in a
# CPU-bound tensor allocation loop (scripts/gpu/torch_alloc_ab.py): PyTorch's
# recorder, then gpuledger with Python frames (default), without free stacks,
# and with native frames only. Each in one process, off/on rounds alternating.
set -u
OUT=${OUT:-/tmp/gl-gpu-ab}
. "$(dirname "$0")/gpu/preamble.sh"
AB="$ROOT/scripts/gpu/torch_alloc_ab.py"
W=$(mktemp -d)
{
echo "== $(date -u +%FT%TZ)"
if [ -n "${AB_DEPTHS:-}" ]; then
  # where the time goes: the same A/B at native depths 0, 4, 16 (no Python
  # frames) and the default
  for v in "-d 0" "-d 4" "-d 16" "-d 48"; do
    echo "gl-native $v $(GPULEDGER_PYTHON=0 "$GL" run -q --torch tensors $v -o "$W/d.db" -- python3 "$AB" gpuledger 2>&1 | tail -1 | cut -c1-120)"
    rm -f "$W/d.db"
  done
  echo "gl-python default $("$GL" run -q --torch tensors -o "$W/d.db" -- python3 "$AB" gpuledger 2>&1 | tail -1 | cut -c1-120)"
  echo "gl-python mixed $(GPULEDGER_PYTHON=mixed "$GL" run -q --torch tensors -o "$W/m.db" -- python3 "$AB" gpuledger 2>&1 | tail -1 | cut -c1-120)"
  exit 0
fi
for rep in 1 2; do
  echo "history $(python3 "$AB" history 2>&1 | tail -1)"
  echo "history-all $(python3 "$AB" history --stacks all 2>&1 | tail -1)"
  echo "gl-python $("$GL" run -q --torch tensors -o "$W/p$rep.db" -- python3 "$AB" gpuledger 2>&1 | tail -1)"
  echo "gl-python-nofree $(GPULEDGER_FREE_STACKS=0 "$GL" run -q --torch tensors -o "$W/f$rep.db" -- python3 "$AB" gpuledger 2>&1 | tail -1)"
  echo "gl-native $(GPULEDGER_PYTHON=0 "$GL" run -q --torch tensors -o "$W/n$rep.db" -- python3 "$AB" gpuledger 2>&1 | tail -1)"
done
python3 - "$W/p1.db" <<'PYEOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
sid = db.execute("SELECT stack_id FROM allocations ORDER BY id DESC LIMIT 1").fetchone()[0]
rows = db.execute("SELECT depth, python, coalesce(symbol, '?'), line FROM stack_frames WHERE stack_id = ? ORDER BY depth", (sid,)).fetchall()
print("stack of a loop allocation: %d frames (%d Python)" % (len(rows), sum(r[1] for r in rows)))
for d, py, sym, line in rows:
    print("   %2d %s%s" % (d, sym[:110], (":%d" % line) if py else ""))
PYEOF
if [ -z "${SKIP_LORA:-}" ]; then
  echo "== LoRA-style leak: leaks --steps"
  "$GL" run -q -o "$W/lora.db" --torch tensors -- python3 "$ROOT/scripts/gpu/torch_train.py" --steps 12 --lora-leak --marks >/dev/null 2>&1
  "$GL" leaks --steps --top 2 "$W/lora.db" 2>&1 | sed -n '/growing/,$p' | head -60 | cut -c1-160
fi
} 2>&1 | tee "$OUT/ab.txt"
