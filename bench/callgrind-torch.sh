#!/usr/bin/env bash
# callgrind-torch.sh [BUILD] — instructions per tensor alloc+free pair that
# the tensor ledger adds, counted by valgrind's callgrind (exact and
# repeatable, unlike times on a shared machine): bench_torch --count runs N
# pairs through the stand-in caching allocator and the real C++ shim with
# recording on and off, for two N; the differences per pair, for the
# application thread (the hot path: on minus off) and the writer thread
# (store and SQLite; under valgrind it commits far more often than at full
# speed, so this overstates it: bench_store_blocks measures it batched), in
# each GPULEDGER_PYTHON mode and for the native loop. Needs valgrind and
# sqlite3.
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gl-cgtorch-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
N1=${N1:-2000}
N2=${N2:-12000}
thread_ir() { # Ir of the thread whose profile holds function $2, in callgrind output dir $1
  local f
  f=$(grep -lE "^c?fn=\([0-9]+\) $2$" "$1"/callgrind.out.*-* | head -1)
  [ -n "$f" ] && awk '/^summary:/ {print $2}' "$f" || echo 0
}
measure() { # LOOP STATE N ENV -> "app_ir writer_ir events"
  local d="$tmp/$1-$2-$3-${4//[^a-z0-9]/}"
  mkdir -p "$d"
  (cd "$d" && env $4 GPULEDGER_QUIET=1 "$BUILD/report/gpuledger" run -q --torch segments -o cg.db -- \
      valgrind --tool=callgrind --separate-threads=yes "$BUILD/bench/bench_torch" --count "$1" "$2" "$3" \
      >/dev/null 2>"$d/err") || { cat "$d/err" >&2; exit 1; }
  echo "$(thread_ir "$d" 'main') $(thread_ir "$d" 'gl_store_add') $(sqlite3 "$d/cg.db" 'SELECT event_count FROM run')"
}
row() { # LABEL LOOP ENV
  read -r on1 w1 e1 <<<"$(measure "$2" on "$N1" "$3")"
  read -r on2 w2 e2 <<<"$(measure "$2" on "$N2" "$3")"
  read -r off1 _ _ <<<"$(measure "$2" off "$N1" "$3")"
  read -r off2 _ _ <<<"$(measure "$2" off "$N2" "$3")"
  awk -v l="$1" -v n="$((N2 - N1))" -v a="$on1" -v b="$on2" -v c="$off1" -v d="$off2" -v w1="$w1" -v w2="$w2" \
      -v e1="$e1" -v e2="$e2" 'BEGIN {
    printf "| %s | %.2f | %.0f | %.0f | %.0f | %.0f |\n", l, (e2 - e1) / n, (d - c) / n, (b - a) / n,
           ((b - a) - (d - c)) / n, (w2 - w1) / n }'
}
echo "| stacks | rows/pair | app thread, off (instr/pair) | on | added by recording | writer thread (instr/pair, small batches) |"
echo "|---|---|---|---|---|---|"
row "Python loop, GPULEDGER_PYTHON=1 (default)" python "GPULEDGER_PYTHON=1"
row "Python loop, GPULEDGER_PYTHON=only" python "GPULEDGER_PYTHON=only"
row "native loop" native "GPULEDGER_PYTHON=0"
