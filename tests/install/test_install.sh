#!/usr/bin/env bash
# test_install.sh MESON BUILD_ROOT SOURCE_ROOT PREFIX BINDIR LIBDIR INCLUDEDIR MANDIR DATADIR PYDIR CUDA_INC
# — `meson install --destdir` into a scratch directory, then use only what
# was installed: every file in its place; the installed gpuledger finds
# the installed library by itself (no GPULEDGER_LIB) and profiles the demo
# (against the fake CUDA of the build tree); --version names the schema and
# the CUDA headers; `man -l` renders the page, which holds every verb's
# --help text and every variable of the README's table; the bash
# completion completes verbs, options and option words.
set -euo pipefail
MESON=$1 BUILD=$2 SRC=$3 PREFIX=$4 BINDIR=$5 LIBDIR=$6 INCDIR=$7 MANDIR=$8 DATADIR=$9 PYDIR=${10} CUDA_INC=${11}
under() { case $1 in /*) echo "$D$1" ;; *) echo "$D$PREFIX/$1" ;; esac; }
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gl-install-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
D=$tmp/dest
"$MESON" install -C "$BUILD" --no-rebuild --destdir "$D" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "meson install --destdir failed"; }
G=$(under "$BINDIR")/gpuledger
LIB=$(under "$LIBDIR")/libgpuledger.so
PAGE=$(under "$MANDIR")/man1/gpuledger.1
COMP=$(under "$DATADIR")/bash-completion/completions/gpuledger
PY=$(under "$PYDIR")
for f in "$G" "$LIB" "$(under "$INCDIR")/gpuledger.h" "$PAGE" "$COMP" "$PY/gpuledger/__init__.py" \
  "$PY/gpuledger/_boot/sitecustomize.py" "$PY/gpuledger/torch_shim.cpp"; do
  [ -f "$f" ] || fail "not installed: ${f#"$D"}"
done
echo "ok: installed files in place"

# the installed launcher preloads the installed library, found by itself
unset GPULEDGER_LIB
got=$("$G" run -q -- sh -c 'printf %s "$LD_PRELOAD"')
[ "${got%%:*}" = "$(realpath "$LIB")" ] || fail "gpuledger run preloads '$got', not the installed $LIB"
echo "ok: the installed gpuledger preloads the installed library"

# ... and puts the installed package's sitecustomize (and nothing else: $PY
# is a whole site-packages) on the job's PYTHONPATH, which loads the package
got=$(env -u PYTHONPATH "$G" run -q -- sh -c 'printf %s "$PYTHONPATH"')
[ "$got" = "$(realpath "$PY")/gpuledger/_boot" ] ||
  fail "gpuledger run sets PYTHONPATH='$got', not the installed package's _boot in $PY"
got=$(cd / && env -u PYTHONPATH "$G" run -q -- python3 -c 'import gpuledger; print(gpuledger.__file__)')
[ "$got" = "$(realpath "$PY")/gpuledger/__init__.py" ] || fail "import gpuledger under gpuledger run: $got"
got=$(cd / && PYTHONPATH=$PY python3 -c 'import gpuledger; print(gpuledger.__file__, gpuledger.recording())')
[ "$got" = "$PY/gpuledger/__init__.py False" ] || fail "import gpuledger from the install: $got"
# its metadata: the program's version, and pytest's entry point to the plugin
version=$("$G" --version | sed -n 's/^gpuledger //p;q')
got=$(cd / && PYTHONPATH=$PY python3 -c 'import gpuledger, importlib.metadata as m
d = m.distribution("gpuledger")
print(d.version, gpuledger.__version__, [e.value for e in d.entry_points if e.group == "pytest11"])')
[ "$got" = "$version $version ['gpuledger.pytest_plugin']" ] ||
  fail "the installed package's version and entry point: $got (gpuledger --version: $version)"
echo "ok: the installed Python package: on the job's PYTHONPATH, importable"

# the demo, recorded and reported by the installed binary and library
cd "$tmp"
GPULEDGER_CUPTI_LIB="$BUILD/tests/fakecupti/libcupti.so.13" "$G" run -o demo.db -- "$BUILD/tests/demo" \
  >demo.out 2>demo.err || fail "the demo failed: $(cat demo.err)"
grep -q "^gpuledger: $tmp/demo.db: 33 events, peak 82.00 MiB on device 0, 2 allocations (2.00 MiB) never freed" \
  demo.err || fail "unexpected summary: $(cat demo.err)"
"$G" leaks demo.db >leaks.txt
grep -q "^2.00 MiB never freed in 1 leak chain" leaks.txt && grep -q " scratch_workspace$" leaks.txt ||
  fail "leaks of the demo: $(cat leaks.txt)"
echo "ok: the demo through the installed binary and library"

# --version: the schema version and the CUDA/CUPTI headers
schema=$(sed -n 's/^#define GL_SCHEMA_VERSION \([0-9]*\).*/\1/p' "$SRC/store/schema.h")
cuda=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$CUDA_INC/cuda.h")
"$G" --version >version.txt
[ "$(sed -n 2p version.txt)" = "database schema version $schema (reads versions 1 to $schema)" ] ||
  fail "--version line 2: $(sed -n 2p version.txt)"
sed -n 3p version.txt | grep -q "^built against CUDA $((cuda / 1000)).$((cuda % 1000 / 10)) (CUDA_VERSION $cuda), " ||
  fail "--version line 3: $(sed -n 3p version.txt)"
if [ -f "$CUDA_INC/cupti_version.h" ]; then
  cupti=$(sed -n 's/^#define CUPTI_API_VERSION \([0-9]*\).*/\1/p' "$CUDA_INC/cupti_version.h")
  sed -n 3p version.txt | grep -q "CUPTI API version $cupti$" || fail "--version line 3: $(sed -n 3p version.txt)"
fi
echo "ok: --version: $(sed -n 3p version.txt)"

# the man page renders, and holds every verb's --help and every variable
MANWIDTH=200 man -l "$PAGE" >page.txt 2>page.err || fail "man -l failed: $(cat page.err)"
[ -s page.err ] && fail "man -l warned: $(cat page.err)"
strip() { sed 's/^ *//; s/ *$//' | grep -v '^$' || true; }
strip <page.txt >page.lines
verbs=$("$G" --help | sed -n '/^commands:/,/^$/p' | sed -n 's/^  \([a-z]\+\) .*/\1/p')
[ "$(echo "$verbs" | wc -l)" -ge 8 ] || fail "gpuledger --help lists only: $verbs"
for v in $verbs; do
  "$G" "$v" --help | strip >help.lines
  python3 - page.lines help.lines "$v" <<'EOF' || exit 1
import sys
page = open(sys.argv[1]).read().splitlines()
want = open(sys.argv[2]).read().splitlines()
if not any(page[i:i + len(want)] == want for i in range(len(page))):
    sys.exit("FAIL: the man page does not hold `gpuledger %s --help` as the program prints it" % sys.argv[3])
EOF
done
vars=$(sed -n 's/^| `\(GPULEDGER_[A-Z_]*\)` |.*/\1/p' "$SRC/README.md")
[ "$(echo "$vars" | wc -l)" -ge 16 ] || fail "README.md's variable table: $vars"
for v in $vars; do
  grep -qx "$v" page.lines || fail "the man page has no entry for $v (README.md has)"
done
echo "ok: man -l renders the page: $(echo "$verbs" | wc -l) verbs as --help prints them," \
  "$(echo "$vars" | wc -l) variables"

# bash completion
complete_line() { # words... : what completing the last word offers
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gpuledger; echo "${COMPREPLY[*]}"' \
    _ "$COMP" "$@"
}
expect() { local want=$1; shift; local got; got=$(complete_line "$@"); [ "$got" = "$want" ] ||
  fail "completing '$*': '$got', expected '$want'"; }
expect "report" gpuledger rep
expect "text json html" gpuledger report --format ''
expect "--steps --steps=" gpuledger leaks --ste
expect "folded perfetto memory_viz speedscope csv sqlite" gpuledger export --format ''
expect "-o" gpuledger export -o
expect "demo.db" gpuledger report demo
expect "--depth" gpuledger run --dep
expect "demo.err" gpuledger run -o x.db -q sh demo.e
expect "-h --help -V --version" gpuledger -
echo "ok: bash completion"
