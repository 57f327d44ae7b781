#!/usr/bin/env bash
# gpu-launch-cost.sh — on the device machine: what gpuledger adds to a
# cudaGraphLaunch, and which of its parts adds it. Runs the launch bench of
# scripts/gpu/every_byte.cu (best of 5 x 20000 launches per process) in
# rounds, alternating: bare; LD_PRELOAD of libgpuledger.so alone; the driver
# loading it alone (CUDA_INJECTION64_PATH); both (what `gpuledger run` does);
# both with GPULEDGER_CUPTI=0. Every process is pinned to the same CPU
# (taskset -c $CPU, default 3): unpinned, one process in two lands on a slow
# placement (bare runs then read 1.4 or 2.1 µs, whatever is loaded). Prints
# every figure and the median per variant. Prepare here with scripts/device-prep.sh; carry build-device and
# .device-deps; run: bash scripts/gpu-launch-cost.sh [ROUNDS]
set -u
OUT=${OUT:-/tmp/gl-launch-cost}
. "$(dirname "$0")/gpu/preamble.sh"
ROUNDS=${1:-5}
LIB="$B/interpose/libgpuledger.so"
W=$(mktemp -d)
nvcc -O1 -cudart shared -o "$W/eb" "$ROOT/scripts/gpu/every_byte.cu" -lcuda -ldl || exit 1
CPU=${CPU:-3}
pin() { taskset -c "$CPU" "$@"; }
bench() { # VARIANT: one process, prints "no_memory_nodes memory_nodes"
  local v=$1 o="$W/$1-$RANDOM.db"
  case $v in
    bare)       pin "$W/eb" --launch-bench 20000 ;;
    preload)    LD_PRELOAD="$LIB" GPULEDGER_OUTPUT="$o" pin "$W/eb" --launch-bench 20000 ;;
    inject)     CUDA_INJECTION64_PATH="$LIB" GPULEDGER_OUTPUT="$o" pin "$W/eb" --launch-bench 20000 ;;
    both)       LD_PRELOAD="$LIB" CUDA_INJECTION64_PATH="$LIB" GPULEDGER_OUTPUT="$o" pin "$W/eb" --launch-bench 20000 ;;
    both_cupti0) GPULEDGER_CUPTI=0 LD_PRELOAD="$LIB" CUDA_INJECTION64_PATH="$LIB" GPULEDGER_OUTPUT="$o" pin "$W/eb" --launch-bench 20000 ;;
  esac 2>"$W/err" | awk '/^LAUNCH/ {printf "%s ", $3} END {print ""}'
}
variants="bare preload inject both both_cupti0"
{
  echo "# cudaGraphLaunch cost by variant — $(date -u +%Y-%m-%dT%H:%MZ)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "command: bash scripts/gpu-launch-cost.sh $ROUNDS; ns per launch (best of 5 x 20000), no_memory_nodes memory_nodes"
  for r in $(seq "$ROUNDS"); do
    for v in $variants; do echo "$r $v $(bench "$v")"; done
  done | tee "$W/all"
  echo "medians:"
  for v in $variants; do
    a=$(awk -v v="$v" '$2 == v {print $3}' "$W/all" | sort -n | awk '{x[NR]=$1} END {print x[int((NR+1)/2)]}')
    b=$(awk -v v="$v" '$2 == v {print $4}' "$W/all" | sort -n | awk '{x[NR]=$1} END {print x[int((NR+1)/2)]}')
    printf '%-12s no_memory_nodes %s ns  memory_nodes %s ns\n' "$v" "$a" "$b"
  done
} | tee "$OUT/launch-cost.txt"
cp "$W/err" "$OUT/last-stderr.txt" 2>/dev/null
rm -rf "$W"
