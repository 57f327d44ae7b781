#!/usr/bin/env bash
# gpu-annotations.sh — on the device machine: what each call of the gpuledger
# Python package costs the calling thread (gpuledger.mark, step, range,
# paused, recording; bench/bench_annotations.py), in ns per call, without
# gpuledger (every call a no-op) and under `gpuledger run` (the library
# recording), 3 processes each, alternating; then, if torch is there, one
# process under gpuledger with a tensor on the GPU (a mark then also samples
# the device, as in a training job). Target: <= 1 us per call.
# Each process times 3 x 5,000 calls per case (about 3 s) and is stopped
# after 6 s; the whole script takes well under 40 s.
# Prepare here with scripts/device-prep.sh; writes $OUT/annotations.md.
set -u
OUT=${OUT:-/tmp/gl-gpu-annotations}
. "$(dirname "$0")/gpu/preamble.sh"
PY=${PYTHON:-python3}
BENCH=("$ROOT/bench/bench_annotations.py" --calls 5000 --repeats 3)
W=$(mktemp -d)
SECONDS=0
{
  echo "# gpuledger Python annotations, ns per call"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(hostname), $(nproc) CPUs, $("$PY" --version 2>&1);" \
    "command: bash scripts/gpu-annotations.sh (bench_annotations.py --calls 5000 --repeats 3)"
  for i in 1 2 3; do
    echo
    timeout 6 "$PY" "${BENCH[@]}" || echo "(bare run $i: exit $?)"
    echo
    timeout 6 "$GL" run -q -o "$W/a$i.db" -- "$PY" "${BENCH[@]}" || echo "(run $i under gpuledger: exit $?)"
  done
  if [ "$SECONDS" -lt 20 ] && timeout 10 "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo
    # --torch segments: no allocator shim to build first (tens of seconds
    # on a machine without it cached); a mark's samples are the same
    timeout $((38 - SECONDS)) "$GL" run -q --torch segments -o "$W/cuda.db" -- "$PY" "${BENCH[@]}" --cuda ||
      echo "(run with CUDA in use: exit $?)"
  fi
  echo
  echo "($SECONDS s in all)"
} 2>&1 | tee "$OUT/annotations.md"
rm -rf "$W"
