#!/usr/bin/env bash
# gpu-prof.sh — on the device machine (no perf there): where the main
# thread's time goes in the PyTorch allocation loop under gpuledger, with
# bench/minprof.c (a SIGPROF sampler, LD_PRELOADed after libgpuledger), then
# the loop's in-process A/B against PyTorch's recorder (short form of
# gpu-hotpath.sh). Symbolize gpuledger's offsets here with
#   addr2line -f -e build-device/interpose/libgpuledger.so OFFSET
set -u
OUT=${OUT:-/tmp/gl-gpu-prof}
. "$(dirname "$0")/gpu/preamble.sh"
AB="$ROOT/scripts/gpu/torch_alloc_ab.py"
W=$(mktemp -d)
gcc -O2 -shared -fPIC -o "$W/minprof.so" "$ROOT/bench/minprof.c" -ldl || exit 1
{
echo "== $(date -u +%FT%TZ) profile, default settings, main thread"
LD_PRELOAD="$W/minprof.so" MINPROF_TID=main "$GL" run -q --torch tensors -o "$W/p.db" -- \
  python3 "$AB" gpuledger --rounds 15 2>&1 | grep -E "minprof|added_ns" | cut -c1-200
rm -f "$W/p.db"
echo "== torch loop (ns per alloc+free pair, in-process A/B)"
for rep in 1 2; do
  echo "history-python-$rep $(python3 "$AB" history 2>&1 | tail -1 | cut -c1-150)"
  echo "gl-default-$rep $("$GL" run -q --torch tensors -o "$W/t.db" -- python3 "$AB" gpuledger 2>&1 | tail -1 | cut -c1-150)"
  rm -f "$W/t.db"
done
echo "gl-nofree $(GPULEDGER_FREE_STACKS=0 "$GL" run -q --torch tensors -o "$W/t.db" -- python3 "$AB" gpuledger 2>&1 | tail -1 | cut -c1-150)"
rm -f "$W/t.db"
echo "gl-d0 $(GPULEDGER_STACK_DEPTH=0 "$GL" run -q --torch tensors -o "$W/t.db" -- python3 "$AB" gpuledger 2>&1 | tail -1 | cut -c1-150)"
} 2>&1 | tee "$OUT/prof.txt"
