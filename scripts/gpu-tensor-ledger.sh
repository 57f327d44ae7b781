#!/usr/bin/env bash
# gpu-tensor-ledger.sh — on the device machine: the tensor ledger under
# PyTorch's own caching allocator, one PASS/FAIL
# line per check with its numbers, in $OUT/ledger.txt.
#
# Prepare here with scripts/device-prep.sh, then through the device tool:
#   carry: ["build-device", ".device-deps"]
#   command: bash scripts/gpu-tensor-ledger.sh            (everything, ~6 min)
#            PART=checks bash scripts/gpu-tensor-ledger.sh (the ledger checks)
#            PART=cost bash scripts/gpu-tensor-ledger.sh   (the cost A/B only)
#
# 1. builds the allocator shim with the machine's g++ against its torch
#    (python3 -m gpuledger.shim), timed;
# 2. runs scripts/gpu/torch_ledger.py under `gpuledger run --torch blocks`:
#    the small GPT and a small-LlamaConfig Llama with LoRA (peft) and
#    gradient checkpointing, each with the default allocator, with the model
#    built under `with torch.device("cuda")`, and with expandable segments;
#    HF generate(); a fragmentation OOM and a demand OOM; and
#    scripts/gpu/torch_train.py --leak with no marks (leaks --steps), and
#    plain `gpuledger run` (no --torch: blocks are the default);
#    scripts/gpu/ledger_check.py compares each database, and the report's
#    own JSON (report, report --at, leaks --steps), with PyTorch's own
#    figures (peaks, the blocks live at the end, parameters, optimizer state,
#    KV cache, the ledger at the device peak, the allocator's holes, the
#    OOM verdicts, the steps and the leaking line);
# 3. the cost, in-process: scripts/gpu/torch_alloc_ab.py both (cycles of off
#    / gpuledger / off / _record_memory_history, 15 each, the median of each
#    round minus the off rounds beside it; 3 processes each: gpuledger's
#    Python frames only vs stacks="python", its default Python and native
#    frames vs stacks="python" and vs stacks="all"),
#    and the GPT step A/B (torch_train.py --ab, 3 processes) and the identity
#    hooks' A/B (--ab-hooks, 3 processes).
set -u
OUT=${OUT:-/tmp/gl-tensor-ledger}
. "$(dirname "$0")/gpu/preamble.sh"
PART=${PART:-all}
PY=${PY:-python3}
[ -x /opt/torch/.venv/bin/python ] && [ -z "${PY_SET:-}" ] && PY=/opt/torch/.venv/bin/python
W=$(mktemp -d)
export GPULEDGER_CACHE_DIR="$W/cache"
LOG="$OUT/ledger.txt"
S="$ROOT/scripts/gpu"
exec > >(tee -a "$LOG") 2>&1
pass=0 fail=0
count() { # tally PASS/FAIL lines of a checker's output
  pass=$((pass + $(grep -c '^PASS' "$1" || true)))
  fail=$((fail + $(grep -c '^FAIL' "$1" || true)))
}
result() { # NAME OK DETAIL: one line of our own
  if [ "$2" = 1 ]; then echo "PASS  $1: $3"; pass=$((pass + 1)); else echo "FAIL  $1: $3"; fail=$((fail + 1)); fi
}
secs() { awk "BEGIN { printf \"%.2f\", $EPOCHREALTIME - $1 }"; }
run_gl() { # LABEL ENV... -- ARGS...: a workload under gpuledger, then its checks
  local label=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  echo "-- $label"
  env "${envs[@]}" timeout 300 "$GL" run --torch blocks -o "$W/$label.db" -- $PY "$S/torch_ledger.py" "$@" \
    --json "$W/$label.json" >"$W/$label.out" 2>&1
  local rc=$?
  grep -E "^gpuledger:|Error|error" "$W/$label.out" | grep -v "^gpuledger: $W" | head -5
  if [ $rc != 0 ] || [ ! -s "$W/$label.json" ]; then
    result "$label runs" 0 "exit $rc: $(tail -3 "$W/$label.out" | tr '\n' ' ' | cut -c1-300)"
    return
  fi
  $PY "$S/ledger_check.py" "$W/$label.db" "$W/$label.json" --label "$label" --report "$GL" >"$W/$label.chk" 2>&1
  cat "$W/$label.chk"
  count "$W/$label.chk"
}

echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)"
$PY -c 'import torch, sys; print("torch", torch.__version__, "cuda", torch.version.cuda, "python", sys.version.split()[0], "cxx11abi", torch._C._GLIBCXX_USE_CXX11_ABI)'
$PY -c 'import transformers, peft; print("transformers", transformers.__version__, "peft", peft.__version__)' 2>&1 | tail -1
g++ --version | head -1
echo "== the shim"
t0=$EPOCHREALTIME
if shim=$(PYTHONPATH="$ROOT/python" $PY -m gpuledger.shim --build 2>"$W/shim.err"); then
  result "shim builds against this torch" 1 "$(secs "$t0") s, $(du -h "$shim" | cut -f1) $shim"
  t0=$EPOCHREALTIME
  PYTHONPATH="$ROOT/python" $PY -m gpuledger.shim --build >/dev/null 2>&1
  result "shim comes from the cache the second time" 1 "$(secs "$t0") s (the interpreter and torch's import included)"
else
  result "shim builds against this torch" 0 "$(tail -3 "$W/shim.err")"
fi

if [ "$PART" = all ] || [ "$PART" = checks ]; then
echo "== the ledger checks"
EXP=PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
run_gl gpt X=1 -- gpt --steps 12
run_gl gpt-on-device X=1 -- gpt --steps 12 --on-device
run_gl gpt-expandable "$EXP" -- gpt --steps 12
run_gl llama-lora X=1 -- llama --lora --ckpt --steps 8
run_gl llama-lora-on-device X=1 -- llama --lora --ckpt --steps 8 --on-device
run_gl llama-lora-expandable "$EXP" -- llama --lora --ckpt --steps 8
run_gl llama-full X=1 -- llama --steps 6
run_gl generate X=1 -- generate
run_gl frag-oom X=1 -- frag-oom
run_gl demand-oom X=1 -- demand-oom
echo "-- leak (torch_train.py --leak, no marks)"
"$GL" run -q --torch blocks -o "$W/leak.db" -- $PY "$S/torch_train.py" --steps 12 --leak >"$W/leak.out" 2>&1
line=$(grep -n "LEAKED.append" "$S/torch_train.py" | head -1 | cut -d: -f1)
"$GL" leaks --steps "$W/leak.db" >"$W/leak.txt" 2>&1
grep -A12 "^growing step after step" "$W/leak.txt" | cut -c1-160
$PY "$S/ledger_check.py" "$W/leak.db" --report "$GL" --leak-line "$line" --steps 12 --label leak >"$W/leak.chk" 2>&1
cat "$W/leak.chk"
count "$W/leak.chk"
echo "-- the default mode (gpuledger run without --torch): blocks"
"$GL" run -q -o "$W/default.db" -- $PY "$S/torch_train.py" --steps 3 >"$W/default.out" 2>&1
n=$($PY -c 'import sqlite3, sys
print(sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True).execute(
    "SELECT count(*) FROM event_log WHERE kind = 11").fetchone()[0])' "$W/default.db" 2>&1 | tail -1)
ok=0; [ "$n" -gt 0 ] 2>/dev/null && ok=1
result "gpuledger run without --torch records the tensor blocks" $ok "$n block events ($(grep -m1 "^gpuledger:" "$W/default.out" | cut -c1-120))"
echo "-- report of the Llama run (text, first lines)"
"$GL" report "$W/llama-lora.db" 2>&1 | head -60 | cut -c1-200
"$GL" report "$W/frag-oom.db" 2>&1 | grep -i -A8 "out of memory" | head -20 | cut -c1-200
echo "-- the caching allocator's holes (gpuledger holes)"
for db in llama-lora llama-lora-expandable frag-oom; do
  "$GL" holes "$W/$db.db" 2>&1 | grep -A2 "caching allocator" | cut -c1-220
done
fi

if [ "$PART" = all ] || [ "$PART" = cost ]; then
echo "== cost, in-process (ns per alloc+free pair; off = tracker attached, recording paused)"
# Each process pinned to two CPUs (CPUS=a,b, default 2,3: the loop and
# gpuledger's writer): unpinned, the rounds of one process swung between
# 2.1 and 4.1 us as it moved (H200, 2026-12-03); the loop's thread pinned
# to one of the two (--pin-main) made gpuledger's rounds cost twice as much.
# Like for like (PASS/FAIL): gpuledger's Python frames only
# (GPULEDGER_PYTHON=only) vs PyTorch's recorder with Python frames
# (stacks="python"), and gpuledger's default (Python frames and the 8
# innermost native ones) vs stacks="all" (Python and C++ frames); the
# default vs stacks="python" is an INFO line.
echo "CPUs: $(nproc); $(lscpu 2>/dev/null | grep -E '^(Model name|Thread\(s\) per core|Core\(s\) per socket)' | tr -s ' ' | tr '\n' ';')"
PIN="taskset -c ${CPUS:-2,3}"
command -v taskset >/dev/null || PIN=""
for rep in 1 2 3; do
  for cfg in only:python default:python default:all; do
    mode=${cfg%%:*} hs=${cfg##*:}
    r=$(env GPULEDGER_PYTHON=$([ $mode = only ] && echo only || echo 1) "$GL" run -q --torch blocks -o "$W/ab.db" -- \
      $PIN $PY "$S/torch_alloc_ab.py" both --rounds 15 --stacks "$hs" 2>"$W/ab.err" | tail -1)
    rm -f "$W/ab.db"
    echo "alloc-ab $mode/$hs $rep $r" | cut -c1-400
    echo "$r" >>"$W/ab-$mode-$hs.jsonl"
  done
done
for cfg in only:python default:python default:all; do
  mode=${cfg%%:*} hs=${cfg##*:}
  $PY - "$W/ab-$mode-$hs.jsonl" "$mode" "$hs" >"$W/cost-$mode-$hs.chk" <<'PYEOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
if not rows:
    print("FAIL  cost (%s): no result" % sys.argv[2]); sys.exit()
gl = statistics.median(r["gpuledger_added_ns"] for r in rows)
hi = statistics.median(r["history_added_ns"] for r in rows)
ok = gl * 3 <= hi
# like for like (the same frames on both sides) is the check; the default
# (Python frames and 8 native ones) against stacks="python" is shown too
same = (sys.argv[2], sys.argv[3]) in (("only", "python"), ("default", "all"))
print("%s  cost GPULEDGER_PYTHON=%s: gpuledger +%.0f ns per pair vs _record_memory_history(stacks=%s) +%.0f ns "
      "(%.1fx less; median of %d processes, each the median of its paired rounds: %s / %s)"
      % (("PASS" if ok else "FAIL") if same else "INFO", sys.argv[2], gl, sys.argv[3], hi, hi / gl if gl > 0 else 0,
         len(rows),
         [round(r["gpuledger_added_ns"]) for r in rows], [round(r["history_added_ns"]) for r in rows]))
PYEOF
  cat "$W/cost-$mode-$hs.chk"
  count "$W/cost-$mode-$hs.chk"
done
echo "-- GPT step A/B (recording on/off at alternate steps)"
for rep in 1 2 3; do
  "$GL" run -q --torch blocks -o "$W/s$rep.db" -- $PY "$S/torch_train.py" --steps 200 --ab 2>/dev/null | tail -1 | tee -a "$W/step.jsonl"
  rm -f "$W/s$rep.db"
done
echo "-- GPT step A/B (identity hooks working / idle at alternate steps)"
for rep in 1 2 3; do
  "$GL" run -q --torch blocks -o "$W/h$rep.db" -- $PY "$S/torch_train.py" --steps 200 --ab-hooks 2>/dev/null | tail -1 | tee -a "$W/hooks.jsonl"
  rm -f "$W/h$rep.db"
done
$PY - "$W/step.jsonl" "$W/hooks.jsonl" >"$W/step.chk" <<'PYEOF'
import json, statistics, sys
for path, what in ((sys.argv[1], "GPT step, recording"), (sys.argv[2], "GPT step, identity hooks")):
    rows = [json.loads(l) for l in open(path) if l.startswith("{")]
    if not rows:
        print("FAIL  %s: no result" % what); continue
    med = statistics.median(r["ab_added_pct"] for r in rows)
    print("%s  %s: median +%.2f %% (<= 1 %%) per process %s, step %.2f ms" % (
        "PASS" if med <= 1.0 else "FAIL", what, med, [round(r["ab_added_pct"], 2) for r in rows],
        statistics.median(r["ab_off_ms"] for r in rows)))
PYEOF
cat "$W/step.chk"
count "$W/step.chk"
fi

echo "== $pass PASS, $fail FAIL"
# a few databases to study here (each under 16 MiB)
for db in llama-lora frag-oom generate; do
  [ -f "$W/$db.db" ] && [ "$(stat -c %s "$W/$db.db")" -lt 16000000 ] && cp "$W/$db.db" "$OUT/"
done
sleep 1  # let tee write the last lines
