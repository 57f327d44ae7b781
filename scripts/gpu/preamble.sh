# shellcheck shell=bash disable=SC2034 # the variables are the sourcing script's
# preamble.sh — sourced first by every scripts/gpu-*.sh (on the device
# machine, from the repository root): ROOT (the checkout), B (the device
# build: GL_BUILD, else build-device/ made by scripts/device-prep.sh), GL
# (its gpuledger), the prebuilt libraries of .device-deps/ on
# LD_LIBRARY_PATH, and OUT (where results go: the caller's $OUT, else the
# script's default set before sourcing) made when set.
# A script that sets NAME first also gets: OUT defaulting to /tmp/gl-$NAME,
# PY (the Python with torch), a scratch directory W with its own shim cache,
# S (scripts/gpu), its log $OUT/$NAME.txt (everything tee'd to it), and
# PASS/FAIL tallies (result NAME OK DETAIL; secs START).
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=${GL_BUILD:-$ROOT/build-device}
GL="$B/report/gpuledger"
export LD_LIBRARY_PATH="$ROOT/.device-deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -n "${NAME:-}" ]; then
  OUT=${OUT:-/tmp/gl-$NAME}
fi
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
fi
if [ -n "${NAME:-}" ]; then
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
fi
