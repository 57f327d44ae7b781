#!/usr/bin/env bash
# gpu-pack.sh — on the device machine: a packed recording (`gpuledger run
# --pack`, schema 6) against a row-per-event one, on real PyTorch work.
#  1. Each workload (scripts/gpu/torch_ledger.py gpt, llama with LoRA and
#     checkpointing, HF generate(); scripts/gpu/torch_train.py --leak) is
#     recorded as rows and, in a second process, packed: the bytes per event
#     of each file. The rows' file is then copied packed and back
#     (`export --format sqlite [--pack]`), and the outputs of report, report
#     --format json, leaks --steps, holes, summary and gate compared byte for
#     byte across the three files of one recording (each as run.db in a
#     folder of its own: PASS/FAIL each); the rows' files go to $OUT/dbs.
#  2. Whether this machine's Pythons load libgpuledger_sql into sqlite3
#     (enable_load_extension) and read a packed file's events through it.
#  3. The writer's cost with both threads counted (scripts/gpu-writer-cost.sh
#     with its variants default and packed).
# Prepare here with scripts/device-prep.sh; carry build-device, .device-deps.
# Output: $OUT/pack.txt and $OUT/writer-cost.txt. SKIP_COST=1: only 1 and 2.
set -u
NAME=pack
. "$(dirname "$0")/gpu/preamble.sh"
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $(nproc) CPUs"
$PY -c 'import torch, sys; print("torch", torch.__version__, "python", sys.version.split()[0])'
events_of() { "$PY" -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT event_count FROM run').fetchone()[0])" "$1" 2>/dev/null || echo 0; }
record() { # LABEL -- COMMAND...: the command recorded as rows and packed, then the rows' file copied
  local label=$1; shift 2
  local d="$W/$label"
  mkdir -p "$d/rows" "$d/packed" "$d/exported-packed" "$d/exported-rows" "$OUT/dbs"
  for layout in rows packed; do
    local flag=""
    [ "$layout" = packed ] && flag=--pack
    t0=$EPOCHREALTIME
    (cd "$d/$layout" && timeout 300 "$GL" run -q --torch blocks $flag -o run.db -- "$@" >out.txt 2>&1)
    local rc=$? ev bytes
    ev=$(events_of "$d/$layout/run.db")
    bytes=$(stat -c %s "$d/$layout/run.db" 2>/dev/null || echo 0)
    echo "$label recorded as $layout: exit $rc, $(secs "$t0") s, $ev events, $bytes bytes, $(awk "BEGIN { if ($ev > 0) printf \"%.1f\", $bytes / $ev; else print \"-\" }") B/event"
    [ $rc = 0 ] || tail -5 "$d/$layout/out.txt"
  done
  cp "$d/rows/run.db" "$OUT/dbs/$label.db"
  "$GL" export --format sqlite --pack -o "$d/exported-packed/run.db" "$d/rows/run.db" 2>&1 | sed "s|$W/||g"
  "$GL" export --format sqlite -o "$d/exported-rows/run.db" "$d/exported-packed/run.db" 2>&1 | sed "s|$W/||g"
  local verbs=("report" "report --format json" "leaks --steps" "holes" "summary" "gate --max-leak-bytes 100G")
  for v in "${verbs[@]}"; do
    for f in rows exported-packed exported-rows; do
      # shellcheck disable=SC2086 # v is a verb and its flags
      (cd "$d/$f" && "$GL" $v run.db >"../$f.out" 2>&1; echo "exit $?" >>"../$f.out")
    done
    if cmp -s "$d/rows.out" "$d/exported-packed.out" && cmp -s "$d/rows.out" "$d/exported-rows.out"; then
      result "$label: $v" 1 "the same $(wc -c <"$d/rows.out") bytes from the rows, their packed copy and its copy as rows"
    else
      result "$label: $v" 0 "outputs differ: $(diff "$d/rows.out" "$d/exported-packed.out" | head -6 | tr '\n' ' ' | cut -c1-300)"
    fi
  done
}
echo "== 1. rows against packed"
record gpt -- "$PY" "$S/torch_ledger.py" gpt --steps 12 --json j.json
record llama-lora -- "$PY" "$S/torch_ledger.py" llama --lora --ckpt --steps 8 --json j.json
record generate -- "$PY" "$S/torch_ledger.py" generate --json j.json
record train-leak -- "$PY" "$S/torch_train.py" --steps 12 --leak
echo "-- the packed generate() file, table by table"
"$PY" "$S/dbstat.py" "$W/generate/rows/run.db" 2>&1 | cut -c1-200
"$PY" - "$W/generate/packed/run.db" <<'PYEOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
try:
    for name, size in db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 8"):
        print("   %-28s %10d bytes" % (name, size))
except sqlite3.Error as e:
    print("   (no dbstat: %s)" % e)
PYEOF
echo "== 2. the SQL module from Python"
for py in "$PY" python3; do
  "$py" - "$B/store/libgpuledger_sql" "$W/generate/packed/run.db" <<'PYEOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[2])
try:
    c.enable_load_extension(True)
    c.load_extension(sys.argv[1])
    n = c.execute("SELECT count(*) FROM events").fetchone()[0]
    print("%s (SQLite %s): loads libgpuledger_sql, %d events read" % (sys.executable, sqlite3.sqlite_version, n))
except Exception as e:
    print("%s (SQLite %s): cannot load it: %s" % (sys.executable, sqlite3.sqlite_version, e))
PYEOF
done
echo "checks: $pass passed, $fail failed"
if [ -z "${SKIP_COST:-}" ]; then
  echo "== 3. writer cost"
  VARIANTS="default=GPULEDGER_QUIET=1;packed=GPULEDGER_QUIET=1 -- --pack" OUT="$OUT" bash "$ROOT/scripts/gpu-writer-cost.sh"
fi
