#!/usr/bin/env bash
# gpu-writer-cost.sh — on the device machine: what a PyTorch tensor
# alloc+free pair costs with gpuledger counting BOTH of its threads (the
# application thread's added time and the writer thread's CPU), beside
# what PyTorch's _record_memory_history(stacks="python") adds in the same
# process and loop (scripts/gpu/torch_alloc_ab.py both: cycles of off /
# gpuledger / off / history, 20,000 pairs a round, each process pinned to
# CPUS, default 2,3). For each variant, REPS processes (default 3); per
# process one JSON line; then per variant the medians and the ratio
# history / (application + writer) — the target is ≥ 3.
# A variant: NAME=ENV... [-- RUN-ARGS]; defaults: default (Python + 8
# native frames), only (GPULEDGER_PYTHON=only), and, where this build's
# `gpuledger run` takes --budget, budget (the default with --budget 1G);
# VARIANTS="A=ENV... [-- ARGS];B=..." gives others instead.
#   carry: ["build-device", ".device-deps"] (scripts/device-prep.sh)
#   command: bash scripts/gpu-writer-cost.sh
set -u
NAME=writer-cost
. "$(dirname "$0")/gpu/preamble.sh"
REPS=${REPS:-3}
PIN="taskset -c ${CPUS:-2,3}"
command -v taskset >/dev/null || PIN=""
variants=("default=GPULEDGER_QUIET=1" "only=GPULEDGER_PYTHON=only")
if "$GL" run --help 2>&1 | grep -q -- "--budget"; then
  variants+=("budget=GPULEDGER_QUIET=1 -- --budget 1G")
fi
if [ -n "${VARIANTS:-}" ]; then # the caller's, ';' between them
  IFS=';' read -r -a variants <<<"$VARIANTS"
fi
echo "== $(date -u +%FT%TZ), $(nproc) CPUs; $(lscpu 2>/dev/null | grep -E '^Model name' | tr -s ' ')"
echo "torch $($PY -c 'import torch; print(torch.__version__, torch.cuda.get_device_name())' 2>&1 | tail -1)"
for rep in $(seq "$REPS"); do
  for v in "${variants[@]}"; do
    vname=${v%%=*} rest=${v#*=}
    envs=${rest%% -- *} args=""
    [ "$rest" != "$envs" ] && args=${rest#* -- }
    # shellcheck disable=SC2086 # envs and args are lists
    r=$(env $envs "$GL" run -q --torch blocks $args -o "$W/ab-$vname.db" -- \
      $PIN $PY "$S/torch_alloc_ab.py" both --rounds 15 --stacks python 2>"$W/ab.err" | tail -1)
    size=$(stat -c %s "$W/ab-$vname.db" 2>/dev/null || echo 0)
    events=$(sqlite3 "$W/ab-$vname.db" "SELECT event_count FROM run" 2>/dev/null ||
      $PY -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT event_count FROM run').fetchone()[0])" "$W/ab-$vname.db" 2>/dev/null)
    rm -f "$W/ab-$vname.db"*
    echo "$r" | grep -q '^{' || { echo "ab $vname $rep FAILED: $(tail -3 "$W/ab.err")"; continue; }
    echo "$r" >>"$W/$vname.jsonl"
    echo "ab $vname $rep db_bytes=$size events=$events $(echo "$r" | cut -c1-330)"
  done
done
for v in "${variants[@]}"; do
  vname=${v%%=*}
  [ -s "$W/$vname.jsonl" ] || continue
  $PY - "$W/$vname.jsonl" "$vname" <<'PYEOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
app = statistics.median(r["gpuledger_added_ns"] for r in rows)
wr = statistics.median(r["writer_cpu_ns_per_pair"] for r in rows)
tot = statistics.median(r["gpuledger_added_ns"] + r["writer_cpu_ns_per_pair"] for r in rows)
hist = statistics.median(r["history_added_ns"] for r in rows)
print("%-8s processes %d: application +%.0f ns, writer %.0f ns CPU, together %.0f ns per pair;"
      " _record_memory_history(stacks='python') +%.0f ns; history / together = %.2f (target >= 3: %s)"
      % (sys.argv[2], len(rows), app, wr, tot, hist, hist / tot, "PASS" if hist >= 3 * tot else "FAIL"))
PYEOF
done
