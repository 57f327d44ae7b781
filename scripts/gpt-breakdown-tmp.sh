#!/usr/bin/env bash
# GPT step A/B under stack variants + one default run's unwinding facts
set -u
ROOT=$(pwd); B=$ROOT/build-device; OUT=${OUT:-/tmp/o}; mkdir -p $OUT
export LD_LIBRARY_PATH="$ROOT/.device-deps/lib"
GL=$B/report/gpuledger; PY=/opt/torch/.venv/bin/python; [ -x $PY ] || PY=python3
W=$(mktemp -d); export GPULEDGER_CACHE_DIR=$W/cache; S=$ROOT/scripts/gpu
exec > >(tee -a $OUT/gpt.txt) 2>&1
echo "== $(date -u +%FT%TZ)"
$GL run -q --torch blocks -o $W/d.db -- $PY $S/torch_train.py --steps 40 >/dev/null 2>&1
$PY - $W/d.db <<'PYEOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("meta", " ".join("%s=%s" % r for r in db.execute("SELECT key, value FROM meta WHERE key LIKE 'unwind%' OR key LIKE 'python%'")))
print("events", db.execute("SELECT count(*) FROM event_log").fetchone())
for r in db.execute("""SELECT e.tid, k.name, e.op, count(*), avg(s.depth),
        sum(EXISTS(SELECT 1 FROM stack_frames f WHERE f.stack_id = e.stack_id AND f.python))
        FROM event_log e JOIN kind_names k ON k.id = e.kind LEFT JOIN stacks s ON s.id = e.stack_id
        GROUP BY e.tid, k.name, e.op ORDER BY count(*) DESC LIMIT 12"""):
    print("tid %s kind %s op %s: %d events, avg depth %s, with python frames %s" % r)
print("distinct stacks", db.execute("SELECT count(*) FROM stacks").fetchone())
PYEOF
rm -f $W/d.db
for rep in 1 2 3; do
  for v in nd48 nd0; do
    case $v in
      nd48) e="GPULEDGER_TORCH_NATIVE_DEPTH=48";; nd0) e="GPULEDGER_TORCH_NATIVE_DEPTH=0";;
    esac
    r=$(env $e $GL run -q --torch blocks -o $W/s.db -- $PY $S/torch_train.py --steps 200 --ab 2>/dev/null | tail -1)
    echo "step $v $rep $(echo "$r" | cut -c1-120)"
    rm -f $W/s.db
  done
done
echo "== done $(date -u +%FT%TZ)"
sleep 1
