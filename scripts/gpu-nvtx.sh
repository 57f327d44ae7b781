#!/usr/bin/env bash
# gpu-nvtx.sh — on the device machine: torch.cuda.nvtx annotations under
# gpuledger (NVTX injection), then the annotations and range tags.
set -u
. "$(dirname "$0")/gpu/preamble.sh"
W=$(mktemp -d)
"$B/report/gpuledger" run -o "$W/nv.db" --torch tensors -- python3 "$ROOT/scripts/gpu/torch_nvtx.py" 2>&1 | tail -2
python3 - "$W/nv.db" <<'PYEOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("annotations:", db.execute("SELECT op, count(*) FROM annotations GROUP BY op").fetchall())
print("marks:", db.execute("SELECT group_concat(label, ',') FROM annotations WHERE op = 'mark'").fetchall())
print("4 MiB allocations by range:", db.execute(
    "SELECT a.label, count(*) FROM events e JOIN annotations a ON a.seq = e.range_seq "
    "WHERE e.op = 'alloc' AND e.size = 4194304 GROUP BY a.label").fetchall())
PYEOF
