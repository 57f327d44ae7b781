#!/usr/bin/env bash
# lint.sh — clang-tidy (checks in .clang-tidy) and cppcheck over the C
# sources, and the structure checks: no cycle between the library's files
# but those listed in interpose/cycles.h and no verb calling another
# (scripts/check-cycles.py), SQL only in report/model/, no run
# of six or more lines standing twice in report/ or store/
# (scripts/check-duplicates.py). Fails on any finding. Needs a built build/
# (compile_commands.json, object files).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
shopt -s nullglob
src=(interpose/*.c store/*.c report/*/*.c cupti/*.c)
fail=0
if command -v clang-tidy >/dev/null; then
  # one clang-tidy per CPU; its findings on stdout, one file's at a time
  printf '%s\0' "${src[@]}" |
    xargs -0 -n 1 -P "$(nproc)" sh -c 'out=$(clang-tidy -p "$0" --quiet "$@" 2>/dev/null); rc=$?; [ -z "$out" ] || printf "%s\n" "$out"; [ $rc = 0 ]' "$BUILD" ||
    fail=1
else
  echo "lint: clang-tidy not installed, skipped"
fi
if command -v cppcheck >/dev/null; then
  cppcheck -q --std=c11 --enable=warning,performance,portability --error-exitcode=1 --inline-suppr \
    -I interpose -I store -I report/model -I report/analysis -I report/render -I report/cmd -I report/run -D__GNUC__ -DGL_VERSION='"lint"' interpose store report cupti || fail=1
else
  echo "lint: cppcheck not installed, skipped"
fi
python3 scripts/check-cycles.py "$BUILD" || fail=1
python3 scripts/check-duplicates.py report store || fail=1
# SQL only in report/model/ (the store's schema and row writers aside)
sql=$(grep -l 'sqlite3_\|"SELECT \|"PRAGMA ' report/*/*.c | grep -v '^report/model/' || true)
if [ -n "$sql" ]; then
  echo "lint: SQL outside report/model/:" $sql
  fail=1
fi
[ $fail = 0 ] && echo "lint: clang-tidy and cppcheck clean, no unlisted cycle, no duplicated code"
exit $fail
