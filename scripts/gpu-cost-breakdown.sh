#!/usr/bin/env bash
# gpu-cost-breakdown.sh — on the device machine: where the tensor ledger's
# cost goes, stack setting by stack setting. Prints to $OUT/breakdown.txt:
#  1. facts of one recorded GPT run (scripts/gpu/torch_train.py, 40 steps):
#     the unwinder's walks and memo hits, and per thread and event kind the
#     events, their mean stack depth and how many have Python frames;
#  2. the GPT step A/B (torch_train.py --ab: recording on and off at
#     alternate steps, 200 steps, REPS processes per setting, the settings
#     interleaved) for each setting of STEP_VARIANTS;
#  3. the allocation loop's in-process A/B (torch_alloc_ab.py both:
#     gpuledger vs _record_memory_history(stacks="python")) for each setting
#     of LOOP_VARIANTS (none by default: gpu-tensor-ledger.sh PART=cost
#     measures the default and GPULEDGER_PYTHON=only).
# A setting: default, only (GPULEDGER_PYTHON=only), nostack
# (GPULEDGER_STACK_DEPTH=0), nativeN (GPULEDGER_TORCH_NATIVE_DEPTH=N), or
# VAR=VALUE.
#   carry: ["build-device", ".device-deps"] (scripts/device-prep.sh)
#   command: bash scripts/gpu-cost-breakdown.sh
set -u
OUT=${OUT:-/tmp/gl-breakdown}
. "$(dirname "$0")/gpu/preamble.sh"
PY=python3
[ -x /opt/torch/.venv/bin/python ] && PY=/opt/torch/.venv/bin/python
W=$(mktemp -d)
export GPULEDGER_CACHE_DIR="$W/cache"
S="$ROOT/scripts/gpu"
exec > >(tee -a "$OUT/breakdown.txt") 2>&1
echo "== $(date -u +%FT%TZ), $(nproc) CPUs"
status=0
setting() { # NAME -> the environment it stands for
  case $1 in
    default) echo "GPULEDGER_QUIET=1" ;;
    only) echo "GPULEDGER_PYTHON=only" ;;
    nostack) echo "GPULEDGER_STACK_DEPTH=0" ;;
    native*) echo "GPULEDGER_TORCH_NATIVE_DEPTH=${1#native}" ;;
    *) echo "$1" ;;
  esac
}

echo "-- one GPT run (40 steps), default settings"
"$GL" run -q --torch blocks -o "$W/d.db" -- "$PY" "$S/torch_train.py" --steps 40 >/dev/null 2>&1
"$PY" - "$W/d.db" <<'PYEOF'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
print("meta", " ".join("%s=%s" % r for r in db.execute("SELECT key, value FROM meta WHERE key LIKE 'unwind%'")))
print("events", db.execute("SELECT count(*) FROM event_log").fetchone()[0],
      "distinct stacks", db.execute("SELECT count(*) FROM stacks").fetchone()[0])
for r in db.execute("""SELECT e.tid, k.name, o.name, count(*), round(avg(s.depth), 1),
        sum(EXISTS(SELECT 1 FROM stack_frames f WHERE f.stack_id = e.stack_id AND f.python))
        FROM event_log e JOIN kind_names k ON k.id = e.kind JOIN op_names o ON o.id = e.op
        LEFT JOIN stacks s ON s.id = e.stack_id
        GROUP BY e.tid, k.name, o.name ORDER BY count(*) DESC LIMIT 8"""):
    print("  thread %s %s %s: %d events, mean depth %s, %d with Python frames" % r)
PYEOF
rm -f "$W/d.db"

echo "-- GPT step A/B (recording on/off at alternate steps; ab_added_pct per process)"
for rep in $(seq 1 "${REPS:-3}"); do
  for v in ${STEP_VARIANTS:-default native0 native48 nostack}; do
    r=$(env $(setting "$v") "$GL" run -q --torch blocks -o "$W/s.db" -- "$PY" "$S/torch_train.py" --steps 200 --ab \
        2>/dev/null | tail -1)
    echo "step $v $rep ${r:-FAILED: no result (run it by hand to see why)}" | cut -c1-160
    [ -n "$r" ] || status=1
    rm -f "$W/s.db"
  done
done

for rep in $(seq 1 "${REPS:-3}"); do
  for v in ${LOOP_VARIANTS:-}; do
    r=$(env $(setting "$v") "$GL" run -q --torch blocks -o "$W/ab.db" -- taskset -c "${CPUS:-2,3}" "$PY" \
        "$S/torch_alloc_ab.py" both --rounds 11 2>/dev/null | tail -1)
    echo "alloc-ab $v $rep ${r:-FAILED: no result (run it by hand to see why)}" | cut -c1-300
    [ -n "$r" ] || status=1
    rm -f "$W/ab.db"
  done
done
echo "== done $(date -u +%FT%TZ)"
sleep 1
exit "$status"
