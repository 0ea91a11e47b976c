#!/bin/sh
# tables_alone.sh ETLKIT WORK - `export --tables T` fills table T with exactly the rows the full export gives it,
# with and without --range (the sqlite3 shell: EXCEPT both ways), on a trace with samples and the switches' stacks:
# one table's rows never depend on which others are filled, so exports of a few tables each join as one export's.
set -u
etlkit=$1; work=$2
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
command -v sqlite3 >/dev/null 2>&1 || { echo "sqlite3 shell not found: skipped"; exit 77; }
passes=0; fails=0
check() { # check NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then passes=$((passes+1)); else echo "FAIL: $1: got '$3', expected '$2'"; fails=$((fails+1)); fi
}
q() { sqlite3 -batch -noheader "$@" 2>&1; }
"$etlkit" synth --quiet --stacks --pmc 2 --duration 0.2 --seed 3 -o s.etl; check "synth --stacks" 0 $?
for range in "" "--range 50ms 120ms"; do
  rm -f full.db
  # shellcheck disable=SC2086
  "$etlkit" export s.etl --to sqlite -o full.db --quiet $range; check "full export $range" 0 $?
  for t in process thread cswitch slice thread_state ready spinlock pmc image stack sample; do
    check "full export $range: $t has rows" 1 "$(q full.db "SELECT COUNT(*) > 0 FROM $t")"
    rm -f one.db
    # shellcheck disable=SC2086
    "$etlkit" export s.etl --to sqlite -o one.db --quiet --tables "$t" $range; check "--tables $t $range" 0 $?
    check "--tables $t $range: its rows as in the full export" "0 0 " \
      "$(q one.db "ATTACH 'full.db' AS f; SELECT COUNT(*) FROM (SELECT * FROM main.$t EXCEPT SELECT * FROM f.$t);
                   SELECT COUNT(*) FROM (SELECT * FROM f.$t EXCEPT SELECT * FROM main.$t)" | tr '\n' ' ')"
  done
done
echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
