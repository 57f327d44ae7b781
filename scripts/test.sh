#!/usr/bin/env bash
# test.sh — the whole test suite, as CI runs it:
#   1. build (warnings are errors) and run unit + end-to-end tests
#   2. clang-tidy and cppcheck (scripts/lint.sh), a release build
#   3. the same tests under AddressSanitizer + UndefinedBehaviorSanitizer,
#      and 60 s of fuzzing everything that reads a database (libFuzzer)
#   4. the lock-free queue under ThreadSanitizer
# Needs the CUDA headers at /usr/local/cuda (or -Dcudatoolkit=...); no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
step() { printf '\n=== %s\n' "$*"; }
passed=0 failed=0
# Count cmocka test cases from a meson test log.
tally() {
  local p f
  p=$( (grep -ho '\[  PASSED  \] [0-9]* test' "$1/meson-logs/testlog.txt" || true) | awk '{s+=$4} END {print s+0}')
  f=$( (grep -ho '\[  FAILED  \] [0-9]* test' "$1/meson-logs/testlog.txt" || true) | awk '{s+=$4} END {print s+0}')
  passed=$((passed + p)) failed=$((failed + f))
}

step "build and test"
[ -d build ] || meson setup build >/dev/null
ninja -C build
meson test -C build --print-errorlogs
tally build
# install-deps.sh installed what every test needs (pytest, Chromium, ...), so
# a test that skipped itself (exit 77) did not run for a reason to fix here
skipped=$(awk '/^test:/ {t = $NF} /^result: *exit status 77$/ {print t}' build/meson-logs/testlog.txt)
if [ -n "$skipped" ]; then
  echo "test.sh: skipped although scripts/install-deps.sh installed what they need:" $skipped
  exit 1
fi
for t in pytest install browser; do # defined only where meson found g++, meson, python3
  grep -q "^test: .* / $t\$" build/meson-logs/testlog.txt || { echo "test.sh: the $t test was not run"; exit 1; }
done

step "lint"
bash scripts/lint.sh build

step "release build (-O3 finds warnings -O0 does not)"
[ -d build-release ] || meson setup build-release --buildtype=release -Dtests=false >/dev/null
ninja -C build-release | tail -1

step "ASan + UBSan"
[ -d build-asan ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
ninja -C build-asan | tail -1
# Our library goes before the sanitizer runtime in LD_PRELOAD (it must see
# dlsym first), and the runtime's dlopen interceptor hides the fake
# runtime's RUNPATH from dlopen: hence the two settings.
ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0:abort_on_error=0 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 GL_SANITIZED=1 \
LD_LIBRARY_PATH="$PWD/build-asan/tests/fakecuda" \
  meson test -C build-asan --print-errorlogs
tally build-asan

step "fuzz the reader: 60 s of libFuzzer under ASan + UBSan (scripts/fuzz-reader.sh)"
bash scripts/fuzz-reader.sh 60

step "TSan (queue, the load's read-ahead)"
[ -d build-tsan ] || meson setup build-tsan -Db_sanitize=thread -Db_lundef=false >/dev/null
ninja -C build-tsan tests/test_queue tests/test_rows_ahead | tail -1
TSAN_OPTIONS=halt_on_error=1 meson test -C build-tsan --no-rebuild --print-errorlogs queue rows_ahead
tally build-tsan

step "all passed"
echo "cmocka: $passed passed, $failed failed"
