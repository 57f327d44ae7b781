#!/usr/bin/env bash
# run-cases.sh check|update GPULEDGER — run every line of tests/golden/cases
# (a name, then the arguments of one gpuledger command) in a scratch copy of
# tests/golden/db/, and compare with (check) or write (update)
# tests/golden/expected/: NAME holds the command's stdout, status.txt the exit
# code and stderr of every case, and an argument @FILE names an output file
# the command writes, kept as expected/FILE. Run by `meson test golden`;
# scripts/update-goldens.sh updates.
set -euo pipefail
mode=$1
G=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gl-golden-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/work" "$tmp/out"
cp "$here"/db/*.db "$here/rules.txt" "$tmp/work/"
# inputs that are not databases, for the error cases
: >"$tmp/work/empty.db"
printf 'not a database\n' >"$tmp/work/text.db"
cd "$tmp/work"
n=0
while read -r name rest; do
  [[ -z $name || $name == \#* ]] && continue
  eval "args=($rest)"
  files=()
  for i in "${!args[@]}"; do
    if [[ ${args[$i]} == @* ]]; then
      args[$i]=${args[$i]#@}
      files+=("${args[$i]}")
    fi
  done
  rc=0
  "$G" "${args[@]}" >"$tmp/out/$name" 2>"$tmp/err" </dev/null || rc=$?
  { echo "$name: exit $rc"; sed 's/^/  /' "$tmp/err"; } >>"$tmp/out/status.txt"
  for f in "${files[@]}"; do
    if [ -f "$f" ]; then mv "$f" "$tmp/out/$f"; else echo "  (no $f written)" >>"$tmp/out/status.txt"; fi
  done
  n=$((n + 1))
done <"$here/cases"
if [ "$mode" = update ]; then
  rm -rf "$here/expected"
  cp -r "$tmp/out" "$here/expected"
  echo "golden: $n cases written to tests/golden/expected"
  exit 0
fi
if diff -r "$here/expected" "$tmp/out" >"$tmp/diff"; then
  echo "golden: $n cases, all outputs as expected"
  exit 0
fi
echo "golden: outputs differ from tests/golden/expected (if intended: scripts/update-goldens.sh," \
  "and name the output change in the commit message):"
head -c 20000 "$tmp/diff"
exit 1
