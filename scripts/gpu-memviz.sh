#!/usr/bin/env bash
# gpu-memviz.sh — on the device machine: gpuledger's memory_viz export of a
# real training run, opened by PyTorch's own tools.
#
# torch_train.py (20 steps, marks) runs under gpuledger five ways: the
# cudaMallocAsync backend (--torch tensors: every tensor an allocation), the
# default caching allocator (--torch segments), expandable segments (VMM),
# and the last two again with --torch blocks (the tensor ledger: every block of the
# caching allocator inside its segments, as PyTorch's own snapshot has them).
# Each database is exported as a memory_viz pickle and given to
#   python3 -m torch.cuda._memory_viz trace_plot | segment_plot | stats | trace
# (each must exit 0), and summarised by scripts/gpu/memviz_check.py beside
# PyTorch's own counters and, where PyTorch can record history (not under the
# async backend), beside PyTorch's own snapshot of the same run; for the
# --torch blocks runs, `memviz_check.py --compare` matches the two entry by
# entry. The HTML report, Perfetto and speedscope exports of each run go to
# $OUT too.
#
# Here first: bash scripts/device-prep.sh; then on the device
# (carry build-device and .device-deps): bash scripts/gpu-memviz.sh
# What to look at: "rc=0" for every torch.cuda._memory_viz command; the
# memviz_check lines (segments runs: blocks - max_memory_allocated = the
# cuBLAS workspaces PyTorch does not count, 134,481,920 in earlier runs;
# segments - max_memory_reserved the same under the caching allocator);
# for blocks and blocks-expandable: "compare:" lines with 0 entries only in
# PyTorch's, gpuledger's extra entries only CUDA memory outside the
# allocator (and frees after PyTorch's dump), the Python lines agreeing, and
# the stats' total_allocated beside PyTorch's own (*.torch-stats.txt).
set -u
OUT=${OUT:-/tmp/gl-gpu-memviz}
. "$(dirname "$0")/gpu/preamble.sh"
STEPS=${STEPS:-20}
MODES=${MODES:-tensors segments expandable blocks blocks-expandable}
PY=${PY:-python3}
[ -x /opt/torch/.venv/bin/python ] && [ -z "${PY_SET:-}" ] && PY=/opt/torch/.venv/bin/python
export GPULEDGER_CACHE_DIR=${GPULEDGER_CACHE_DIR:-$OUT/shim-cache} # --torch blocks builds its shim once
$PY -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name(0))'
for mode in $MODES; do
  echo "=== $mode"
  opts=() conf=""
  case $mode in
    tensors) opts=(--torch tensors) ;;
    segments) opts=(--torch segments) ;;
    expandable) opts=(--torch segments) conf="expandable_segments:True" ;;
    blocks) opts=(--torch blocks) ;;
    blocks-expandable) opts=(--torch blocks) conf="expandable_segments:True" ;;
  esac
  db="$OUT/$mode.db"
  rm -f "$db" "$OUT/$mode".*
  PYTORCH_CUDA_ALLOC_CONF=$conf "$GL" run -q -o "$db" "${opts[@]}" -- \
    $PY "$ROOT/scripts/gpu/memviz_run.py" "$OUT/$mode.torch-snapshot.pickle" --steps "$STEPS" --marks \
    >"$OUT/$mode.train.json" 2>"$OUT/$mode.train.err"
  echo "run rc=$? $(tail -1 "$OUT/$mode.train.json")"
  grep -v '^$' "$OUT/$mode.train.err" | grep -v "^gpuledger: $OUT" | tail -3
  t0=$(date +%s%N)
  "$GL" export --format memory_viz -o "$OUT/$mode.pickle" "$db"
  echo "export --format memory_viz rc=$? in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  for cmd in trace_plot segment_plot; do
    $PY -m torch.cuda._memory_viz "$cmd" "$OUT/$mode.pickle" -o "$OUT/$mode.$cmd.html" >/dev/null 2>"$OUT/$mode.$cmd.err"
    echo "$PY -m torch.cuda._memory_viz $cmd rc=$? ($(stat -c %s "$OUT/$mode.$cmd.html" 2>/dev/null) bytes)"
    tail -2 "$OUT/$mode.$cmd.err"
  done
  $PY -m torch.cuda._memory_viz stats "$OUT/$mode.pickle" >"$OUT/$mode.stats.txt" 2>&1
  echo "$PY -m torch.cuda._memory_viz stats rc=$?"; grep -E "^(segments|total_)" "$OUT/$mode.stats.txt"
  $PY -m torch.cuda._memory_viz trace "$OUT/$mode.pickle" >"$OUT/$mode.trace.txt" 2>&1
  echo "$PY -m torch.cuda._memory_viz trace rc=$? ($(wc -l <"$OUT/$mode.trace.txt") lines)"
  $PY "$ROOT/scripts/gpu/memviz_check.py" "$OUT/$mode.pickle" "$OUT/$mode.train.json" --label=gpuledger
  if [ -f "$OUT/$mode.torch-snapshot.pickle" ]; then
    $PY "$ROOT/scripts/gpu/memviz_check.py" "$OUT/$mode.torch-snapshot.pickle" "$OUT/$mode.train.json" --label=pytorch
    $PY -m torch.cuda._memory_viz stats "$OUT/$mode.torch-snapshot.pickle" >"$OUT/$mode.torch-stats.txt" 2>&1
    echo "PyTorch's own snapshot, stats:"; grep -E "^(segments|total_)" "$OUT/$mode.torch-stats.txt"
    case $mode in blocks*)
      $PY "$ROOT/scripts/gpu/memviz_check.py" --compare "$OUT/$mode.pickle" "$OUT/$mode.torch-snapshot.pickle" ;;
    esac
  fi
  "$GL" report --format html -o "$OUT/$mode.html" "$db" && echo "report --format html: $(stat -c %s "$OUT/$mode.html") bytes"
  "$GL" export --format perfetto -o "$OUT/$mode.perfetto.json" "$db"
  "$GL" export --format speedscope -o "$OUT/$mode.speedscope.json" "$db"
  "$GL" report "$db" | sed -n '/^device/,/^$/p' | head -16 | cut -c1-160
done
rm -f "$OUT"/*.db-wal "$OUT"/*.db-shm
ls -la "$OUT"
