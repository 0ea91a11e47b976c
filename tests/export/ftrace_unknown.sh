#!/bin/sh
# ftrace_unknown.sh ETLKIT DATA WORK - `export --to ftrace`: a switch whose thread a compact record does
# not carry (cswitch.new_tid NULL: the successor of a CPU's last compact switch was lost) is written as
# pid 4294967295 with the comm <...>, as the Perfetto target writes it, never 0: importers read pid 0 as
# the idle thread (swapper), which would make the unknown tail idle time. The `sched_switch` lines are
# checked against the cswitch table (the sqlite3 shell) switch by switch: (cpu, us, prev_pid, next_pid).
set -u
etlkit=$1; data=$2; work=$3
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
command -v sqlite3 >/dev/null 2>&1 || { echo "sqlite3 shell not found: skipped"; exit 77; }
passes=0; fails=0
ok() { passes=$((passes+1)); }
bad() { echo "FAIL: $*"; fails=$((fails+1)); }
check() { # check NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then ok; else bad "$1: got '$3', expected '$2'"; fi
}
q() { sqlite3 -batch -noheader -separator ' ' "$@" 2>&1; }
for t in synth-32-qpc-compact-z synth-64-qpc-compact synth-32-system-compact; do
  "$etlkit" export "$data/$t.etl" --to sqlite -o $t.db --quiet; check "$t: sqlite" 0 $?
  "$etlkit" export "$data/$t.etl" --to ftrace -o $t.txt --quiet; check "$t: ftrace" 0 $?
  lost=$(q $t.db 'SELECT COUNT(*) FROM cswitch WHERE new_tid IS NULL')
  [ "$lost" -gt 0 ] && ok || bad "$t: the fixture has no lost successor"
  check "$t: lost successors as 4294967295 <...>" "$lost" "$(grep -c 'next_comm=<\.\.\.> next_pid=4294967295 ' $t.txt)"
  check "$t: next_pid=0 only for the idle thread" "$(q $t.db 'SELECT COUNT(*) FROM cswitch WHERE new_tid = 0')" \
    "$(grep -c 'next_comm=swapper/[0-9]* next_pid=0 ' $t.txt)"
  check "$t: no other next_pid=0" "$(grep -c 'next_pid=0 ' $t.txt)" "$(grep -c 'next_comm=swapper/[0-9]* next_pid=0 ' $t.txt)"
  # Every switch: cpu, time in us, prev and next pid (NULL as 4294967295), in the file's order.
  q $t.db "SELECT cpu, ns / 1000, COALESCE(old_tid, 4294967295), COALESCE(new_tid, 4294967295) FROM cswitch
           ORDER BY rowid" > want
  sed -n 's/.*\[\([0-9]*\)\] [^ ]* *\([0-9]*\)\.\([0-9]*\): sched_switch: .* prev_pid=\([0-9]*\) .* next_pid=\([0-9]*\) .*/\1 \2\3 \4 \5/p' $t.txt |
    awk '{ printf "%d %d %s %s\n", $1, $2, $3, $4 }' > got
  cmp -s want got && ok || bad "$t: sched_switch lines differ from the cswitch table: $(diff want got | head -4 | tr '\n' ' ')"
done
echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
