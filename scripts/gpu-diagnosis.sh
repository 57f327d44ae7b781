#!/usr/bin/env bash
# gpu-diagnosis.sh — on the device machine (H200): does `gpuledger report`
# open with the right diagnosis? Three jobs, each under `gpuledger run`, then
# `gpuledger report` (text and JSON) and `summary` on its database:
#   (a) scripts/gpu/diag_lora_grow.py: a peft LoRA fine-tune (small Llama from
#       a config, gradient checkpointing) that keeps every step's out.logits
#       in a global list and dies of OOM within ~20 steps (memory fraction);
#       the first finding must be the OOM, name the growth (+N/step), the
#       OOM's step (= the steps the job printed done) and the user's line
#       (diag_lora_grow.py:NN) and what keeps it alive (the retention
#       finder's path through `global logits_kept`), its verdict growth;
#   (b) scripts/gpu/torch_ledger.py frag-oom: verdict fragmentation;
#   (c) scripts/gpu/torch_ledger.py demand-oom: verdict demand;
#   each: exactly one out-of-memory failure in `summary`.
# Prepare here with scripts/device-prep.sh, then through the device tool:
#   carry: ["build-device", ".device-deps"]
#   command: bash scripts/gpu-diagnosis.sh
# Writes $OUT/diagnosis.txt (this log) and each job's report/JSON/stdout;
# well under 4 minutes (the shim's first build included).
set -u
export NAME=diagnosis
# shellcheck source=scripts/gpu/preamble.sh
. "$(dirname "$0")/gpu/preamble.sh"
T0=$EPOCHREALTIME
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"

job() { # LABEL ARGS...: run under gpuledger, keep its outputs
  local label=$1; shift
  local t=$EPOCHREALTIME
  (cd "$W" && "$GL" run -q -o "$W/$label.db" -- "$PY" "$@") > "$OUT/$label.stdout" 2> "$OUT/$label.stderr"
  echo "== $label: exit $? in $(secs "$t") s"
  "$GL" report "$W/$label.db" > "$OUT/$label.report.txt" 2>&1
  "$GL" report --format json "$W/$label.db" > "$OUT/$label.report.json" 2>&1
  "$GL" summary "$W/$label.db" > "$OUT/$label.summary.txt" 2>&1
  "$GL" leaks --steps "$W/$label.db" > "$OUT/$label.leaks.txt" 2>&1
  sed -n '1,/^process /p' "$OUT/$label.report.txt" | cut -c1-400
}
first() { sed -n 's/^  1\. //p' "$OUT/$1.report.txt" | head -1; }
verdict() { # the first finding's verdict, from the JSON
  "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1]))["processes"][0]["diagnosis"]; print(d[0].get("verdict") if d else "none")' \
    "$OUT/$1.report.json" 2>/dev/null
}
# shellcheck disable=SC2053 # $2 is a glob on purpose
matches() { if [[ $1 == $2 ]]; then echo 1; else echo 0; fi; } # TEXT GLOB
one_failure() { grep -q ', 1 out-of-memory failure$' "$OUT/$1.summary.txt" && echo 1 || echo 0; }

job lora-grow "$S/diag_lora_grow.py" --allowed-mib "${ALLOWED_MIB:-3072}"
done_steps=$(grep -c '^step .* done$' "$OUT/lora-grow.stdout")
line=$(grep -n 'GROWTH' "$S/diag_lora_grow.py" | cut -d: -f1)
f=$(first lora-grow)
result "lora: the job died of OOM" "$(matches "$(cat "$OUT/lora-grow.stderr")" "*OutOfMemoryError*")" \
  "after $done_steps steps; $(grep -m1 'OutOfMemoryError' "$OUT/lora-grow.stderr" | cut -c1-160)"
result "lora: first finding is the OOM in step $done_steps" \
  "$(matches "$f" "Out of memory in step $done_steps:*")" "$(echo "$f" | cut -c1-60)"
result "lora: it names the growth" "$(matches "$f" "*live tensors grow +* per step since step *")" \
  "$(echo "$f" | grep -o 'grow +[^,]*' )"
result "lora: it names the user's line" "$(matches "$f" "*diag_lora_grow.py:*")" \
  "$(echo "$f" | grep -o '[A-Za-z_.<>]* ([^)]*diag_lora_grow.py:[0-9]*)' | head -2 | tr '\n' ' ') (the append is line $line)"
result "lora: it says what keeps it alive" "$(matches "$f" "*Kept alive by: diag_lora_grow.py: global logits_kept (list, * items) *")" \
  "$(echo "$f" | grep -o 'Kept alive by: .*' | cut -c1-160)"
v=$(verdict lora-grow); result "lora: verdict growth" "$(matches "$v" growth)" "$v"
result "lora: one OOM, one failure" "$(one_failure lora-grow)" "$(cut -c1-200 "$OUT/lora-grow.summary.txt")"

job frag-oom "$S/torch_ledger.py" frag-oom --json "$W/frag.json"
f=$(first frag-oom); v=$(verdict frag-oom)
result "frag: first finding is the OOM" "$(matches "$f" "Out of memory *")" "$(echo "$f" | cut -c1-200)"
result "frag: verdict fragmentation" "$(matches "$v" fragmentation)" "$v"
result "frag: one OOM, one failure" "$(one_failure frag-oom)" "$(cut -c1-200 "$OUT/frag-oom.summary.txt")"

job demand-oom "$S/torch_ledger.py" demand-oom --json "$W/demand.json"
f=$(first demand-oom); v=$(verdict demand-oom)
result "demand: first finding is the OOM" "$(matches "$f" "Out of memory *")" "$(echo "$f" | cut -c1-200)"
result "demand: verdict demand" "$(matches "$v" demand)" "$v"
result "demand: one OOM, one failure" "$(one_failure demand-oom)" "$(cut -c1-200 "$OUT/demand-oom.summary.txt")"

echo "== $pass PASS, $fail FAIL in $(secs "$T0") s"
rm -rf "$W"
[ "$fail" = 0 ]
