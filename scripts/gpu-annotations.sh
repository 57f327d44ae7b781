#!/usr/bin/env bash
# gpu-annotations.sh — on the device machine: what each call of the gpuledger
# Python package costs the calling thread (gpuledger.mark, step, range,
# paused, recording; bench/bench_annotations.py), in ns per call, without
# gpuledger (every call a no-op) and under `gpuledger run` (the library
# recording), 3 processes each, alternating. Target: <= 1 us per call.
# Prepare here with scripts/device-prep.sh; writes $OUT/annotations.md.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${GL_BUILD:-$ROOT/build-device}
OUT=${OUT:-/tmp/gl-gpu-annotations}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$ROOT/.device-deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
GL="$B/report/gpuledger"
PY=${PYTHON:-python3}
W=$(mktemp -d)
{
  echo "# gpuledger Python annotations, ns per call"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(hostname), $(nproc) CPUs, $("$PY" --version 2>&1);" \
    "command: bash scripts/gpu-annotations.sh"
  for i in 1 2 3; do
    echo
    "$PY" "$ROOT/bench/bench_annotations.py"
    echo
    "$GL" run -q -o "$W/a$i.db" -- "$PY" "$ROOT/bench/bench_annotations.py"
  done
} 2>&1 | tee "$OUT/annotations.md"
rm -rf "$W"
