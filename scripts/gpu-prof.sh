#!/usr/bin/env bash
# gpu-prof.sh — on the device machine (no perf there): where the main
# thread's time goes in the PyTorch allocation loop under gpuledger, with
# bench/minprof.c (a SIGPROF sampler, LD_PRELOADed after libgpuledger).
# Prints the hottest module+offset pairs; symbolize gpuledger's with
#   addr2line -f -e build-device/interpose/libgpuledger.so OFFSET
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${GL_BUILD:-$ROOT/build-device}
OUT=${OUT:-/tmp/gl-gpu-prof}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$ROOT/.device-deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
W=$(mktemp -d)
gcc -O2 -shared -fPIC -o "$W/minprof.so" "$ROOT/bench/minprof.c" -ldl || exit 1
for v in "default X=1" "nofree GPULEDGER_FREE_STACKS=0" "d0 GPULEDGER_STACK_DEPTH=0"; do
  set -- $v
  echo "== $1"
  env "$2" LD_PRELOAD="$W/minprof.so" MINPROF_TID=main "$B/report/gpuledger" run -q --torch tensors -o "$W/p.db" -- \
    python3 "$ROOT/scripts/gpu/torch_alloc_ab.py" gpuledger --rounds 15 2>&1 | grep -E "minprof|added_ns" | cut -c1-200
  rm -f "$W/p.db"
done 2>&1 | tee "$OUT/prof.txt"
