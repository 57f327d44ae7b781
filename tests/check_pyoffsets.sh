#!/usr/bin/env bash
# check_pyoffsets.sh — for every CPython 3.9-3.13 with headers on this
# machine (pyenv versions, the system python3, or $GL_TEST_PYTHONS), compile
# tests/pyoffsets.c against its headers and check that interpose/pyframes.c
# holds exactly the layout row it prints. usage: check_pyoffsets.sh SRCDIR
set -euo pipefail
src=${1:?usage: check_pyoffsets.sh SRCDIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
checked=0
for py in ${GL_TEST_PYTHONS:-/root/.pyenv/versions/3.*/bin/python3 /usr/bin/python3}; do
  [ -x "$py" ] || continue
  inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null) || continue
  minor=$("$py" -c 'import sys; print(sys.version_info[1])')
  [ "$minor" -ge 9 ] && [ "$minor" -le 13 ] || continue
  [ -f "$inc/Python.h" ] || { echo "skip $py: no headers in $inc"; continue; }
  cc -I"$inc" -I"$inc/internal" "$src/tests/pyoffsets.c" -o "$tmp/pyoffsets" 2>"$tmp/err" ||
    { echo "cannot compile against $inc:"; cat "$tmp/err"; exit 1; }
  row=$("$tmp/pyoffsets")
  if grep -qF -- "$row" "$src/interpose/pyframes.c"; then
    echo "ok   3.$minor ($py): $row"
    checked=$((checked + 1))
  else
    echo "FAIL 3.$minor ($py): headers say $row, not in interpose/pyframes.c"
    exit 1
  fi
done
[ "$checked" -gt 0 ] || { echo "no CPython 3.9-3.13 with headers found"; exit 1; }
