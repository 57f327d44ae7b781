#!/usr/bin/env bash
# callgrind-events.sh [BUILD] — instructions per recorded event, counted by
# valgrind's callgrind (exact and repeatable, unlike times on a shared
# machine): tests/threads with one thread making N cudaMallocAsync /
# cudaFreeAsync pairs under `gpuledger run`, for two N; the difference
# divided by the difference in events, for the application thread (the hot
# path) and the writer thread (store and SQLite). Needs valgrind.
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gl-callgrind-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export GPULEDGER_CUPTI_LIB="$BUILD/tests/fakecupti/libcupti.so.13"
# Ir of the thread whose profile holds function $2, in callgrind output dir $1
thread_ir() {
  local f
  f=$(grep -lE "^c?fn=\([0-9]+\) $2$" "$1"/callgrind.out.*-* | head -1)
  awk '/^summary:/ {print $2}' "$f"
}
measure() { # N -> "events app_ir writer_ir"
  local d="$tmp/$1"
  mkdir -p "$d"
  (cd "$d" && "$BUILD/report/gpuledger" run -q -o cg.db -- valgrind --tool=callgrind --separate-threads=yes \
      "$BUILD/tests/threads" 1 "$1" >/dev/null 2>&1)
  echo "$(sqlite3 "$d/cg.db" 'SELECT event_count FROM run') $(thread_ir "$d" 'worker') $(thread_ir "$d" 'gl_store_add')"
}
read -r e1 a1 w1 <<<"$(measure 2000)"
read -r e2 a2 w2 <<<"$(measure 12000)"
awk -v e1="$e1" -v e2="$e2" -v a1="$a1" -v a2="$a2" -v w1="$w1" -v w2="$w2" 'BEGIN {
  de = e2 - e1
  printf "events %d -> %d: application thread %.1f instructions/event, writer thread %.1f instructions/event\n",
         e1, e2, (a2 - a1) / de, (w2 - w1) / de }'
