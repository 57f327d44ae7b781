#!/usr/bin/env bash
# gpu-hotpath.sh — on the device machine: where a recorded event's time
# goes on a real GPU, all measured in-process (recording off/on rounds):
#   1. bench/bench_hotpath built there against the real libcudart: the
#      clock, cudaGetDevice, a bare cudaMallocAsync/cudaFreeAsync pair, and
#      ns added per event at stack depths 0/16/48 with 0/20/60 frames below
#      the loop; with the fast unwinder and TSC stamps, with clock_gettime
#      stamps (and, FULL=1, GPULEDGER_UNWIND=nomemo / libunwind);
#      and the same for an older build in $GL_OLD (if given) to compare;
#   2. the PyTorch CPU-bound allocation loop (scripts/gpu/torch_alloc_ab.py):
#      PyTorch's recorder (stacks="python" three times, "all" once) against
#      gpuledger: default and --python only three times each, then without
#      free stacks, stackless, and with clock_gettime stamps.
# Prepare here with scripts/device-prep.sh; carry build-device, .device-deps
# (and the old build). Output: $OUT/hotpath.txt. LOOP_ONLY=1: only the
# torch loop's history / default / --python only, REPS times (default 3),
# and stacks="all" once; STEP_AB=1 adds the GPT step A/B.
set -u
OUT=${OUT:-/tmp/gl-gpu-hotpath}
. "$(dirname "$0")/gpu/preamble.sh"
OLD=${GL_OLD:-}
AB="$ROOT/scripts/gpu/torch_alloc_ab.py"
W=$(mktemp -d)
CUDA=${CUDA_HOME:-/usr/local/cuda}
{
echo "== $(date -u +%FT%TZ) $(nproc) CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
grep -m1 "model name" /proc/cpuinfo
lscpu | grep -E "^(Thread|Core|Socket|NUMA node\(s\))" || true
if [ -z "${LOOP_ONLY:-}" ]; then
gcc -O2 -o "$W/bh" "$ROOT/bench/bench_hotpath.c" -I"$CUDA/include" -L"$CUDA/lib64" -Wl,-rpath,"$CUDA/lib64" -lcudart -ldl || exit 1
echo "-- bare"
"$W/bh" --rounds 5
run_bh() { # label, launcher, env..., -- depth
  local label=$1 gl=$2; shift 2
  for d in 0 16 48; do
    echo "-- $label -d $d"
    env "$@" "$gl" run -q -d "$d" -o "$W/bh.db" -- "$W/bh" --deep 0,20,60 2>&1 | grep '^| [0-9]'
    rm -f "$W/bh.db"
  done
}
run_bh "new fast" "$GL" GPULEDGER_UNWIND=fast
run_bh "new fast, clock_gettime stamps" "$GL" GPULEDGER_CLOCK=monotonic
if [ -n "${FULL:-}" ]; then
  run_bh "new nomemo" "$GL" GPULEDGER_UNWIND=nomemo
  run_bh "new libunwind" "$GL" GPULEDGER_UNWIND=libunwind
fi
[ -n "$OLD" ] && run_bh "old" "$OLD/report/gpuledger" GPULEDGER_X=1
fi
echo "== torch loop (ns per alloc+free pair, in-process A/B)"
# CPUS=2,3: every loop process on the same two CPUs (placement held equal)
PIN=${CPUS:+taskset -c $CPUS}
ab() { # label, launcher or - (PyTorch's recorder; AB_ARGS: more arguments), env...
  local label=$1 gl=$2; shift 2
  if [ "$gl" = - ]; then
    echo "$label $(env "$@" $PIN python3 "$AB" history ${AB_ARGS:-} 2>&1 | tail -1 | cut -c1-150)"
  else
    echo "$label $(env "$@" $PIN "$gl" run -q --torch tensors -o "$W/t.db" -- python3 "$AB" gpuledger 2>&1 | tail -1 | cut -c1-150)"
    [ "$label" = "gl-new-default-1" ] && cp "$W/t.db" "$W/keep.db"
    rm -f "$W/t.db"
  fi
}
for rep in $(seq 1 "${REPS:-3}"); do
  ab "history-python-$rep" - X=1
  ab "gl-new-default-$rep" "$GL" X=1
  ab "gl-new-pyonly-$rep" "$GL" GPULEDGER_PYTHON=only
done
AB_ARGS="--stacks all" ab "history-all" - X=1
[ -n "${LOOP_ONLY:-}" ] || {
ab "gl-new-nofree" "$GL" GPULEDGER_FREE_STACKS=0
ab "gl-new-d0" "$GL" GPULEDGER_STACK_DEPTH=0
ab "gl-new-default-monotonic" "$GL" GPULEDGER_CLOCK=monotonic
ab "gl-new-pyonly-monotonic" "$GL" GPULEDGER_PYTHON=only GPULEDGER_CLOCK=monotonic
}
if [ -n "${FULL:-}" ]; then
  ab "gl-new-nomemo" "$GL" GPULEDGER_UNWIND=nomemo
  ab "gl-new-libunwind" "$GL" GPULEDGER_UNWIND=libunwind
fi
[ -n "$OLD" ] && ab "gl-old-default" "$OLD/report/gpuledger" X=1
python3 - "$W/keep.db" <<'PYEOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
sid = db.execute("SELECT stack_id FROM allocations ORDER BY id DESC LIMIT 1").fetchone()[0]
rows = db.execute("SELECT depth, python, coalesce(symbol, '?'), line FROM stack_frames WHERE stack_id = ? ORDER BY depth", (sid,)).fetchall()
import re, subprocess
for k, v in db.execute("SELECT key, value FROM meta WHERE key LIKE 'unwind%' OR key IN ('clock', 'tsc_ns_per_tick')"):
    print("meta %s = %s" % (k, v))
    m = re.search(r" at (/\S+)\+0x([0-9a-f]+)", v) if k == "unwind_first_giveup" else None
    if m:  # the unwind rule where the fast walk gave up, as readelf reads it
        off = int(m.group(2), 16)
        try:  # stream readelf's output: the library may be a gigabyte
            pr = subprocess.Popen(["timeout", "90", "readelf", "--debug-dump=frames-interp", m.group(1)],
                                  stdout=subprocess.PIPE, text=True)
            show, shown = False, 0
            for line in pr.stdout:
                h = re.search(r"FDE .*pc=([0-9a-f]+)\.\.([0-9a-f]+)", line)
                if h:
                    if show:
                        break
                    show = int(h.group(1), 16) <= off < int(h.group(2), 16)
                if show and shown < 60:
                    print(line.rstrip())
                    shown += 1
            pr.kill()
            if not shown:
                print("(no FDE found for that offset)")
        except Exception as e:
            print("readelf: %s" % e)
print("stack of a loop allocation: %d frames (%d Python)" % (len(rows), sum(r[1] for r in rows)))
for d, py, sym, line in rows:
    print("   %2d %s%s" % (d, sym[:100], (":%d" % line) if py else ""))
PYEOF
} 2>&1 | tee "$OUT/hotpath.txt"
if [ -n "${STEP_AB:-}" ]; then
  echo "== GPT step, in-process A/B (steps alternate recording off/on; --torch tensors)" | tee -a "$OUT/hotpath.txt"
  for rep in 1 2 3; do
    "$GL" run -q --torch tensors -o "$W/s$rep.db" -- python3 "$ROOT/scripts/gpu/torch_train.py" --steps 200 --ab 2>/dev/null | tail -1 | tee -a "$OUT/hotpath.txt"
    rm -f "$W/s$rep.db"
  done
fi
