#!/usr/bin/env bash
# gpu-kvcache.sh — on the device machine (prepared with device-prep.sh,
# build-device/ and .device-deps/ carried): sub-allocations inside a
# program's own pools, one PASS/FAIL line per check and a tally.
#   1. the cost of one page annotation on the calling thread, in-process
#      (recording off/on rounds, medians): through NVTX from C
#      (bench/bench_nvtxmem.c, stack included, the loop 0 and 20 frames
#      down; target <= 300 ns added), and through gpuledger.Pool from
#      Python (scripts/gpu/pool_cost.py; stated apart, no target)
#   2. the paged KV-cache engine (scripts/gpu/kv_paged.py) under gpuledger:
#      the engine's own figures (from its free list and token counts) must
#      equal gpuledger's heap figures at the peak and at the end (pages in
#      use, free, holes, largest free run, both fragmentation ratios,
#      internal fragmentation); the series over time is printed; nothing
#      leaks; the KV tensors' pages are not counted twice in the device peak
#   3. the same engine with the planted leak (--leak): every region gpuledger
#      finds never given back comes from the cancel path (Engine.cancel ->
#      RetryCache.keep), named with its Python line, and their number is the
#      engine's own count
#   4. the engine's time per step, bare and under gpuledger (stated)
# Takes about 2-3 minutes; each step has a time limit. Everything goes to
# stdout and to $OUT: kvcache.txt (all of it), kv-engine.txt, kv-holes.json,
# kv-report.html, kv-leaks.txt, kv-leaks.json, bench-*.txt.
#   STEPS=1500 (steps with arrivals per engine run); KV_ARGS: more options
#   for kv_paged.py (e.g. "--device cpu --layers 2" to try the plumbing
#   without a GPU: the device checks then fail); PYTHON=python3
set -u
OUT=${OUT:-/tmp/gl-gpu-kvcache}
. "$(dirname "$0")/gpu/preamble.sh"
CUDA=${CUDA:-/usr/local/cuda}
STEPS=${STEPS:-1500}
KV_ARGS=${KV_ARGS:-}
PY=${PYTHON:-python3}
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
KV="$ROOT/scripts/gpu/kv_paged.py"
CHECK="$ROOT/scripts/gpu/kv_check.py"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
tally() { # FILE: count the PASS/FAIL lines a checker printed
  pass=$((pass + $(grep -c '^PASS' "$1" || true)))
  fail=$((fail + $(grep -c '^FAIL' "$1" || true)))
}
verdict() { # OK TEXT
  if [ "$1" = 1 ]; then echo "PASS  $2"; pass=$((pass + 1)); else echo "FAIL  $2"; fail=$((fail + 1)); fi
}
{
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
"$PY" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__)'
[ -x "$GL" ] || { echo "FAIL  $GL is missing: run scripts/device-prep.sh here and carry build-device"; exit 1; }

echo "== 1a. one page annotation through NVTX from C (bench_nvtxmem): ns per annotation, recording off/on"
gcc -O2 -o "$W/bn" "$ROOT/bench/bench_nvtxmem.c" -I"$CUDA/include" -ldl || { echo "FAIL  bench_nvtxmem does not build"; exit 1; }
"$W/bn" --ops 20000 --rounds 3
for rep in 1 2 3; do
  timeout 60 "$GL" run -q -o "$W/bn$rep.db" -- "$W/bn" --ops 20000 --rounds 7 --deep 0,20 | tee "$OUT/bench-nvtx-$rep.txt"
done
python3 "$CHECK" bench "$OUT"/bench-nvtx-[123].txt -- 20000 7 2 "$W"/bn[123].db | tee "$W/c1"
tally "$W/c1"

echo "== 1b. one page annotation through gpuledger.Pool from Python (pool_cost.py)"
"$PY" "$ROOT/scripts/gpu/pool_cost.py" --ops 20000 --rounds 3
for rep in 1 2 3; do
  timeout 60 "$GL" run -q -o "$W/pc$rep.db" -- "$PY" "$ROOT/scripts/gpu/pool_cost.py" --ops 20000 --rounds 7 \
    | tee "$OUT/bench-python-$rep.txt"
done
python3 "$CHECK" pycost "$OUT"/bench-python-[123].txt | tee "$W/c2"
tally "$W/c2"

echo "== 2. paged KV-cache engine under gpuledger ($STEPS steps with arrivals, then it drains)"
timeout 150 "$GL" run -o "$W/kv.db" -- "$PY" "$KV" --steps "$STEPS" $KV_ARGS > "$OUT/kv-engine.txt" 2>&1
rc=$?
verdict $((rc == 0)) "the engine ran to its end under gpuledger (exit status $rc; 124: over 150 s)"
grep -v '"what": "progress"' "$OUT/kv-engine.txt"
echo "-- gpuledger holes --top 3 (first heap in full)"
"$GL" holes --top 3 "$W/kv.db" 2>&1 | cut -c1-260 | head -60
"$GL" holes --series --format json "$W/kv.db" > "$OUT/kv-holes.json"
"$GL" report --format html -o "$OUT/kv-report.html" "$W/kv.db"
python3 "$CHECK" engine "$OUT/kv-holes.json" "$OUT/kv-engine.txt" "$W/kv.db" | tee "$W/c3"
tally "$W/c3"

echo "== 3. the planted leak: the retry cache never expires its entries (--leak)"
timeout 150 "$GL" run -o "$W/kvleak.db" -- "$PY" "$KV" --steps "$STEPS" $KV_ARGS --leak > "$OUT/kv-engine-leak.txt" 2>&1
rc=$?
verdict $((rc == 0)) "the leaking engine ran to its end under gpuledger (exit status $rc; 124: over 150 s)"
grep -v '"what": "progress"' "$OUT/kv-engine-leak.txt"
"$GL" leaks --top 3 "$W/kvleak.db" 2>&1 | tee "$OUT/kv-leaks.txt" | head -40 | cut -c1-200
"$GL" leaks --format json "$W/kvleak.db" > "$OUT/kv-leaks.json"
line=$(grep -n 'self.cache.keep(req, self.step_no)' "$KV" | cut -d: -f1)
python3 "$CHECK" leak "$OUT/kv-leaks.json" "$OUT/kv-engine-leak.txt" "$line" | tee "$W/c4"
tally "$W/c4"
"$GL" holes --top 1 "$W/kvleak.db" 2>&1 | grep -E "^heap|peak|worst|end|occupancy" | head -8 | cut -c1-260

echo "== 4. time per step: bare vs under gpuledger (500 steps, 2 each)"
for rep in 1 2; do
  timeout 60 "$PY" "$KV" --steps 500 --print-every 100000 $KV_ARGS | grep summary | tee -a "$W/t-bare"
  timeout 60 "$GL" run -q -o "$W/t$rep.db" -- "$PY" "$KV" --steps 500 --print-every 100000 $KV_ARGS | grep summary \
    | tee -a "$W/t-gl"
done
python3 "$CHECK" steptime "$W/t-bare" "$W/t-gl"

echo "== $pass PASS, $fail FAIL"
} 2>&1 | tee "$OUT/kvcache.txt"
