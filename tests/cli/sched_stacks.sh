#!/bin/sh
# sched_stacks.sh ETLKIT SAMPLES - stacks on the scheduler's rows (issue 23) on `synth --stacks` traces
# (64- and 32-bit, plain, cached and both forms, full CSwitch, both, and compact batches alone):
# switches' New Thread Stack and Readying Thread Stack equal the truth's walks (sched_stacks_check.py);
# waits --by stack and --by readying-stack total the waits' own totals, tree and no-stack line
# included; a wait chain's hops carry the truth's stacks; the export's slice stack ids name the truth's
# frames in the stack table; a compact-only trace says its rows have no New Thread Stack; and a trace
# without those walks (synth without --stacks, the real samples) prints no stack column.
set -u
etlkit=$1; samples=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
expect() { # expect NAME COMMAND...
  name=$1; shift
  if "$@"; then passes=$((passes+1)); else echo "FAIL: $name" >&2; fails=$((fails+1)); fi
}
command -v python3 >/dev/null 2>&1 || { echo "sched_stacks.sh: skipped: no python3 to read the JSON"; exit 77; }
check="$here/sched_stacks_check.py"

for flavour in "64 both full" "32 cached both" "64 plain both" "32 both compact" "64 cached full"; do
  set -- $flavour
  n="s$1-$2-$3"; t="$tmp/$n"
  "$etlkit" synth --quiet --stacks --pointer-size "$1" --stack-form "$2" --cswitch "$3" --churn 60 --duration 0.4 \
    --seed 7 -o "$t.etl" --truth "$t.jsonl" || { echo "FAIL: synth $n" >&2; exit 1; }
  "$etlkit" switches "$t.etl" --json > "$t.rows" 2> "$t.err"
  expect "$n: switches --json" test $? -eq 0
  expect "$n: rows' stacks equal the truth" python3 "$check" switches "$t.jsonl" "$t.rows"
  expect "$n: the count of rows with stacks on stderr" grep -q "rows: New Thread Stack on" "$t.err"
  "$etlkit" switches "$t.etl" --csv 2>/dev/null | head -1 | grep -q ',New Thread Stack,Readying Thread Stack' ||
    { echo "FAIL: $n: CSV header without the stack columns" >&2; fails=$((fails+1)); }

  # waits --by: the same totals as waits, the tree's roots and the no-stack line adding up to them.
  "$etlkit" waits "$t.etl" --json > "$t.w" || echo "FAIL: $n: waits" >&2
  for by in stack readying-stack; do
    "$etlkit" waits "$t.etl" --by "$by" --json > "$t.b" || echo "FAIL: $n: waits --by $by" >&2
    "$etlkit" waits "$t.etl" --by "$by" --flat --top 3 > /dev/null || echo "FAIL: $n: waits --by $by --flat" >&2
    expect "$n: waits --by $by totals" python3 - "$t.w" "$t.b" <<'PY'
import json, sys
w, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
wait = sum(t["wait_ns"] for t in w["threads"])
assert b["wait_ns"] == wait and b["ready_ns"] == w["ready"]["ready_ns"], (b["wait_ns"], wait, b["ready_ns"])
assert sum(c["wait_ns"] for c in b["children"]) + b["no_stack"]["wait_ns"] == wait
assert sum(c["ready_ns"] for c in b["children"]) + b["no_stack"]["ready_ns"] == b["ready_ns"]
PY
  done

  # export: the slices' stack ids.
  if python3 -c 'import sqlite3' 2>/dev/null; then
    "$etlkit" export "$t.etl" --to sqlite -o "$t.sqlite" 2>/dev/null || echo "FAIL: $n: export" >&2
    if [ "$3" = compact ]; then
      expect "$n: export: no new_stack_id" python3 -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); \
        sys.exit(d.execute('SELECT COUNT(new_stack_id) FROM slice').fetchone()[0] != 0)" "$t.sqlite"
    else
      expect "$n: export's stack ids equal the truth" python3 "$check" export "$t.jsonl" "$t.sqlite"
    fi
  fi
done

# A compact-only trace: no New Thread Stack, and said so.
t="$tmp/s32-both-compact"
expect "compact: the rows without a New Thread Stack are counted" grep -Eq "New Thread Stack on 0, .* [1-9][0-9]* rows of compact" "$t.err"
expect "compact: no row has a New Thread Stack" python3 -c "import json,sys; \
  sys.exit(any(json.loads(l).get('new_thread_stack') for l in open(sys.argv[1])))" "$t.rows"

# waitchain: the longest waiter's chain, its hops' stacks.
t="$tmp/s64-both-full"
tid=$(python3 -c "import json,sys; w=json.load(open(sys.argv[1])); print(max(w['threads'], key=lambda t: t['wait_ns'])['tid'])" "$t.w")
base=$(python3 -c "import json,sys,itertools
for l in open(sys.argv[1]):
    r = json.loads(l)
    if not r.get('head'): print(r['switch_in_ts'] - r['switch_in_ns'] // 100); break" "$t.rows")
for frames in 3 0; do
  "$etlkit" waitchain "$t.etl" --thread "$tid" --frames $frames --json > "$t.c" || echo "FAIL: waitchain --json" >&2
  top=$frames; [ "$top" = 0 ] && top=999
  expect "waitchain --frames $frames: hops carry the truth's stacks" python3 "$check" waitchain "$t.jsonl" "$t.c" $top "$base"
done
"$etlkit" waitchain "$t.etl" --thread "$tid" > "$t.txt"
expect "waitchain text: blocked in / readied by lines" grep -q "readied by .* in:  " "$t.txt"

# Without those walks: no stack column, no note, nothing else changed (unchanged.sh compares the rest).
"$etlkit" synth --quiet --duration 0.2 --seed 3 -o "$tmp/plain.etl" || exit 1
"$etlkit" switches "$tmp/plain.etl" --json > "$tmp/plain.rows" 2> "$tmp/plain.err"
expect "no stacks: no stack key" sh -c "! grep -q thread_stack '$tmp/plain.rows' && ! test -s '$tmp/plain.err'"
"$etlkit" waits "$tmp/plain.etl" --by stack > "$tmp/plain.w"
expect "no stacks: waits --by stack says so" grep -q "walks no stack at its CSwitch" "$tmp/plain.w"
for f in "$samples"/*.etl; do
  [ -f "$f" ] || continue
  "$etlkit" switches "$f" --csv 2>/dev/null | head -1 | grep -q "Thread Stack" &&
    { echo "FAIL: $f: stack columns in a trace without CSwitch walks" >&2; fails=$((fails+1)); }
done

# Usage errors.
"$etlkit" waits "$tmp/plain.etl" --by frames > /dev/null 2>&1; expect "--by frames is a usage error" test $? -eq 64
"$etlkit" waits "$tmp/plain.etl" --flat > /dev/null 2>&1; expect "--flat alone is a usage error" test $? -eq 64

echo "sched_stacks: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
