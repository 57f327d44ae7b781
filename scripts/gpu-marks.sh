#!/usr/bin/env bash
# gpu-marks.sh — on the device machine: a PyTorch run with the planted leak
# and a gpuledger_mark per step (ctypes), then `leaks --steps` (steps from
# the marks), the pool and device samples, and `holes`.
set -u
OUT=${OUT:-/tmp/gl-gpu-marks}
. "$(dirname "$0")/gpu/preamble.sh"
W=$(mktemp -d)
"$GL" run -o "$W/marks.db" --torch tensors -- python3 "$ROOT/scripts/gpu/torch_train.py" --steps 12 --leak --marks 2>&1 | tail -2
"$GL" leaks --steps --top 1 "$W/marks.db" 2>&1 | sed -n '/growing/,$p' | head -16 | cut -c1-160
python3 - "$W/marks.db" <<'PYEOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
q = lambda s: db.execute(s).fetchall()
print("marks:", q("SELECT count(*), min(label), max(label) FROM annotations WHERE op = 'mark'"))
print("pool_samples:", q("SELECT count(*), max(reserved), max(used) FROM pool_samples"))
print("device_samples:", q("SELECT count(*), min(free), max(total) FROM device_samples"))
PYEOF
"$GL" holes "$W/marks.db" 2>&1 | head -6
