#!/usr/bin/env bash
# fuzz-reader.sh [SECONDS] — fuzzes everything that reads a database
# (tests/fuzz/fuzz_reader.c: every reading verb on each input, half of the
# mutations made at the level of rows) with clang's libFuzzer under ASan +
# UBSan, for SECONDS (default 60), starting from the golden databases.
# Exit 0: no finding. Otherwise the input that failed is kept as
# build-fuzz/crash-* (or leak-*, timeout-*, oom-*); reproduce with
#   build-fuzz/fuzz_reader build-fuzz/crash-...
# Needs clang and its libFuzzer runtime (Debian: clang, libclang-rt-dev);
# uses build/ (scripts/test.sh configures it) for the HTML assets.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
B=build-fuzz
CC=${CC_FUZZ:-clang}
command -v "$CC" >/dev/null || { echo "fuzz-reader: $CC not found (Debian: apt-get install clang libclang-rt-dev)"; exit 2; }
[ -f build/report/html_assets.c ] || ninja -C build report/html_assets.c >/dev/null
mkdir -p "$B/obj" "$B/corpus"

san="-fsanitize=address,undefined -fno-sanitize-recover=all"
cflags="-g -O1 -fno-omit-frame-pointer $san -fsanitize=fuzzer-no-link -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror
 -Wno-unused-command-line-argument -DGL_VERSION=\"fuzz\" -DGL_LIBDIR=\"/nonexistent\" -Ireport/model -Ireport/analysis -Ireport/render -Ireport/cmd -Ireport/run -Istore -Iinterpose"
# every source of the gpuledger command but the build-time generators (asset
# embedder, man page/completion generator), main() renamed; the store; the
# library's configuration table (the launcher reads the command's settings
# with it); the generated assets; the target
srcs=$(ls report/*/*.c store/*.c | grep -v -e '^report/render/embed_assets\.c$' -e '^report/docgen/')
srcs="$srcs interpose/config.c build/report/html_assets.c tests/fuzz/fuzz_reader.c"
compile() { # SRC: compile when the object is older than it or the flags changed
  local src=$1 obj="$B/obj/$(echo "$1" | tr / _).o" extra=""
  [ "$src" = report/cmd/main.c ] && extra="-Dmain=gpuledger_main"
  [ "$src" = tests/fuzz/fuzz_reader.c ] && extra="-fsanitize=fuzzer"
  if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ "$B/flags" -nt "$obj" ]; then
    $CC $cflags $extra -c "$src" -o "$obj"
  fi
}
export -f compile
export B CC cflags
[ -f "$B/flags" ] && [ "$(cat "$B/flags")" = "$cflags" ] || echo "$cflags" >"$B/flags"
# headers: rebuild everything when any header is newer than the target
if [ -f "$B/fuzz_reader" ] && [ -n "$(find report store interpose tests/fuzz -name '*.h' -newer "$B/fuzz_reader")" ]; then
  rm -f "$B"/obj/*.o
fi
printf '%s\n' $srcs | xargs -P "$(nproc)" -I{} bash -c 'compile {}'
objs=$(for s in $srcs; do echo "$B/obj/$(echo "$s" | tr / _).o"; done)
# shellcheck disable=SC2086 # one word per object
$CC $san -fsanitize=fuzzer $objs -o "$B/fuzz_reader" -lsqlite3 -ldl -lm -lpthread

cp -n tests/golden/db/*.db "$B/corpus/" 2>/dev/null || true
# the golden databases are of older schemas (kept as they were recorded):
# seeds of the current schema too, recorded by build/ on the fake runtime
for prog in demo nvtx_mem "torchalloc train"; do
  f="$PWD/$B/corpus/current-${prog%% *}.db"
  [ -s "$f" ] || [ ! -x "build/tests/${prog%% *}" ] || {
    # shellcheck disable=SC2086 # the program, then its arguments
    build/report/gpuledger run -q -o "$f" -- "$PWD"/build/tests/$prog >/dev/null 2>&1 || true
    rm -f "$f-wal" "$f-shm"
  }
done
# packed recordings (run --pack, schema 6: the packs' blobs and the SQL module)
for prog in demo "torchalloc train"; do
  f="$PWD/$B/corpus/current-packed-${prog%% *}.db"
  [ -s "$f" ] || [ ! -x "build/tests/${prog%% *}" ] || {
    # shellcheck disable=SC2086 # the program, then its arguments
    build/report/gpuledger run -q --pack -o "$f" -- "$PWD"/build/tests/$prog >/dev/null 2>&1 || true
    rm -f "$f-wal" "$f-shm"
  }
done
# and bounded recordings (run --budget: step_stacks, step_windows, step_ends;
# with the program's marks inside the optimizer's steps: the writer's steps
# mapped onto the reader's)
for mode in "" optimizer; do
  f="$PWD/$B/corpus/current-budget${mode:+-$mode}.db"
  [ -s "$f" ] || [ ! -x build/tests/poolsteps ] || {
    # shellcheck disable=SC2086 # no argument, or the mode
    build/report/gpuledger run -q --budget 1M -o "$f" -- "$PWD"/build/tests/poolsteps $mode >/dev/null 2>&1 || true
    rm -f "$f-wal" "$f-shm"
  }
done
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
echo "fuzz-reader: ${secs} s over $(ls "$B/corpus" | wc -l) inputs (ASan + UBSan)"
status=0
"$B/fuzz_reader" -max_total_time="$secs" -close_fd_mask=2 -timeout=20 -rss_limit_mb=3072 \
  -artifact_prefix="$B/" -print_final_stats=1 "$B/corpus" >"$B/fuzz.log" 2>&1 || status=$?
if [ "$status" = 0 ]; then
  grep -E '^(#[0-9]+[[:space:]]+DONE|stat::(number_of_executed_units|new_units_added|peak_rss))' "$B/fuzz.log"
  echo "fuzz-reader: no finding"
else
  # the sanitizer's report, and where the input was kept
  sed -n '/ERROR: \|runtime error\|==ERROR\|SUMMARY\|deadly signal\|Test unit written/p' "$B/fuzz.log" | head -20
  grep -A25 -m1 -E 'runtime error|ERROR: (Address|Leak)Sanitizer' "$B/fuzz.log" | grep -E '^ +#[0-9]+ ' | head -12
  echo "fuzz-reader: FINDING (exit $status); whole log in $B/fuzz.log"
fi
exit "$status"
