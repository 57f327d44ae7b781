#!/usr/bin/env bash
# gpu-never-harm.sh — on the device machine (prepared with device-prep.sh):
# what a PyTorch job sees of its signals and child processes, bare and under
# `gpuledger run` (docs/reliability.md, docs/performance.md).
#   1. SIGINT: the handler Python sees, KeyboardInterrupt + finally, the
#      checkpoint written, the exit code, and the database finished
#   2. cost in the job's process tree, alternating bare / gpuledger rounds,
#      medians: a DataLoader with 8 workers (3 epochs), 20 subprocess.run
#      of /bin/true, 200 fork + _exit
# Everything goes to stdout and $OUT/never-harm.txt.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${GL_BUILD:-$ROOT/build-device}
OUT=${OUT:-/tmp/gl-gpu-never-harm}
ROUNDS=${ROUNDS:-5}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$ROOT/.device-deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
GL="$B/report/gpuledger"
NH="$ROOT/scripts/gpu/never_harm.py"
W=$(mktemp -d)
fails=0
check() { if [ "$1" = "$2" ]; then echo "PASS $3: $1"; else echo "FAIL $3: bare '$1', gpuledger '$2'"; fails=$((fails+1)); fi; }
{
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__)'

echo "== 1. SIGINT"
bare=$(python3 "$NH" sigint "$W/bare.ckpt" 2>"$W/bare.err"); brc=$?
under=$("$GL" run -o "$W/sigint.db" -- python3 "$NH" sigint "$W/gl.ckpt" 2>"$W/gl.err"); urc=$?
echo "bare (rc $brc):"; echo "$bare" | sed 's/^/   /'
echo "gpuledger (rc $urc):"; echo "$under" | sed 's/^/   /'; sed 's/^/   stderr: /' "$W/gl.err"
check "$bare" "$under" "the job's output"
check "$brc" "$urc" "exit code"
check "$(cat "$W/bare.ckpt" 2>/dev/null)" "$(cat "$W/gl.ckpt" 2>/dev/null)" "checkpoint"
"$GL" report "$W/sigint.db" > "$W/sigint.txt" 2>&1; rrc=$?
if grep -q "without finishing" "$W/sigint.txt" || [ $rrc -ne 0 ]; then echo "FAIL database finished (report rc $rrc)"; fails=$((fails+1)); else echo "PASS database finished"; fi
head -12 "$W/sigint.txt" | sed 's/^/   /'

echo "== 2. cost in the job's process tree ($ROUNDS alternating rounds, medians)"
for t in "loader 3 loader_s" "spawn 20 spawn_s" "fork 200 fork_s"; do
  set -- $t
  : > "$W/b"; : > "$W/g"
  for r in $(seq "$ROUNDS"); do
    python3 "$NH" "$1" "$2" 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read().splitlines()[-1])['$3'])" >> "$W/b"
    "$GL" run -o "$W/cost-$1-$r.db" -- python3 "$NH" "$1" "$2" 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read().splitlines()[-1])['$3'])" >> "$W/g"
  done
  python3 - "$1 $2" "$W/b" "$W/g" <<'PYEOF'
import statistics, sys
b = [float(x) for x in open(sys.argv[2])]; g = [float(x) for x in open(sys.argv[3])]
mb, mg = statistics.median(b), statistics.median(g)
print("%-10s bare median %.4f s [%s]  gpuledger median %.4f s [%s]  ratio %.2f" % (
    sys.argv[1], mb, " ".join("%.4f" % x for x in b), mg, " ".join("%.4f" % x for x in g), mg / mb))
PYEOF
done
echo "== $fails failed"
} 2>&1 | tee "$OUT/never-harm.txt"
