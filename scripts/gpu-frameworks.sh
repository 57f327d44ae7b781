#!/usr/bin/env bash
# gpu-frameworks.sh — on the device machine: gpuledger beyond PyTorch's eager
# loop (issue 26), one PASS/FAIL line per check with its numbers, in
# $OUT/frameworks.txt (< 4 minutes).
#
# Prepare here with scripts/device-prep.sh, then through the device tool:
#   carry: ["build-device", ".device-deps"]
#   command: bash scripts/gpu-frameworks.sh
#
# 1. Lightning Trainer.fit (scripts/gpu/fw_lightning.py, 6 steps of
#    step(closure)): the tagged parameters and optimizer state live at the
#    last batch's mark equal the model's and the optimizer's sums then (fit's
#    teardown moves both to the CPU after it); one "optimizer.closure" range per
#    step; at the last block of the last forward (inside the last
#    closure) the ledger has activations and the cuBLAS workspace as
#    workspace, no optimizer_temporaries;
# 2. CuPy (scripts/gpu/fw_cupy.py): the pool's blocks through the memory
#    hook: in use and cached as pool.used_bytes() / pool.total_bytes() at its
#    peak, at a mark and at the end; the leak gate passes (the pool's chunks
#    are its cache);
# 3. JAX (scripts/gpu/fw_jax.py): the arena as xla_arena, the in-use peak
#    from the samples = memory_stats()['peak_bytes_in_use'] at the end, the
#    limit = bytes_limit; the leak gate passes.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${GL_BUILD:-$ROOT/build-device}
OUT=${OUT:-/tmp/gl-frameworks}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$ROOT/.device-deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
GL="$B/report/gpuledger"
W=$(mktemp -d)
check() { # NAME WANT GOT [what]
  if [ "$2" = "$3" ]; then echo "PASS $1: $3 ${4:-}"; else echo "FAIL $1: want $2, got $3 ${4:-}"; fi
}
sql() { python3 -c 'import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone(); print(r[0] if r and r[0] is not None else 0)' "$@"; }
{
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"

echo "== 1. Lightning Trainer.fit (step(closure))"
timeout 150 "$GL" run -q -o "$W/light.db" -- python3 "$ROOT/scripts/gpu/fw_lightning.py" >"$W/light.out" 2>"$W/light.err"
echo "exit $? ($(grep -c . "$W/light.err") stderr lines; last: $(tail -1 "$W/light.err" | cut -c1-160))"
line=$(grep '^LIGHTNING' "$W/light.out")
echo "$line"
P=$(echo "$line" | sed -n 's/.*params=\([0-9]*\).*/\1/p'); S=$(echo "$line" | sed -n 's/.*state=\([0-9]*\).*/\1/p')
N=$(echo "$line" | sed -n 's/.*steps=\([0-9]*\).*/\1/p')
at_mark() { # CATEGORY: bytes of its blocks live at the mark "lightning last batch"
  sql "$W/light.db" "SELECT sum(b.requested) FROM tensor_blocks b, annotations m WHERE m.label = 'lightning last batch' AND b.category = '$1' AND b.id < m.seq AND (b.free_ns IS NULL OR b.free_ns > m.ts_ns)"
}
check "lightning parameters (model's sum on the GPU vs tagged blocks live at the last batch's mark)" "$P" "$(at_mark parameters)"
check "lightning optimizer_state (optimizer's sum on the GPU vs tagged blocks live at the mark)" "$S" "$(at_mark optimizer_state)"
check "lightning closure ranges inside optimizer.step (one per step)" "$N" \
  "$(sql "$W/light.db" "SELECT count(*) FROM annotations c JOIN annotations s ON s.seq = c.parent_seq WHERE c.label = 'optimizer.closure' AND s.label = 'optimizer.step'")"
# the last block the last forward made (inside the last closure)
E=$(sql "$W/light.db" "SELECT max(id) FROM tensor_blocks WHERE range_seq = (SELECT max(seq) FROM annotations WHERE op = 'range_push' AND label = 'forward')")
"$GL" report --at "#$E" "$W/light.db" >"$W/light.at" 2>&1
cats=$(grep -m1 '^  by category:' "$W/light.at")
echo "inside the last forward of the last closure (report --at #$E):$cats"
case "$cats" in *activations*) echo "PASS lightning: activations inside the closure";; *) echo "FAIL lightning: no activations inside the closure";; esac
case "$cats" in *workspace*) echo "PASS lightning: the cuBLAS workspace is workspace";; *) echo "FAIL lightning: no workspace category inside the closure";; esac
case "$cats" in *optimizer_temporaries*) echo "FAIL lightning: optimizer_temporaries inside the closure";; *) echo "PASS lightning: no optimizer_temporaries inside the closure";; esac
"$GL" report "$W/light.db" 2>&1 | grep -E 'by category' | head -3

echo "== 2. CuPy"
timeout 60 "$GL" run -q -o "$W/cupy.db" -- python3 "$ROOT/scripts/gpu/fw_cupy.py" >"$W/cupy.out" 2>"$W/cupy.err"
echo "exit $? ($(tail -1 "$W/cupy.err" | cut -c1-160))"
cat "$W/cupy.out"
val() { grep "^CUPY $1" "$W/cupy.out" | sed -n "s/.* $2=\([0-9]*\).*/\1/p"; }
check "cupy blocks at the end (pool.used_bytes vs block_stats.allocated)" "$(val end used)" \
  "$(sql "$W/cupy.db" "SELECT allocated FROM block_stats WHERE device = 0")"
check "cupy cached at the end (pool.total_bytes vs block_stats.reserved)" "$(val end total)" \
  "$(sql "$W/cupy.db" "SELECT reserved FROM block_stats WHERE device = 0")"
check "cupy peak in use (pool.used_bytes at its peak vs block_stats.allocated_peak)" "$(val peak used)" \
  "$(sql "$W/cupy.db" "SELECT allocated_peak FROM block_stats WHERE device = 0")"
check "cupy in use at the mark (pool.used_bytes vs blocks live then)" "$(val middle used)" \
  "$(sql "$W/cupy.db" "SELECT sum(b.size) FROM tensor_blocks b, annotations m WHERE m.label = 'cupy middle' AND b.id < m.seq AND (b.free_ns IS NULL OR b.free_ns > m.ts_ns)")"
check "cupy blocks never placed by the model" 0 "$(sql "$W/cupy.db" "SELECT unknown FROM block_stats WHERE device = 0")"
"$GL" gate --max-leak-bytes 0 "$W/cupy.db" >"$W/cupy.gate" 2>&1; rc=$?
check "cupy gate --max-leak-bytes 0" 0 "$rc" "($(head -1 "$W/cupy.gate"))"
"$GL" report "$W/cupy.db" 2>&1 | grep -E 'by category|never freed' | head -3

echo "== 3. JAX"
timeout 90 "$GL" run -q -o "$W/jax.db" -- python3 "$ROOT/scripts/gpu/fw_jax.py" >"$W/jax.out" 2>"$W/jax.err"
echo "exit $? ($(tail -1 "$W/jax.err" | cut -c1-160))"
cat "$W/jax.out"
"$GL" report --format json "$W/jax.db" >"$W/jax.json" 2>&1
fw=$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
def find(o):
    if isinstance(o, dict):
        if "framework_stats" in o: return o["framework_stats"]
        for v in o.values():
            r = find(v)
            if r: return r
    if isinstance(o, list):
        for v in o:
            r = find(v)
            if r: return r
print(json.dumps(find(d)))' "$W/jax.json" 2>&1)
echo "framework_stats: $fw"
jv() { echo "$fw" | python3 -c "import json,sys; d=json.load(sys.stdin) or {}; print(d.get('$1', 'none'))"; }
check "jax peak in use (memory_stats()['peak_bytes_in_use'] vs the ledger's samples)" \
  "$(sed -n 's/.*peak=\([0-9]*\).*/\1/p' "$W/jax.out")" "$(jv peak_bytes_in_use)"
check "jax limit (bytes_limit)" "$(sed -n 's/.*limit=\([0-9]*\).*/\1/p' "$W/jax.out")" "$(jv bytes_limit)"
check "jax in use at the last sample (exit)" "$(sed -n 's/.*in_use=\([0-9]*\).*/\1/p' "$W/jax.out")" "$(jv bytes_in_use_last)"
echo "jax arena: $(jv arena_bytes) bytes in $(jv arena_allocations) allocation(s)"
"$GL" gate --max-leak-bytes 0 "$W/jax.db" >"$W/jax.gate" 2>&1; rc=$?
check "jax gate --max-leak-bytes 0" 0 "$rc" "($(head -1 "$W/jax.gate"))"
"$GL" report "$W/jax.db" 2>&1 | grep -E "by category|allocator, from|not visible|peak ledger" -A1 | head -8 | cut -c1-220
"$GL" holes "$W/jax.db" 2>&1 | head -4 | cut -c1-200
} 2>&1 | tee "$OUT/frameworks.txt"
cp "$W"/*.err "$OUT/" 2>/dev/null
rm -rf "$W"
