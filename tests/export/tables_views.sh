#!/bin/sh
# tables_views.sh ETLKIT DATA WORK - `export --to sqlite --tables LIST` and the views: a view is in the
# file only when every table it reads was filled, so that each view there answers as in a full export
# (= `etlkit cpu` and `etlkit waits`), never from an empty table (cpu_by_thread with 0 rows, every CPU
# busy 0). The `trace` table says which tables were filled (key `tables`), in every format.
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
q() { sqlite3 -batch -noheader "$@" 2>&1; }
views() { q "$1" "SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name)"; }
# Every view of $1 gives the rows it gives in the full export (both ways: EXCEPT is a set difference).
same_views() {
  for v in $(views "$1"); do
    d=$(q "$1" "ATTACH 'full.db' AS f; SELECT COUNT(*) FROM (SELECT * FROM main.$v EXCEPT SELECT * FROM f.$v);
               SELECT COUNT(*) FROM (SELECT * FROM f.$v EXCEPT SELECT * FROM main.$v)" | tr '\n' ' ')
    check "$1: view $v as in the full export" "0 0 " "$d"
    check "$1: view $v has rows" 1 "$(q "$1" "SELECT COUNT(*) > 0 FROM $v")"
  done
}
all="cpu_by_cpu cpu_by_thread trace_window waits_by_reason waits_by_thread"
for t in "$data/synth-64-qpc-full.etl" "$data/synth-32-qpc-compact-z.etl"; do
  rm -f full.db ./*.db
  "$etlkit" export "$t" --to sqlite -o full.db --quiet; check "full export" 0 $?
  check "full: every view" "$all" "$(views full.db)"
  check "full: the tables filled" "trace,process,thread,cswitch,slice,thread_state,ready,spinlock,pmc,enum_name,image,stack,sample" \
    "$(q full.db "SELECT value FROM trace WHERE key = 'tables'")"
  # cpu_by_thread reads slice, thread and process (its names); the others slice alone (and trace, enum_name).
  "$etlkit" export "$t" --to sqlite -o s.db --tables slice --quiet; check "--tables slice" 0 $?
  check "--tables slice: views" "cpu_by_cpu trace_window waits_by_reason waits_by_thread" "$(views s.db)"
  check "--tables slice: trace says so" "trace,slice,enum_name" "$(q s.db "SELECT value FROM trace WHERE key = 'tables'")"
  same_views s.db
  "$etlkit" export "$t" --to sqlite -o st.db --tables slice,thread --quiet; check "--tables slice,thread" 0 $?
  check "--tables slice,thread: no cpu_by_thread (no process names)" "cpu_by_cpu trace_window waits_by_reason waits_by_thread" "$(views st.db)"
  "$etlkit" export "$t" --to sqlite -o stp.db --tables process,slice,thread --quiet; check "--tables slice,thread,process" 0 $?
  check "--tables slice,thread,process: every view" "$all" "$(views stp.db)"
  same_views stp.db
  "$etlkit" export "$t" --to sqlite -o c.db --tables cswitch --quiet; check "--tables cswitch" 0 $?
  check "--tables cswitch: only trace_window" "trace_window" "$(views c.db)"
done
# CSV and Parquet have no views; their trace table says which tables were filled too.
"$etlkit" export "$data/synth-64-qpc-full.etl" --to csv -o csv --tables slice,ready --quiet; check "csv --tables" 0 $?
check "csv: trace says so" '"trace,slice,ready,enum_name"' "$(grep '^[^,]*,tables,' csv/trace.csv | cut -d, -f3- | tr -d '\r' | sed 's/,$//')"

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
