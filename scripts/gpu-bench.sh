#!/usr/bin/env bash
# gpu-bench.sh — overhead of gpuledger on a real GPU (run ON the device
# machine, prepared as for gpu-check.sh). Interleaves bare and profiled
# runs so that drift on the shared machine hits both alike, and prints a
# Markdown table to $OUT/bench.md:
#   * the small GPT training step (--torch tensors: every tensor an event),
#     at stack depths 48 (default), 16 and 0, and with CUPTI callbacks forced on;
#   * a CPU-bound tensor allocation loop: PyTorch's own recorder
#     (_record_memory_history(stacks="python"), native allocator) against
#     gpuledger (cudaMallocAsync backend), ns added per alloc+free pair.
set -u
OUT=${OUT:-/tmp/gl-gpu-bench}
. "$(dirname "$0")/gpu/preamble.sh"
TT="$ROOT/scripts/gpu/torch_train.py"
TL="$ROOT/scripts/gpu/torch_alloc_loop.py"
W=$(mktemp -d)
RAW="$OUT/bench-raw.txt"
: > "$RAW"
step_ms() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])["median_step_ms"])'; }
pair_ns() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])["ns_per_pair"])'; }

declare -A VARIANTS=(
  [bare]=""
  [d48]="-d 48"
  [d16]="-d 16"
  [d0]="-d 0"
  [d48cupti]="-d 48"
)
ROUNDS=${ROUNDS:-3}
ORDER="bare d48 d16 d0 d48cupti"
cupti_env() { [ "$1" = d48cupti ] && echo GPULEDGER_CUPTI=1 || echo GPULEDGER_CUPTI=auto; }
for round in $(seq "$ROUNDS"); do
  for v in $ORDER; do
    if [ "$v" = bare ]; then
      ms=$(PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync python3 "$TT" --steps 60 2>/dev/null | step_ms)
    else
      ms=$(env $(cupti_env $v) "$GL" run -q --torch tensors ${VARIANTS[$v]} -o "$W/$v-$round.db" -- python3 "$TT" --steps 60 2>/dev/null | step_ms)
    fi
    echo "step $v $round $ms" >> "$RAW"
  done
done
for round in $(seq "$ROUNDS"); do
  echo "loop native-bare $round $(python3 "$TL" 2>/dev/null | pair_ns)" >> "$RAW"
  echo "loop native-history $round $(python3 "$TL" --history 2>/dev/null | tail -1)" >> "$RAW"
  echo "loop async-bare $round $(PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync python3 "$TL" 2>/dev/null | pair_ns)" >> "$RAW"
  for v in d48 d16 d0 d48cupti; do
    echo "loop async-$v $round $(env $(cupti_env $v) "$GL" run -q --torch tensors ${VARIANTS[$v]} -o "$W/loop-$v-$round.db" -- python3 "$TL" 2>/dev/null | pair_ns)" >> "$RAW"
  done
done
python3 - "$RAW" > "$OUT/bench.md" <<'PYEOF'
import json, statistics, sys
steps, loops = {}, {}
for line in open(sys.argv[1]):
    parts = line.split(None, 3)
    if len(parts) < 4:
        continue
    kind, name, _, val = parts
    val = val.strip()
    try:
        v = json.loads(val)["ns_per_pair"] if val.startswith("{") else float(val)
    except Exception:
        continue
    (steps if kind == "step" else loops).setdefault(name, []).append(v)
med = lambda xs: statistics.median(xs)
print("| GPT step, --torch tensors | median step ms (3 runs x 60 steps) | vs bare |\n|---|---|---|")
b = med(steps.get("bare", [float("nan")]))
for k in ["bare", "d48", "d16", "d0", "d48cupti"]:
    if k in steps:
        print(f"| {k} | {med(steps[k]):.2f} | {100*(med(steps[k])/b-1):+.1f}% |")
print()
print("| allocation loop (torch.empty(1024) + del) | median ns per pair | added ns per pair |\n|---|---|---|")
nb, ab = med(loops.get("native-bare", [0])), med(loops.get("async-bare", [0]))
for k, base in [("native-bare", nb), ("native-history", nb), ("async-bare", ab), ("async-d48", ab), ("async-d16", ab),
                ("async-d0", ab), ("async-d48cupti", ab)]:
    if k in loops:
        print(f"| {k} | {med(loops[k]):.0f} | {med(loops[k]) - base:+.0f} |")
PYEOF
cat "$OUT/bench.md"
grep history "$RAW" | head -3
