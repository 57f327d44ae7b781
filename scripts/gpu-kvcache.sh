#!/usr/bin/env bash
# gpu-kvcache.sh — on the device machine (prepared with device-prep.sh):
# sub-allocations inside a program's own pools.
#   1. the cost of one page annotation on the calling thread, in-process
#      (recording off/on rounds): through NVTX from C (bench/bench_nvtxmem.c,
#      stack included, loop 0 and 20 frames down), and through
#      gpuledger.Pool from Python (scripts/gpu/pool_cost.py)
#   2. the paged KV-cache engine (scripts/gpu/kv_paged.py) under gpuledger:
#      the engine's own figures next to gpuledger's heap report (occupancy,
#      holes, both fragmentation ratios, internal fragmentation, over time)
#   3. the same engine with the planted leak (--leak): `gpuledger leaks`
#      must name the cancel path (Engine.cancel -> RetryCache.keep) with its
#      Python line
#   4. the engine's time per step: bare, and under gpuledger
# Everything goes to stdout and $OUT (kvcache.txt, report HTML, JSON).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${GL_BUILD:-$ROOT/build-device}
OUT=${OUT:-/tmp/gl-gpu-kvcache}
CUDA=${CUDA:-/usr/local/cuda}
STEPS=${STEPS:-3000}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$ROOT/.device-deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
GL="$B/report/gpuledger"
KV="$ROOT/scripts/gpu/kv_paged.py"
W=$(mktemp -d)
{
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__)'

echo "== 1a. one page annotation through NVTX from C (bench_nvtxmem), default depth 48"
gcc -O2 -o "$W/bn" "$ROOT/bench/bench_nvtxmem.c" -I"$CUDA/include" -ldl || exit 1
"$W/bn" --ops 20000 --rounds 3
for rep in 1 2 3; do
  echo "-- repeat $rep"
  "$GL" run -q -o "$W/bn$rep.db" -- "$W/bn" --ops 50000 --rounds 9 --deep 0,20
done
echo "== 1b. one page annotation through gpuledger.Pool from Python (pool_cost.py)"
python3 "$ROOT/scripts/gpu/pool_cost.py" --ops 20000 --rounds 3
for rep in 1 2 3; do
  "$GL" run -q -o "$W/pc$rep.db" -- python3 "$ROOT/scripts/gpu/pool_cost.py" --ops 50000 --rounds 9
done

echo "== 2. paged KV-cache engine under gpuledger ($STEPS steps)"
"$GL" run -o "$W/kv.db" -- python3 "$KV" --steps "$STEPS" 2>&1 | tee "$OUT/kv-engine.txt" | grep -v '"what": "progress"'
grep '"what": "progress"' "$OUT/kv-engine.txt" | head -20
echo "-- gpuledger holes (heaps after the pools; the series every ~1/256 of the changes)"
"$GL" holes --top 3 "$W/kv.db" 2>&1 | cut -c1-260 | head -80
"$GL" holes --series --format json "$W/kv.db" > "$OUT/kv-holes.json"
"$GL" report --format html -o "$OUT/kv-report.html" "$W/kv.db"
python3 - "$OUT/kv-holes.json" "$OUT/kv-engine.txt" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))["processes"][0]
eng = {}
for line in open(sys.argv[2]):
    if line.startswith("kv_paged "):
        rec = json.loads(line[len("kv_paged "):])
        eng[rec["what"]] = rec
keys = ["pages_in_use", "pages_free", "holes", "largest_free_run", "external_fragmentation",
        "largest_free_ratio", "internal_fragmentation"]
def ours(p):
    return [p["pages_in_use"], p["pages_free"], p["holes"], p["largest_free_pages"],
            round(p["external_fragmentation"], 6), round(p["largest_free_ratio"], 6),
            round(p["internal_fragmentation"], 6)]
print("heaps:", len(d["heaps"]), "(one per layer; the page ids are the same in every layer)")
h = d["heaps"][0]
print("layer 0 over time (gpuledger; seq, pages in use, free, holes, largest free run, ext frag, largest_free_ratio, internal frag):")
for p in h["series"][:: max(1, len(h["series"]) // 16)]:
    print("   ", p["seq"], *ours(p))
for what, pt in (("peak", h["peak"]), ("end", h["end"])):
    e = eng.get(what)
    theirs = [e[k] for k in keys] if e else None
    print("%-4s engine   %s" % (what, theirs))
    print("%-4s gpuledger %s %s" % (what, ours(pt), "MATCH" if theirs == ours(pt) else "DIFFER"))
print("worst (gpuledger):", ours(h["worst"]))
print("leaked regions per heap:", [x["leaked_regions"] for x in d["heaps"]])
PYEOF

echo "== 3. the planted leak: the retry cache never expires (--leak)"
"$GL" run -o "$W/kvleak.db" -- python3 "$KV" --steps "$STEPS" --leak 2>&1 | grep -v '"what": "progress"'
"$GL" leaks --top 3 "$W/kvleak.db" 2>&1 | tee "$OUT/kv-leaks.txt" | head -60
line=$(grep -n 'self.cache.keep(req, self.step_no)' "$KV" | cut -d: -f1)
if grep -q "cancel (.*kv_paged.py:$line)" "$OUT/kv-leaks.txt"; then
  echo "LEAK FOUND at the cancel path: Engine.cancel (kv_paged.py:$line)"
else
  echo "LEAK NOT FOUND at kv_paged.py:$line"
fi
"$GL" holes --top 1 "$W/kvleak.db" 2>&1 | grep -E "^heap|peak|worst|end|occupancy" | head -12 | cut -c1-260

echo "== 4. time per step: bare vs gpuledger"
for rep in 1 2 3; do
  python3 "$KV" --steps 1000 --print-every 100000 | grep summary
  "$GL" run -q -o "$W/t$rep.db" -- python3 "$KV" --steps 1000 --print-every 100000 | grep summary
done
} 2>&1 | tee "$OUT/kvcache.txt"
rm -rf "$W"
