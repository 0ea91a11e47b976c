#!/bin/sh
# reports_out.sh ETLKIT SAMPLES - what the reports print, beyond their numbers: switches' rows add up to cpu's
# switch counts, the options each report takes, one CSV form for every report's --csv, a note when --process or
# --thread matches nothing, the messages' wording, and numbers rounded for display.
set -u
etlkit=$1; samples=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
check() { # check NAME EXPECTED_STATUS ACTUAL_STATUS
  if [ "$2" = "$3" ]; then passes=$((passes+1)); else echo "FAIL: $1: exit $3, expected $2" >&2; fails=$((fails+1)); fi
}
expect() { # expect NAME CONDITION...
  name=$1; shift
  if "$@"; then passes=$((passes+1)); else echo "FAIL: $name" >&2; fails=$((fails+1)); fi
}
k=$samples/kernel-shutdown-x64.etl
s=$tmp/s.etl
"$etlkit" synth --quiet --seed 3 --cpus 4 --duration 0.2 --pmc 4 -o "$s"; check "synth" 0 $?

# --- switches: a head row (each CPU's [t0, first switch)) is no switch-in: Count 0 -------------------------------
"$etlkit" cpu "$s" --json --top 0 >"$tmp/cpu.json"; check "cpu --json" 0 $?
"$etlkit" switches "$s" --csv >"$tmp/sw.csv" 2>/dev/null; check "switches --csv" 0 $?
"$etlkit" switches "$s" --json >"$tmp/sw.json" 2>/dev/null; check "switches --json" 0 $?
cpu_sw=$(tr '{' '\n' <"$tmp/cpu.json" | grep '^"cpu":[0-9]' | sed 's/.*"switches":\([0-9]*\).*/\1/' | awk '{ s += $1 } END { print s }')
csv_count=$(awk -F, 'NR > 1 { s += $17 } END { print s }' "$tmp/sw.csv")
json_count=$(sed 's/.*"count":\([0-9]*\).*/\1/' "$tmp/sw.json" | awk '{ s += $1 } END { print s }')
expect "switches: CSV Count adds up to cpu's switches ($csv_count, $cpu_sw)" [ "$csv_count" = "$cpu_sw" ]
expect "switches: JSON count adds up to cpu's switches ($json_count, $cpu_sw)" [ "$json_count" = "$cpu_sw" ]
expect "switches: head rows kept, count 0" [ "$(grep '"head":true' "$tmp/sw.json" | grep -c '"count":0,')" -eq 4 ]
expect "switches: only head rows have count 0" [ "$(grep -c '"count":0,' "$tmp/sw.json")" -eq 4 ]
# Per thread too: a thread with a head row counts its switch-ins alone.
tid=$(grep '"head":true' "$tmp/sw.json" | grep -v '"new_tid":0,' | head -1 | sed 's/.*"new_tid":\([0-9]*\).*/\1/')
tsw=$(tr '{' '\n' <"$tmp/cpu.json" | grep "^\"tid\":$tid," | sed 's/.*"switches":\([0-9]*\).*/\1/')
"$etlkit" switches "$s" --csv --thread "$tid" 2>/dev/null | awk -F, 'NR > 1 { s += $17 } END { print s }' >"$tmp/n"
expect "switches: thread $tid's Count is cpu's ($tsw)" [ "$(cat "$tmp/n")" = "${tsw:-none}" ]

# --- switches streams every row: --top is refused (exit 64), and its --help does not offer it ---------------------
"$etlkit" switches "$s" --top 3 --csv >"$tmp/out" 2>"$tmp/err"; check "switches --top" 64 $?
expect "switches --top: unknown option" grep -q "unknown option '--top'" "$tmp/err"
expect "switches --top: no output" [ ! -s "$tmp/out" ]
"$etlkit" switches --help >"$tmp/out"; check "switches --help" 0 $?
expect "switches --help has no --top" sh -c "! grep -q -- '--top' '$tmp/out'"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
