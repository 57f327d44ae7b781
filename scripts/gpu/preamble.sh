# shellcheck shell=bash disable=SC2034 # the variables are the sourcing script's
# preamble.sh — sourced by scripts/gpu-*.sh on the device machine: the
# prebuilt gpuledger (build-device/, GL_BUILD to choose another), its
# libraries (.device-deps/lib), the Python with torch, a scratch directory
# with its own shim cache, $OUT, and PASS/FAIL tallies. Set NAME first
# (the log is $OUT/$NAME.txt).
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=${GL_BUILD:-$ROOT/build-device}
OUT=${OUT:-/tmp/gl-$NAME}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$ROOT/.device-deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
GL="$B/report/gpuledger"
PY=${PY:-python3}
[ -x /opt/torch/.venv/bin/python ] && [ -z "${PY_SET:-}" ] && PY=/opt/torch/.venv/bin/python
W=$(mktemp -d)
export GPULEDGER_CACHE_DIR="$W/cache"
S="$ROOT/scripts/gpu"
LOG="$OUT/$NAME.txt"
exec > >(tee -a "$LOG") 2>&1
pass=0 fail=0
result() { # NAME OK DETAIL: one PASS/FAIL line
  if [ "$2" = 1 ]; then echo "PASS  $1: $3"; pass=$((pass + 1)); else echo "FAIL  $1: $3"; fail=$((fail + 1)); fi
}
secs() { awk "BEGIN { printf \"%.2f\", $EPOCHREALTIME - $1 }"; }
