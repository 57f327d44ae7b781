#!/usr/bin/env bash
# gpu-every-byte.sh — "every byte" on the real GPU (H200), run ON the device
# machine. Prepare here first with scripts/device-prep.sh, then through the
# device tool: carry ["build-device", ".device-deps"], command
#   bash scripts/gpu-every-byte.sh
# It builds scripts/gpu/every_byte.cu with dynamic and with static cudart,
# runs each under gpuledger (and bare under compute-sanitizer --leak-check
# full), and writes to $OUT/every-byte.md, per variant:
#  - per step, the device's used-memory growth next to the ledger's;
#  - the remainder row ("outside any allocation API") next to nvidia-smi;
#  - which leaked path `gpuledger leaks` and compute-sanitizer each name;
#  - what a cudaGraphLaunch costs with and without gpuledger, for a graph
#    without memory nodes and one with;
#  - torch.cuda.graph (scripts/gpu/torch_graph_capture.py: a forward and a
#    whole training step captured, replayed, compared with eager) bare and
#    under `gpuledger run --torch blocks`, with PyTorch's default caching
#    allocator and with backend:cudaMallocAsync: the capture must succeed
#    and the replays agree under gpuledger as bare, and the database must
#    hold no call failed by a capture error (results 900-907).
# Meant to stay well under 4 minutes on the H200 (the shim's first build
# included); the summary ends with the script's own time.
set -u
T0=$(date +%s)
OUT=${OUT:-/tmp/gl-every-byte}
. "$(dirname "$0")/gpu/preamble.sh"
W=$(mktemp -d)
R="$OUT/every-byte.md"
log() { echo "== $*" >&2; }

{
  echo "# every byte — $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo '```'
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version | tail -1
  echo "command: bash scripts/gpu-every-byte.sh"
  echo '```'
  echo
} > "$R"

log "build every_byte (dynamic and static cudart)"
nvcc -O1 -g -cudart shared -o "$W/every_byte_dyn" "$ROOT/scripts/gpu/every_byte.cu" -lcuda || exit 1
nvcc -O1 -g -o "$W/every_byte_static" "$ROOT/scripts/gpu/every_byte.cu" -lcuda || exit 1

for v in dyn static; do
  log "$v: under gpuledger"
  ( cd "$W" && "$GL" run -o "$W/eb_$v.db" -- "$W/every_byte_$v" ) > "$OUT/steps_$v.txt" 2> "$W/gl_$v.err"
  tail -3 "$W/gl_$v.err" >> "$OUT/steps_$v.txt"
  "$GL" report "$W/eb_$v.db" > "$OUT/report_$v.txt" 2>&1
  "$GL" leaks "$W/eb_$v.db" > "$OUT/leaks_$v.txt" 2>&1
  log "$v: bare under compute-sanitizer --leak-check full"
  compute-sanitizer --leak-check full "$W/every_byte_$v" > "$OUT/sanitizer_$v.txt" 2>&1
  python3 "$ROOT/scripts/gpu/every_byte_table.py" "$v cudart" "$W/eb_$v.db" "$OUT/steps_$v.txt" \
    "$OUT/sanitizer_$v.txt" "$OUT/leaks_$v.txt" "$OUT/report_$v.txt" >> "$R" 2>&1
  cp "$W/eb_$v.db" "$OUT/" 2>/dev/null
done

log "graph launch cost, bare and under gpuledger"
{
  echo "### cudaGraphLaunch cost (best of 5 x 20000 launches, ns per launch)"
  echo
  echo '```'
  echo "bare:";            "$W/every_byte_dyn" --launch-bench 20000
  echo "under gpuledger:"; ( cd "$W" && "$GL" run -q -o "$W/bench.db" -- "$W/every_byte_dyn" --launch-bench 20000 )
  echo '```'
  echo
} >> "$R" 2>&1

log "torch.cuda.graph, bare and under gpuledger run --torch blocks"
PY=python3
[ -x /opt/torch/.venv/bin/python ] && PY=/opt/torch/.venv/bin/python
export GPULEDGER_CACHE_DIR="$W/cache"
{
  echo "### torch.cuda.graph (scripts/gpu/torch_graph_capture.py), bare and under gpuledger"
  echo
  echo '```'
  for backend in native cudaMallocAsync; do
    conf=()
    [ $backend = cudaMallocAsync ] && conf=(PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync)
    echo "-- $backend allocator, bare"
    env "${conf[@]}" timeout 120 $PY "$ROOT/scripts/gpu/torch_graph_capture.py" 2>&1 | tail -4
    echo "exit ${PIPESTATUS[0]}"
    echo "-- $backend allocator, gpuledger run --torch blocks"
    ( cd "$W" && env "${conf[@]}" timeout 180 "$GL" run --torch blocks -o "$W/torch_$backend.db" -- \
        $PY "$ROOT/scripts/gpu/torch_graph_capture.py" ) > "$W/torch_$backend.out" 2>&1
    echo "exit $?"
    grep -v "^gpuledger: .*events" "$W/torch_$backend.out" | tail -6
    python3 - "$W/torch_$backend.db" <<'PYEOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
q = lambda sql: db.execute(sql).fetchone()[0]
print("database: %d events; failed by a capture error (900-907): %d; graph_alloc %d, graph_free %d, "
      "graph_launch %d; blocks %d, segments %d (in a private pool: %d)" % (
      q("SELECT count(*) FROM events"), q("SELECT count(*) FROM events WHERE result BETWEEN 900 AND 907"),
      q("SELECT count(*) FROM events WHERE op = 'graph_alloc'"), q("SELECT count(*) FROM events WHERE op = 'graph_free'"),
      q("SELECT count(*) FROM events WHERE op = 'graph_launch'"),
      q("SELECT count(*) FROM events WHERE kind = 'block' AND op = 'alloc'"),
      q("SELECT count(*) FROM events WHERE kind = 'segment' AND op = 'alloc'"),
      q("SELECT count(*) FROM events WHERE kind = 'segment' AND op = 'alloc' AND pool != 0")))
PYEOF
  done
  echo '```'
  echo
  echo "whole script: $(( $(date +%s) - T0 )) s"
} >> "$R" 2>&1
cp "$W"/torch_*.db "$OUT/" 2>/dev/null

cat "$R"
# at most 8 files come back: pack the rest
( cd "$OUT" && tar czf "$W/bundle.tgz" --exclude=every-byte.md . &&
  find . -type f ! -name every-byte.md -delete && mv "$W/bundle.tgz" . )
