#!/usr/bin/env bash
# demo.sh [--prefix DIR] — build gpuledger, install it into DIR (default
# ~/.local: bin/gpuledger, the library, the man page, the Python package,
# bash completion), and profile the embedded example (tests/progs/demo.c, a
# tiny training loop with a leak and an out-of-memory failure) with the
# installed gpuledger against the fake CUDA runtime, so it works on a
# machine without a GPU. Prints gpuledger's answers, the same facts straight
# from SQL, and how to put gpuledger on your PATH if it is not there yet.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$HOME/.local
case ${1:-} in
--prefix) prefix=${2:?--prefix needs a directory} ;;
--prefix=*) prefix=${1#--prefix=} ;;
-h | --help) sed -n '2,8s/^# \{0,1\}//p' "$0"; exit 0 ;;
"") ;;
*) echo "demo.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
bash scripts/install-deps.sh
if [ -d build ]; then
  meson configure build -Dprefix="$prefix" >/dev/null
else
  meson setup build --prefix "$prefix" >/dev/null
fi
ninja -C build >/dev/null
meson install -C build --quiet >/dev/null
G=$prefix/bin/gpuledger
echo "gpuledger installed into $prefix"
rm -f demo.db demo.db-wal demo.db-shm
# no GPU here: the fake runtime, driver and CUPTI from tests/ stand in
export GPULEDGER_CUPTI_LIB="$PWD/build/tests/fakecupti/libcupti.so.13"
export GPULEDGER_NVML_LIB="$PWD/build/tests/fakecuda/libnvidia-ml.so.1"
echo
echo "\$ gpuledger run -o demo.db -- build/tests/demo"
"$G" run -o demo.db -- build/tests/demo
echo; echo "\$ gpuledger report demo.db"
"$G" report demo.db
echo; echo "\$ gpuledger leaks demo.db"
"$G" leaks demo.db
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
echo
if [ "$(command -v gpuledger || true)" = "$G" ]; then
  echo "gpuledger is on your PATH: try 'gpuledger --help' and 'man gpuledger'."
else
  echo "gpuledger is in $prefix/bin, which is not on your PATH; put it there with:"
  echo "  export PATH=\"$prefix/bin:\$PATH\""
fi
# the Python package: gpuledger run puts it on its programs' PYTHONPATH; for
# `import gpuledger` elsewhere it must be on python3's path
pkg=$(cd / && "$G" run -q -- sh -c 'printf %s "${PYTHONPATH#*:}"' | cut -d: -f1)
if ! (cd / && python3 -c 'import gpuledger' 2>/dev/null); then
  echo "to import the gpuledger Python package outside 'gpuledger run':"
  echo "  export PYTHONPATH=\"$pkg\${PYTHONPATH:+:\$PYTHONPATH}\""
fi
