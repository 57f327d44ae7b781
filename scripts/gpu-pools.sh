#!/usr/bin/env bash
# gpu-pools.sh — on the device machine: does `gpuledger report` name each
# PyTorch private pool by its id, with the pool's own bytes? Runs
# scripts/gpu/torch_pools.py (two torch.cuda.MemPool pools filled by one line,
# a CUDA graph's pool) under `gpuledger run`, then compares every pool's
# `private_pool (a, b)` category in `report --format json` (the last sample's
# ledger, at exit) with the bytes of its live blocks in PyTorch's snapshot
# (for the graph's pool, with the cuBLAS workspace made inside the capture,
# which keeps its workspace category).
# Prepare here with scripts/device-prep.sh, then through the device tool:
#   carry: ["build-device", ".device-deps"]
#   command: bash scripts/gpu-pools.sh
# Writes $OUT/pools.txt (this log), the report (text and JSON) and stdout.
set -u
export NAME=pools
# shellcheck source=scripts/gpu/preamble.sh
. "$(dirname "$0")/gpu/preamble.sh"
T0=$EPOCHREALTIME
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
(cd "$W" && "$GL" run -q -o "$W/pools.db" -- "$PY" "$S/torch_pools.py") > "$OUT/pools.stdout" 2> "$OUT/pools.stderr"
echo "== job: exit $?"
"$GL" report "$W/pools.db" > "$OUT/pools.report.txt" 2>&1
"$GL" report --format json "$W/pools.db" > "$OUT/pools.report.json" 2>&1
"$GL" leaks --format json "$W/pools.db" > "$OUT/pools.leaks.json" 2>&1
grep -n "private_pool" "$OUT/pools.report.txt" | head -20
check=$(mktemp)
cat > "$check" <<'PYEOF'
import json, sys
want = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["pools"]
leaks = json.load(open(sys.argv[2]))
got = {}
def walk(o):
    if isinstance(o, dict):
        if "pool_id" in o and "bytes" in o:
            got.setdefault(tuple(o["pool_id"]), 0)
            got[tuple(o["pool_id"])] += o["bytes"]
        for v in o.values():
            walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(leaks)
# a library's workspace keeps its category wherever it was made (cuBLAS's
# inside the capture lands in the graph's pool): the graph's pool is its
# private_pool row plus the workspace rows made on the capture's line
capture_line = [i for i, l in enumerate(open(sys.argv[3]), 1) if "the graph's pool keeps this" in l][0]
def made_in_capture(e):
    return any(f.get("file", "") and f["file"].endswith("torch_pools.py") and f.get("line") == capture_line
               for f in e.get("frames", []))
in_capture = sum(e["bytes"] for pr in leaks["processes"] for e in pr["leaks"]
                 if e.get("category") == "workspace" and made_in_capture(e))
for p in want:
    pid = tuple(p["id"])
    g = got.get(pid)
    if p.get("graph"):
        print(f"graph pool {pid}: its row + the capture's workspace = PyTorch's snapshot|{int(g is not None and g + in_capture == p['bytes'])}"
              f"|gpuledger private_pool {g} + workspace {in_capture}, PyTorch {p['bytes']}")
        continue
    kind = "graph pool" if p.get("graph") else "MemPool"
    print(f"{kind} {pid}: live at exit = PyTorch's snapshot|{int(g == p['bytes'])}|gpuledger {g}, PyTorch {p['bytes']}")
print(f"one row per pool|{int(len(got) == len(want))}|gpuledger pools {sorted(got)}, PyTorch {[tuple(p['id']) for p in want]}")
PYEOF
while IFS='|' read -r name ok detail; do result "$name" "$ok" "$detail"; done \
  < <("$PY" "$check" "$OUT/pools.stdout" "$OUT/pools.leaks.json" "$S/torch_pools.py")
rm -f "$check"
echo "== $pass PASS, $fail FAIL in $(secs "$T0") s"
rm -rf "$W"
[ "$fail" = 0 ]
