#!/usr/bin/env bash
# gpu-check.sh — the real-GPU checks, run ON the device machine (H200).
# Prepare here first with scripts/device-prep.sh, then through the device
# tool: carry ["build-device", ".device-deps"], command
#   bash scripts/gpu-check.sh
# It builds the CUDA check program with nvcc, runs it and a small PyTorch
# training loop bare and under gpuledger, and writes a Markdown table of
# what PyTorch / compute-sanitizer say next to what the database says to
# $OUT/results.md (plus the raw JSON and some databases for later study).
set -u
OUT=${OUT:-/tmp/gl-gpu-check}
. "$(dirname "$0")/gpu/preamble.sh"
W=$(mktemp -d)
PY=python3
R="$OUT/results.md"
log() { echo "== $*" | tee -a "$OUT/log.txt"; }
stat() { $PY "$ROOT/scripts/gpu/dbstat.py" "$1"; }

{
  echo "# gpu-check $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  $PY -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  echo
} > "$R" 2>&1

log "build the CUDA check program (dynamic and static cudart)"
nvcc -O1 -g -cudart shared -o "$W/alloc_dyn" "$ROOT/scripts/gpu/alloc_leak.cu" || exit 1
nvcc -O1 -g -o "$W/alloc_static" "$ROOT/scripts/gpu/alloc_leak.cu" || exit 1

log "A/B: alloc_leak under gpuledger"
for v in dyn static; do
  ( cd "$W" && "$GL" run -o "$W/alloc_$v.db" -- "$W/alloc_$v" ) > "$OUT/alloc_$v.out" 2>&1
  echo "alloc_$v: $(stat "$W/alloc_$v.db")" >> "$OUT/raw.txt"
done
log "C: compute-sanitizer --leak-check full"
compute-sanitizer --leak-check full "$W/alloc_static" > "$OUT/sanitizer.txt" 2>&1
grep -E "Leaked|LEAK SUMMARY|bytes leaked" "$OUT/sanitizer.txt" | head -5 >> "$OUT/raw.txt"

TT="$ROOT/scripts/gpu/torch_train.py"
run_torch() { # name, conf, extra args
  local name=$1 conf=$2; shift 2
  PYTORCH_CUDA_ALLOC_CONF=$conf $PY "$TT" "$@" > "$OUT/$name.bare.json" 2>"$W/$name.bare.err"
  PYTORCH_CUDA_ALLOC_CONF=$conf "$GL" run -o "$W/$name.db" -- $PY "$TT" "$@" > "$OUT/$name.prof.json" 2>"$W/$name.prof.err"
  echo "$name bare: $(cat "$OUT/$name.bare.json")" >> "$OUT/raw.txt"
  echo "$name prof: $(cat "$OUT/$name.prof.json")" >> "$OUT/raw.txt"
  echo "$name db:   $(stat "$W/$name.db")" >> "$OUT/raw.txt"
  tail -2 "$W/$name.prof.err" >> "$OUT/raw.txt"
}
log "D: torch, backend:cudaMallocAsync"
run_torch torch_async "backend:cudaMallocAsync" --steps 60
log "E: torch, default caching allocator"
run_torch torch_default "" --steps 20
log "F: torch, expandable_segments:True"
run_torch torch_expand "expandable_segments:True" --steps 20
log "G: torch async with a planted leak; the report verbs on it"
PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync "$GL" run -o "$W/torch_leak.db" -- $PY "$TT" --steps 12 --leak > "$OUT/torch_leak.json" 2>&1
"$GL" leaks --steps=6 --top 3 "$W/torch_leak.db" > "$OUT/torch_leak.leaks.txt" 2>&1
"$GL" report --top 8 "$W/torch_async.db" > "$OUT/torch_async.report.txt" 2>&1
"$GL" report --format html -o "$OUT/torch_async.html" "$W/torch_async.db"
"$GL" holes "$W/torch_async.db" "$W/torch_expand.db" > "$OUT/holes.txt" 2>&1

log "H0: static cudart with CUPTI callbacks forced on (names the runtime calls)"
( cd "$W" && GPULEDGER_CUPTI=1 "$GL" run -o "$W/alloc_static_cb.db" -- "$W/alloc_static" ) > "$OUT/alloc_static_cb.out" 2>&1
echo "alloc_static_cb: $(stat "$W/alloc_static_cb.db")" >> "$OUT/raw.txt"
log "H: CUPTI: module (static) memory, and what the static-cudart program looks like with CUPTI on"
( cd "$W" && GPULEDGER_CUPTI_ACTIVITY=1 "$GL" run -o "$W/alloc_static_act.db" -- "$W/alloc_static" ) > "$OUT/alloc_static_act.out" 2>&1
echo "alloc_static_act: $(stat "$W/alloc_static_act.db")" >> "$OUT/raw.txt"
$PY - "$W/alloc_static_act.db" >> "$OUT/raw.txt" <<'PYEOF2'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("static_rows:", db.execute("SELECT api, kind, size FROM allocations WHERE kind = 'static'").fetchall())
PYEOF2

log "I: torch.profiler next to gpuledger"
TP="$ROOT/scripts/gpu/torch_profiler_check.py"
echo "profiler bare: $($PY "$TP" 2>/dev/null | tail -1)" >> "$OUT/raw.txt"
echo "profiler gpuledger-no-cupti: $("$GL" run -q --no-cupti -o "$W/prof_nocupti.db" -- $PY "$TP" 2>"$W/p1.err" | tail -1)" >> "$OUT/raw.txt"
echo "profiler gpuledger-default: $("$GL" run -q -o "$W/prof_default.db" -- $PY "$TP" 2>"$W/p3.err" | tail -1)" >> "$OUT/raw.txt"
echo "profiler gpuledger-cupti-on: $(GPULEDGER_CUPTI=1 "$GL" run -q -o "$W/prof_cupti.db" -- $PY "$TP" 2>"$W/p2.err" | tail -1)" >> "$OUT/raw.txt"
grep gpuledger "$W/p1.err" "$W/p2.err" >> "$OUT/raw.txt"

log "K: two ranks on one GPU (the 2-GPU machine is not lent): one database per rank, one report"
( cd "$W" && for rk in 0 1; do RANK=$rk "$GL" run -q -o "$W/run-%h-%r.db" --torch tensors -- $PY "$TT" --steps 10 --dim 256 > "$W/rank$rk.json" 2>&1 & done; wait )
"$GL" report --top 3 "$W"/run-*.db > "$OUT/two_ranks.report.txt" 2>&1
cat "$W"/rank*.json >> "$OUT/raw.txt"

cat "$R"
cat "$OUT/raw.txt"
# at most 8 files come back: pack the rest
( cd "$OUT" && cp "$W"/torch_leak.db "$W"/torch_async.db "$W"/torch_expand.db "$W"/alloc_static_act.db . 2>/dev/null;
  tar czf "$W/bundle.tgz" --exclude=results.md --exclude=raw.txt --exclude=torch_async.html . &&
  find . -type f ! -name results.md ! -name raw.txt ! -name torch_async.html -delete && mv "$W/bundle.tgz" . )
