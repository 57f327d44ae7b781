#!/usr/bin/env bash
# gpu-torchrun.sh — on the device machine: `gpuledger run -o 'run-%h-%r.db'
# -- torchrun --nproc-per-node 2 …` (both ranks on the one GPU when only one
# is lent): one database per rank, none for the torchrun agent, Python frames
# in both, and the multi-database report.
set -u
. "$(dirname "$0")/gpu/preamble.sh"
W=$(mktemp -d)
cd "$W" || exit 1
echo "== $(date -u +%FT%TZ) GPUs: $(nvidia-smi -L | wc -l)"
"$GL" run -o "$W/run-%h-%r.db" -- python3 -m torch.distributed.run --standalone --nproc-per-node 2 \
  "$ROOT/scripts/gpu/torch_train.py" --steps 4 2>&1 | grep -v '^{' | tail -4
echo "files: $(cd "$W" && ls)"
"$GL" report --top 2 "$W"/run-*.db 2>&1 | cut -c1-200 | grep -E "^==|peak|total|process|<-" | head -20
for db in "$W"/run-*.db; do
  python3 - "$db" <<'PYEOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rank = db.execute("SELECT rank FROM run").fetchone()[0]
n, py = db.execute("""SELECT count(*), sum(EXISTS(SELECT 1 FROM stack_frames f WHERE f.stack_id = a.stack_id AND f.python))
                      FROM allocations a""").fetchone()
print("%s: rank %s, %d allocations, %d with Python frames" % (sys.argv[1].split('/')[-1], rank, n, py))
PYEOF
done
