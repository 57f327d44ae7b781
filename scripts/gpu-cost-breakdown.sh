#!/usr/bin/env bash
# gpu-cost-breakdown.sh — on the device machine: where the tensor ledger's
# cost per tensor goes, to decide what to make cheaper. Prints to
# $OUT/breakdown.txt:
#  1. the in-process A/B of scripts/gpu/torch_alloc_ab.py both (gpuledger vs
#     _record_memory_history(stacks="python"), the same loop and process) for
#     stack variants: Python frames alone, the default (Python and native),
#     native frames capped (GPULEDGER_STACK_DEPTH); with each run's unwinder
#     memo hits and the most frequent block stack, frame by frame;
#  2. NVML's per-process and device-memory queries, timed (what a mark's
#     usage sample costs the thread that marks);
#  3. the GPT step A/B (torch_train.py --ab) with marks sampling usage at
#     each optimizer step (default) and almost never (MARK_SAMPLE_MS=60000).
# Prepare with scripts/device-prep.sh; carry ["build-device", ".device-deps"].
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${GL_BUILD:-$ROOT/build-device}
OUT=${OUT:-/tmp/gl-breakdown}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$ROOT/.device-deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
GL="$B/report/gpuledger"
PY=python3
[ -x /opt/torch/.venv/bin/python ] && PY=/opt/torch/.venv/bin/python
W=$(mktemp -d)
export GPULEDGER_CACHE_DIR="$W/cache"
S="$ROOT/scripts/gpu"
exec > >(tee -a "$OUT/breakdown.txt") 2>&1
echo "== $(date -u +%FT%TZ) $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) $(nproc) CPUs"
PIN="taskset -c ${CPUS:-2,3}"
variants=${VARIANTS:-"only default depth12 depth6"}
for rep in ${REPS:-1 2}; do
  for v in $variants; do
    case $v in
      only) envs="GPULEDGER_PYTHON=only" ;;
      default) envs="GPULEDGER_PYTHON=1" ;;
      depth*) envs="GPULEDGER_PYTHON=1 GPULEDGER_STACK_DEPTH=${v#depth}" ;;
      *) envs="$v" ;;
    esac
    r=$(env $envs "$GL" run -q --torch blocks -o "$W/ab.db" -- $PIN "$PY" "$S/torch_alloc_ab.py" both --rounds 11 \
        2>"$W/ab.err" | tail -1)
    echo "alloc-ab $v $rep $r" | cut -c1-420
    [ -s "$W/ab.err" ] && tail -3 "$W/ab.err"
    if [ "$rep" = 1 ]; then
      "$PY" - "$W/ab.db" <<'PYEOF'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
print("meta", " ".join("%s=%s" % r for r in db.execute("SELECT key, value FROM meta WHERE key LIKE 'unwind%'")))
top = db.execute("""SELECT e.stack_id, count(*) n FROM event_log e JOIN kind_names k ON k.id = e.kind
    WHERE k.name = 'block' AND e.op = 1 GROUP BY e.stack_id ORDER BY n DESC LIMIT 1""").fetchone()
if top:
    print("top block stack: %d allocations" % top[1])
    for r in db.execute("SELECT depth, python, symbol, coalesce(module, file, '') FROM stack_frames WHERE stack_id = ? "
                        "ORDER BY depth", (top[0],)):
        print("  %2d %s %s  %s" % (r[0], "py" if r[1] else "  ", (r[2] or "?")[:90], r[3][-40:]))
PYEOF
    fi
    rm -f "$W/ab.db"
  done
done
echo "== NVML queries (us per call, median of 200)"
"$PY" - <<'PYEOF'
import ctypes, statistics, time, torch
torch.zeros(1, device="cuda")
nv = ctypes.CDLL("libnvidia-ml.so.1")
assert nv.nvmlInit_v2() == 0
h = ctypes.c_void_p()
assert nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)) == 0
class Proc(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("used", ctypes.c_ulonglong), ("gi", ctypes.c_uint), ("ci", ctypes.c_uint)]
class Mem(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]
procs = (Proc * 64)()
mem = Mem()
def t(f):
    xs = []
    for _ in range(200):
        t0 = time.perf_counter_ns(); f(); xs.append(time.perf_counter_ns() - t0)
    return statistics.median(xs) / 1000, max(xs) / 1000
def p():
    n = ctypes.c_uint(64); nv.nvmlDeviceGetComputeRunningProcesses_v3(h, ctypes.byref(n), procs)
print("nvmlDeviceGetComputeRunningProcesses_v3: median %.1f us, max %.1f" % t(p))
print("nvmlDeviceGetMemoryInfo: median %.1f us, max %.1f" % t(lambda: nv.nvmlDeviceGetMemoryInfo(h, ctypes.byref(mem))))
free, total = ctypes.c_size_t(), ctypes.c_size_t()
print("torch.cuda.mem_get_info: median %.1f us, max %.1f" % t(lambda: torch.cuda.mem_get_info()))
PYEOF
echo "== GPT step A/B, recording on/off at alternate steps"
for rep in 1 2 3; do
  for ms in 10 60000; do
    r=$(GPULEDGER_MARK_SAMPLE_MS=$ms "$GL" run -q --torch blocks -o "$W/s.db" -- "$PY" "$S/torch_train.py" --steps 300 --ab \
        2>/dev/null | tail -1)
    echo "step mark_sample_ms=$ms $rep $(echo "$r" | cut -c1-160)"
    rm -f "$W/s.db"
  done
done
echo "== done $(date -u +%FT%TZ)"
sleep 1
