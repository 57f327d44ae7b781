#!/usr/bin/env bash
# demo.sh — build gpuledger and profile the embedded example
# (tests/progs/demo.c, a tiny training loop with a leak and an OOM) against
# the fake CUDA runtime, so it works on a machine without a GPU. Prints
# gpuledger's own answers, then the same facts straight from SQL.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null
rm -f demo.db demo.db-wal demo.db-shm
# no GPU here: the fake runtime, driver and CUPTI from tests/ stand in
export GPULEDGER_CUPTI_LIB="$PWD/build/tests/fakecupti/libcupti.so.13"
export GPULEDGER_NVML_LIB="$PWD/build/tests/fakecuda/libnvidia-ml.so.1"
echo "\$ gpuledger run -o demo.db -- build/tests/demo"
build/report/gpuledger run -o demo.db -- build/tests/demo
if build/report/gpuledger report --help >/dev/null 2>&1; then
  echo; echo "\$ gpuledger report demo.db"
  build/report/gpuledger report demo.db
  echo; echo "\$ gpuledger leaks demo.db"
  build/report/gpuledger leaks demo.db
fi
echo
echo "\$ sqlite3 demo.db  # never-freed allocations and the function that made them"
sqlite3 -header -column demo.db "
  SELECT a.api, a.size, f.symbol AS allocated_in
  FROM allocations a JOIN stack_frames f ON f.stack_id = a.stack_id AND f.depth = 0
  WHERE a.free_ns IS NULL;"
echo
echo "\$ sqlite3 demo.db  # failed allocations"
sqlite3 -header -column demo.db "
  SELECT e.op, e.api, e.size, e.result, f.symbol AS in_function
  FROM events e JOIN stack_frames f ON f.stack_id = e.stack_id AND f.depth = 0
  WHERE e.op IN ('oom', 'error');"
