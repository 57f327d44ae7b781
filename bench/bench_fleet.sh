#!/usr/bin/env bash
# bench_fleet.sh — a fleet's report: time and peak memory of one gpuledger
# command over many databases, an old build against a new one.
#
#   bench/bench_fleet.sh [-n DBS] [-e EVENTS] [-r ROUNDS] [-a 'VERB ARGS']
#                        BENCH_GEN_DB OLD_GPULEDGER NEW_GPULEDGER
#
# Writes DBS databases (default 64) of EVENTS events each (default 200000)
# with BENCH_GEN_DB (build/bench/bench_gen_db: a training-like pattern,
# bench_gen_db.c), then runs `GPULEDGER VERB ARGS DB1 ... DBn` (default
# verb: report) ROUNDS times (default 3), old and new in alternating order,
# output to a file, and prints a Markdown table: the median wall time and
# the median of the peak RSS (/usr/bin/time's %M) of each, and whether the
# two builds wrote the same bytes. The databases go in a temporary
# directory ($TMPDIR), removed at the end.
set -euo pipefail
n=64 events=200000 rounds=3 verb=report
usage() { echo "usage: $0 [-n DBS] [-e EVENTS] [-r ROUNDS] [-a 'VERB ARGS'] BENCH_GEN_DB OLD_GPULEDGER NEW_GPULEDGER" >&2; exit 2; }
while getopts "n:e:r:a:h" o; do
  case $o in
    n) n=$OPTARG ;;
    e) events=$OPTARG ;;
    r) rounds=$OPTARG ;;
    a) verb=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# = 3 ] || usage
gen=$1 old=$2 new=$3
for x in "$gen" "$old" "$new"; do [ -x "$x" ] || { echo "bench_fleet: $x is not an executable" >&2; exit 2; }; done
for v in "$n" "$events" "$rounds"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "bench_fleet: -n, -e and -r want positive numbers, not '$v'" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "bench_fleet: needs /usr/bin/time (GNU time: apt-get install time)" >&2; exit 2; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/gl-fleet-XXXXXX")
trap 'rm -rf "$dir"' EXIT
dbs=()
for i in $(seq 1 "$n"); do
  f=$(printf '%s/rank-%03d.db' "$dir" "$i")
  "$gen" --events "$events" --out "$f" --write-only >/dev/null
  dbs+=("$f")
done
echo "bench_fleet: $n databases of $events events ($(du -sh "$dir" | cut -f1)) in $dir"

# one run: "SECONDS KIB" appended to $dir/NAME.times; output to $dir/NAME.out
one() {
  local name=$1 bin=$2 t0 t1 rc=0
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086 # the verb and its arguments are words
  /usr/bin/time -f %M -o "$dir/$name.rss" "$bin" $verb "${dbs[@]}" >"$dir/$name.out" 2>"$dir/$name.err" || rc=$?
  t1=$(date +%s.%N)
  [ $rc = 0 ] || { echo "bench_fleet: $bin $verb ... exited $rc:" >&2; head -5 "$dir/$name.err" >&2; exit 2; }
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $(tail -1 "$dir/$name.rss")" >>"$dir/$name.times"
}
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then one old "$old"; one new "$new"; else one new "$new"; one old "$old"; fi
done

# the median of column COL of FILE (sort -n; the mean of the two middle
# values for an even count)
median() {
  cut -d' ' -f"$2" "$1" | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
same=no
cmp -s "$dir/old.out" "$dir/new.out" && same=yes
echo
echo "| \`gpuledger $verb\` over $n databases of $events events, $rounds rounds | median wall | median peak RSS |"
echo "|---|---|---|"
for b in old new; do
  printf '| %s (%s) | %.2f s | %d MB |\n' "$b" "$([ $b = old ] && echo "$old" || echo "$new")" \
    "$(median "$dir/$b.times" 1)" "$(($(median "$dir/$b.times" 2 | cut -d. -f1) * 1024 / 1000000))"
done
echo
echo "same output from both: $same ($(wc -c <"$dir/new.out") bytes)"
