# preamble.sh — sourced first by every scripts/gpu-*.sh (on the device
# machine, from the repository root): ROOT (the checkout), B (the device
# build: GL_BUILD, else build-device/ made by scripts/device-prep.sh), GL
# (its gpuledger), the prebuilt libraries of .device-deps/ on
# LD_LIBRARY_PATH, and OUT (where results go: the caller's $OUT, else the
# script's default set before sourcing) made when set.
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${GL_BUILD:-$ROOT/build-device}
GL="$B/report/gpuledger"
export LD_LIBRARY_PATH="$ROOT/.device-deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
fi
