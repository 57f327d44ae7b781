#!/usr/bin/env bash
# update-goldens.sh — refresh the golden outputs (tests/golden/expected/)
# that `meson test golden` compares the gpuledger verbs against:
#
#   scripts/update-goldens.sh            outputs of tests/golden/cases from the
#                                        databases in tests/golden/db/
#   scripts/update-goldens.sh --record   first re-record those databases from
#                                        the test programs against the fake CUDA
#                                        runtime, normalised (tests/golden/normalise.py)
#
# Uses build/ (BUILD=dir to choose another). Then look at `git diff
# tests/golden`: a golden changes only in a commit whose message names the
# intended output change.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
BUILD=$(cd "${BUILD:-build}" && pwd)
G="$BUILD/report/gpuledger"
ninja -C "$BUILD" >/dev/null
if [ "${1:-}" = --record ]; then
  DB="$SRC/tests/golden/db"
  mkdir -p "$DB"
  export GPULEDGER_CUPTI_LIB="$BUILD/tests/fakecupti/libcupti.so.13"
  # no address-space randomisation: addresses and stacks repeat run to run
  norand=()
  setarch "$(uname -m)" -R true 2>/dev/null && norand=(setarch "$(uname -m)" -R)
  record() { # NAME [ENV=value...] PROGRAM [ARGS...]
    local name=$1; shift
    local envs=()
    while [[ $1 == *=* ]]; do envs+=("$1"); shift; done
    local prog=$1; shift
    rm -f "$DB/$name.db"
    (cd "$DB" && env "${envs[@]}" "${norand[@]}" "$G" run -q -o "$name.db" -- "$BUILD/tests/$prog" "$@" \
        >/dev/null 2>&1) || true
    [ -s "$DB/$name.db" ] || { echo "update-goldens: recording $name wrote no database" >&2; exit 1; }
    python3 "$SRC/tests/golden/normalise.py" "$DB/$name.db" "$BUILD" "$SRC"
    echo "recorded $name.db"
  }
  # a Python job on the stand-in torch (tests/pystub), installed as a
  # library is (under site-packages/, so its frames are a library's), with
  # the fake CUDA runtime
  record_py() { # NAME [ENV=value...] SCRIPT
    local name=$1; shift
    local envs=()
    while [[ $1 == *=* ]]; do envs+=("$1"); shift; done
    local sp="$BUILD/golden-py/site-packages"
    rm -rf "$BUILD/golden-py"
    mkdir -p "$sp"
    cp -r "$SRC/tests/pystub/torch" "$sp/torch"
    ln -s "$SRC/tests/torchstub/include" "$sp/torch/include"
    mkdir "$sp/torch/lib"
    ln -s "$BUILD/tests/libc10_cuda.so" "$BUILD/tests/libc10.so" "$sp/torch/lib/"
    rm -f "$DB/$name.db"
    (cd "$DB" && env PYTHONPATH="$sp" LD_LIBRARY_PATH="$BUILD/tests/fakecuda" GPULEDGER_CACHE_DIR="$BUILD/golden-py/cache" \
        "${envs[@]}" "${norand[@]}" "$G" run -q -o "$name.db" -- python3 "$SRC/tests/progs/$1" >/dev/null 2>&1) || true
    [ -s "$DB/$name.db" ] || { echo "update-goldens: recording $name wrote no database" >&2; exit 1; }
    python3 "$SRC/tests/golden/normalise.py" "$DB/$name.db" "$BUILD" "$SRC"
    echo "recorded $name.db"
  }
  record demo demo
  record alloc1000 alloc1000
  record oom FAKECUDA_FAIL_ALLOC=3 oom
  record pool misc pool
  record frag misc frag
  record vmm procaddr
  record managed misc managed
  record devices misc devices
  record leaks3 misc leaks3
  record grow misc grow 8
  record reset misc reset
  record crash misc crash
  record marks marks
  record nvtx nvtx
  record heaps nvtx_mem
  record cupti GPULEDGER_CUPTI=1 GPULEDGER_CUPTI_ACTIVITY=1 FAKECUPTI_DROPPED=5 cupti_static
  record torch-train torchalloc train
  record torch-frag FAKECUDA_MEM_BYTES=67108864 torchalloc frag
  record torch-demand FAKECUDA_MEM_BYTES=67108864 torchalloc demand
  record torch-expandable torchalloc expandable
  record_py torch-grow-oom FAKECUDA_MEM_BYTES=67108864 py_grow_oom.py
  record_py torch-pools py_graph_pool.py
  if [ -x "$BUILD/tests/pyembed" ]; then
    record python pyembed "$SRC/tests/golden/py_golden.py"
  else
    echo "update-goldens: pyembed not built (python3-dev missing): python.db kept" >&2
  fi
fi
bash tests/golden/run-cases.sh update "$G"
