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
"$etlkit" synth --quiet --seed 3 --cpus 4 --duration 0.2 --pmc 4 --stacks -o "$s"; check "synth" 0 $?

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
# With --range, a row whose switch-in is before the window (kept: part of its slice is in it) counts no switch-in,
# as cpu --range counts them: the same sum, and the same count per thread.
"$etlkit" cpu "$s" --range 0.05 0.15 --json --top 0 >"$tmp/cpur.json"; check "cpu --range --json" 0 $?
"$etlkit" switches "$s" --range 0.05 0.15 --csv >"$tmp/swr.csv" 2>/dev/null; check "switches --range --csv" 0 $?
cpu_sw=$(tr '{' '\n' <"$tmp/cpur.json" | grep '^"cpu":[0-9]' | sed 's/.*"switches":\([0-9]*\).*/\1/' | awk '{ s += $1 } END { print s }')
csv_count=$(awk -F, 'NR > 1 { s += $17 } END { print s }' "$tmp/swr.csv")
expect "switches --range: Count adds up to cpu's switches ($csv_count, $cpu_sw)" [ "$csv_count" = "$cpu_sw" ]
expect "switches --range: rows begun before the window kept" [ "$(awk -F, 'NR > 1 && $7 < 0.05' "$tmp/swr.csv" | wc -l)" -ge 4 ]
tr '{' '\n' <"$tmp/cpur.json" | sed -n 's/^"tid":\([0-9]*\),.*"switches":\([0-9]*\),.*/\1 \2/p' | awk '$1 && $2' | sort >"$tmp/a"
awk -F, 'NR > 1 && $3 != "" && $3 != 0 { n[$3] += $17 } END { for (t in n) if (n[t]) print t, n[t] }' "$tmp/swr.csv" | sort >"$tmp/b"
expect "switches --range: each thread's Count is cpu's ($(wc -l <"$tmp/a") threads)" sh -c "[ -s '$tmp/a' ] && cmp -s '$tmp/a' '$tmp/b'"

# --- switches streams every row: --top is refused (exit 64), and its --help does not offer it ---------------------
"$etlkit" switches "$s" --top 3 --csv >"$tmp/out" 2>"$tmp/err"; check "switches --top" 64 $?
expect "switches --top: unknown option" grep -q "unknown option '--top'" "$tmp/err"
expect "switches --top: no output" [ ! -s "$tmp/out" ]
"$etlkit" switches --help >"$tmp/out"; check "switches --help" 0 $?
expect "switches --help has no --top" sh -c "! grep -q -- '--top' '$tmp/out'"

# --- --top 0 is all, in text too (it was 20 there, as when --top is not given) ------------------------------------
for c in cpu waits wakeups pmc profile "waits --by stack" "profile --by module,function"; do
  "$etlkit" $c "$s" --top 0 >"$tmp/t0" 2>/dev/null; check "$c --top 0" 0 $?
  "$etlkit" $c "$s" --top 1000000 >"$tmp/tall" 2>/dev/null
  "$etlkit" $c "$s" >"$tmp/tdef" 2>/dev/null
  expect "$c --top 0: every row, as --top 1000000" cmp -s "$tmp/t0" "$tmp/tall"
  expect "$c: 20 rows of a table without --top, not all" [ "$(wc -l <"$tmp/tdef")" -lt "$(wc -l <"$tmp/t0")" ]
done
# the report page's tables too (it showed 25 rows for --top 0, its default)
"$etlkit" report "$s" -o - --quiet --top 0 >"$tmp/r0"; check "report --top 0" 0 $?
"$etlkit" report "$s" -o - --quiet --top 1000000 >"$tmp/rall"
"$etlkit" report "$s" -o - --quiet >"$tmp/rdef"
sed 's/"top":[0-9a-z]*//' "$tmp/r0" >"$tmp/r0s"; sed 's/"top":[0-9a-z]*//' "$tmp/rall" >"$tmp/ralls" # the limit named
expect "report --top 0: every row, as --top 1000000" cmp -s "$tmp/r0s" "$tmp/ralls"
expect "report: 25 rows of a table without --top, not all" [ "$(wc -c <"$tmp/rdef")" -lt "$(wc -c <"$tmp/r0")" ]

# --- one CSV form for every report's --csv: a UTF-8 BOM, then CRLF after every row (README: made for spreadsheets) -
bom=$(printf '\357\273\277')
for c in cpu waits wakeups spinlocks pmc switches profile; do
  "$etlkit" $c "$s" --csv >"$tmp/csv" 2>/dev/null; check "$c --csv" 0 $?
  expect "$c --csv starts with the BOM" [ "$(head -c 3 "$tmp/csv")" = "$bom" ]
  expect "$c --csv: every line ends in CRLF" [ "$(grep -c "$(printf '\r')\$" "$tmp/csv")" = "$(wc -l <"$tmp/csv")" ]
  expect "$c --csv: rows" [ "$(wc -l <"$tmp/csv")" -gt 1 ]
done
# A trace without switches: the header row alone, and why on stderr (one line), exit 0.
for c in cpu waits wakeups pmc switches spinlocks; do
  "$etlkit" $c "$k" --csv >"$tmp/csv" 2>"$tmp/err"; check "$c --csv, no switches" 0 $?
  expect "$c --csv, no switches: the header row alone" [ "$(wc -l <"$tmp/csv")" -eq 1 ]
  expect "$c --csv, no switches: the BOM" [ "$(head -c 3 "$tmp/csv")" = "$bom" ]
  expect "$c --csv, no switches: one note" [ "$(wc -l <"$tmp/err")" -eq 1 ]
  expect "$c --csv, no switches: the note says so" grep -q "^etlkit $c: note: .*: no .* in this trace" "$tmp/err"
done
"$etlkit" cpu "$k" --csv --quiet >/dev/null 2>"$tmp/err"
expect "cpu --csv --quiet, no switches: no note" [ ! -s "$tmp/err" ]

# --- --process / --thread that match nothing: one note naming the nearest, the empty tables, exit 0 ---------------
for c in cpu waits wakeups pmc spinlocks switches; do
  "$etlkit" $c "$s" --thread 999999 >"$tmp/out" 2>"$tmp/err"; check "$c --thread 999999" 0 $?
  expect "$c --thread 999999: a note" grep -q "^etlkit $c: note: --thread 999999 matches no thread: thread 999999 is not in this trace; the nearest thread ids:" "$tmp/err"
  expect "$c --thread 999999: five nearest" [ "$(grep -c '^  [0-9]' "$tmp/err")" -eq 5 ]
  "$etlkit" $c "$s" --process nosuch --csv >"$tmp/out" 2>"$tmp/err"; check "$c --process nosuch" 0 $?
  expect "$c --process nosuch: a note" grep -q "^etlkit $c: note: --process nosuch matches no thread: no process named 'nosuch' in this trace (no process name contains it)" "$tmp/err"
  expect "$c --process nosuch: the (empty) table" [ -s "$tmp/out" ]
done
"$etlkit" cpu "$s" --process svch >/dev/null 2>"$tmp/err"
expect "cpu --process svch: the names that contain it" grep -q "processes whose name contains it:" "$tmp/err"
expect "cpu --process svch: svchost" grep -q "^  svchost.exe (PIDs\? " "$tmp/err"
# A name suggested once lists every PID of that name, the first four and how many more; --json all of them (explore22
# F12: one PID, the first, as if it were the one meant). The truth: the PIDs of dump's svchost.exe Process events.
"$etlkit" synth --quiet --seed 1 --processes 40 --threads 80 --duration 0.2 -o "$tmp/many.etl"; check "synth many" 0 $?
"$etlkit" dump "$tmp/many.etl" --format jsonl 2>/dev/null | grep '"ImageFileName":"svchost.exe"' |
  python3 -c "import sys,json; print(sorted({json.loads(l)['fields']['ProcessId'] for l in sys.stdin}))" >"$tmp/truth"
expect "many: seven svchost.exe (the test's premise)" [ "$(tr -cd , <"$tmp/truth" | wc -c)" -eq 6 ]
"$etlkit" cpu "$tmp/many.etl" --process svch >/dev/null 2>"$tmp/err"
want=$(python3 -c "import ast,sys; p=ast.literal_eval(open(sys.argv[1]).read()); print('  svchost.exe (PIDs %s and %d more)' % (', '.join(map(str,p[:4])), len(p)-4))" "$tmp/truth")
expect "cpu --process svch: every PID, bounded ($(grep svchost "$tmp/err"))" grep -qxF "$want" "$tmp/err"
"$etlkit" waitchain "$tmp/many.etl" --thread svch --json >"$tmp/out" 2>/dev/null; check "waitchain --thread svch" 4 $?
python3 -c "import json,sys; m=json.load(open(sys.argv[1]))['close_matches']; print([x['pids'] for x in m if x['process']=='svchost.exe'][0])" \
  "$tmp/out" >"$tmp/got" 2>&1
expect "waitchain --json svch: pids are every svchost.exe PID ($(cat "$tmp/got"))" cmp -s "$tmp/truth" "$tmp/got"
"$etlkit" cpu "$s" --process svchost >/dev/null 2>"$tmp/err"
expect "cpu --process svchost: no note" [ ! -s "$tmp/err" ]
"$etlkit" cpu "$s" --process nosuch --quiet >/dev/null 2>"$tmp/err"
expect "cpu --process nosuch --quiet: no note" [ ! -s "$tmp/err" ]
# waitchain says it the same way, from the same code (its exit status 4 unchanged).
"$etlkit" waitchain "$s" --thread 999999 >/dev/null 2>"$tmp/err"; check "waitchain --thread 999999" 4 $?
expect "waitchain: the nearest thread ids" grep -q "^etlkit waitchain: thread 999999 is not in this trace; the nearest thread ids:" "$tmp/err"

# --- messages ------------------------------------------------------------------------------------------------------
"$etlkit" help cpu >"$tmp/a" 2>&1; check "help cpu" 0 $?
"$etlkit" cpu --help >"$tmp/b" 2>&1
expect "help cpu is cpu's help" cmp -s "$tmp/a" "$tmp/b"
"$etlkit" help nosuch >/dev/null 2>"$tmp/err"; check "help nosuch" 64 $?
expect "help nosuch: unknown command" grep -q "unknown command 'nosuch'" "$tmp/err"
"$etlkit" --bogus >/dev/null 2>"$tmp/err"; check "--bogus" 64 $?
expect "--bogus is an unknown option" grep -q "^etlkit: unknown option '--bogus'" "$tmp/err"
"$etlkit" --help >"$tmp/out"; check "--help" 0 $?
for st in "0 ok" "1 I/O error" "2 not an ETL file" "3 input damaged" "4 waitchain" "64 usage error" "--fail-if gate"; do
  expect "--help's exit statuses: $st" sh -c "tr '\n' ' ' <'$tmp/out' | grep -q -- '$st'"
done
# convert: its prefix, and the output-is-input usage error with the pointer to --help.
"$etlkit" convert "$s" -o "$s" >/dev/null 2>"$tmp/err"; check "convert onto its input" 64 $?
expect "convert onto its input: prefix" grep -q "^etlkit convert: .*the output is the input" "$tmp/err"
expect "convert onto its input: Try --help" grep -q "^Try 'etlkit convert --help'" "$tmp/err"
"$etlkit" convert "$s" -o "$tmp/c.etl" >/dev/null 2>"$tmp/err"; check "convert" 0 $?
expect "convert's summary: prefix" grep -q "^etlkit convert: $tmp/c.etl: [0-9]* records in" "$tmp/err"
# switches' notes: the command's prefix, a count of 1 in the singular.
head -c 300000 "$s" >"$tmp/cut.etl"
"$etlkit" switches "$tmp/cut.etl" >/dev/null 2>"$tmp/err"; check "switches on a cut file" 3 $?
# (the buffer cut, and the buffers written after it that the file misses)
expect "switches: prefixed notes" grep -q "^etlkit switches: note: [0-9]* buffers cut by the end of the file$" "$tmp/err"
expect "switches: no bare notes" sh -c "! grep -q '^note:' '$tmp/err'"
expect "switches: no '1 buffers'" sh -c "! grep -q ' 1 [a-z ]*buffers' '$tmp/err'"
"$etlkit" switches "$k" >"$tmp/out" 2>/dev/null; check "switches, no switches" 0 $?
expect "switches, no switches: the line alone, no header" [ "$(wc -l <"$tmp/out")" -eq 1 ]
# export of a trace without switches: no "()" at the end of its summary.
"$etlkit" export "$k" --to sqlite -o "$tmp/k.db" >/dev/null 2>"$tmp/err"; check "export, no switches" 0 $?
expect "export, no switches: no ()" sh -c "grep -q 'rows' '$tmp/err' && ! grep -q '()' '$tmp/err'"
# A failed write names the output and the system's reason, in every command.
if [ -w /dev/full ]; then
  for c in info dump cpu waits wakeups spinlocks pmc switches profile "waitchain --thread $tid" "compare $s" "export --schema"; do
    "$etlkit" $c "$s" >/dev/full 2>"$tmp/err"; check "$c >/dev/full" 1 $?
    expect "$c >/dev/full: standard output and why" grep -q "^etlkit ${c%% *}: standard output: No space left on device$" "$tmp/err"
  done
fi
"$etlkit" dump "$s" --filter "" >"$tmp/out" 2>"$tmp/err"; check "dump --filter ''" 64 $?
expect "dump --filter '': says what it needs" grep -q "^etlkit dump: --filter needs event names" "$tmp/err"
"$etlkit" waits --help | tr -s ' \n' ' ' >"$tmp/out"
expect "waits --help gives --longest's range" grep -q -- "--longest N how many longest waits and ready delays to list, 1 to 100000" "$tmp/out"
# --range clipped: the note says which end was clipped and why (a START before 0 is not the trace's end).
"$etlkit" cpu "$s" --range -1 0.1 >/dev/null 2>"$tmp/err"; check "cpu --range -1 0.1" 0 $?
expect "--range -1 0.1: starts at 0" grep -q "^etlkit cpu: note: $s starts at 0 s: --range -1 0.1 is clipped to 0.000000 s .. 0.100000 s$" "$tmp/err"
"$etlkit" cpu "$s" --range -1 9 >/dev/null 2>"$tmp/err"
expect "--range -1 9: both ends" grep -q "^etlkit cpu: note: $s runs from 0 s to 0.2[0-9]* s: --range -1 9 is clipped" "$tmp/err"
"$etlkit" cpu "$s" --range 0.1 9 >/dev/null 2>"$tmp/err"
expect "--range 0.1 9: ends at" grep -q "^etlkit cpu: note: $s ends at 0.2[0-9]* s: --range 0.1 9 is clipped to 0.100000 s" "$tmp/err"
# One time syntax for every option and --fail-if: exponents, µs as the CSV headers write it; whole nanoseconds.
"$etlkit" cpu "$s" --range 0 100ms --json >"$tmp/a"
for r in "0 1e-1" "0 100000µs" "0e0 1.0e5us" "0ns 1E+8ns"; do
  "$etlkit" cpu "$s" --range $r --json >"$tmp/b" 2>"$tmp/err"; check "cpu --range $r" 0 $?
  expect "cpu --range $r is --range 0 100ms" cmp -s "$tmp/a" "$tmp/b"
done
"$etlkit" cpu "$s" --interval 5e-2 --json >/dev/null 2>&1; check "cpu --interval 5e-2" 0 $?
"$etlkit" cpu "$s" --range 0 0.5ns >/dev/null 2>"$tmp/err"; check "cpu --range 0 0.5ns" 64 $?
expect "--range 0 0.5ns: a part of a nanosecond" grep -q "^etlkit cpu: --range: '0.5ns' has a part of a nanosecond: times are whole nanoseconds$" "$tmp/err"
expect "--range 0 0.5ns: not 'END must be after START'" sh -c "! grep -q 'after START' '$tmp/err'"
"$etlkit" compare "$s" "$s" --fail-if 'wait(total) > 10µs' --fail-if 'cpu(total) > 1.5e3ms' >/dev/null 2>&1; check "--fail-if 10µs" 0 $?
"$etlkit" compare "$s" "$s" --fail-if 'wait(total) > 0.5ns' >/dev/null 2>"$tmp/err"; check "--fail-if 0.5ns" 64 $?
expect "--fail-if 0.5ns: a part of a nanosecond" grep -q "a part of a nanosecond" "$tmp/err"
# synth names what it counts: its Thread events include SetName (info counts Thread events alone).
"$etlkit" synth --seed 3 --cpus 2 --duration 0.05 -o "$tmp/n.etl" 2>"$tmp/err"; check "synth, its summary" 0 $?
expect "synth: Thread (SetName included)" grep -q "[0-9] Thread (SetName included) and [0-9,]* Process events" "$tmp/err"
# -oFILE: a short option's value attached, as getopt reads it.
"$etlkit" report "$s" -o"$tmp/r.html" >/dev/null 2>&1; check "report -oFILE" 0 $?
expect "report -oFILE wrote FILE" [ -s "$tmp/r.html" ]

# --- numbers for people: rounded to the digits shown (WPA's way), not cut; help text whole -------------------------
"$etlkit" synth --help >"$tmp/out"; check "synth --help" 0 $?
expect "synth --help: --modules' text whole" sh -c "tr -s ' \n' ' ' <'$tmp/out' | grep -q 'at BASE+RVA (for symbol tests) (default none)'"
# cpu: every thread's CPU time (text) and % CPU (CSV) from its exact ns (JSON), rounded half up.
"$etlkit" cpu "$s" --top 1000 >"$tmp/cpu.txt"; "$etlkit" cpu "$s" --csv >"$tmp/cpu.csv"
tr '{' '\n' <"$tmp/cpu.json" | sed -n 's/^"tid":\([0-9]*\),.*"cpu_ns":\([0-9]*\),.*/\1 \2/p' >"$tmp/ns"
win=$(sed 's/.*"end_ns":\([0-9]*\).*"num_cpus":\([0-9]*\).*/\1 \2/' "$tmp/cpu.json" | awk '{ printf "%d", $1 * $2 }')
awk -v win="$win" -v txt="$tmp/cpu.txt" -v csv="$tmp/cpu.csv" '
  BEGIN { while ((getline l < txt) > 0) { n = split(l, f, "  +"); t[f[1] + 0] = l }
          while ((getline l < csv) > 0) { split(l, f, ","); p[f[1] + 0] = f[5] } }
  { ns = $2
    if (ns >= 1000000 && ns < 1000000000) { want = sprintf("%.3f ms", int((ns + 500) / 1000) / 1000); dur++
      if (index(t[$1 + 0], want) == 0) { print "tid " $1 ": " ns " ns is not " want; bad++ }
      if (ns % 1000 >= 500) up++ }
    pct = sprintf("%.2f", int((ns * 10000 * 2 + win) / (2 * win)) / 100)
    if (p[$1 + 0] != pct) { print "tid " $1 ": cpu_pct " p[$1 + 0] ", not " pct; bad++ }
    if (int(ns * 10000 / win) != int((ns * 10000 * 2 + win) / (2 * win))) pup++ }
  END { printf "%d %d %d %d\n", bad, dur, up, pup > "/dev/stderr"; exit bad > 0 || dur == 0 || up == 0 || pup == 0 }' "$tmp/ns" 2>"$tmp/err"
expect "cpu: durations and % CPU rounded ($(tail -1 "$tmp/err"): bad, checked, rounded up)" [ $? -eq 0 ]

# --- one format at a time, a share of nothing is "-", convert's counts add up (round 2: F9, F10, F15) -------------
# --json and --csv together: refused, naming both (the last one given won, silently).
for c in cpu waits wakeups spinlocks pmc switches profile; do
  "$etlkit" $c "$s" --json --csv >"$tmp/out" 2>"$tmp/err"; check "$c --json --csv" 64 $?
  expect "$c --json --csv: names both" grep -q "^etlkit $c: --json and --csv are one format each: give one$" "$tmp/err"
  expect "$c --json --csv: no output" [ ! -s "$tmp/out" ]
done
"$etlkit" cpu "$s" --csv --json >/dev/null 2>&1; check "cpu --csv --json" 64 $?
"$etlkit" cpu "$s" --json --json >/dev/null 2>&1; check "cpu --json --json (one format)" 0 $?
# profile --folded writes every stack (its counts sum to the samples): --top is refused, not ignored.
"$etlkit" profile "$s" --folded --top 3 >"$tmp/out" 2>"$tmp/err"; check "profile --folded --top 3" 64 $?
expect "profile --folded --top: says why" grep -q "^etlkit profile: --top has no meaning with --folded" "$tmp/err"
expect "profile --folded --top: no output" [ ! -s "$tmp/out" ]
# profile on a window with no sample: its shares are "-" (0 of 0), never 0.00 %; with samples, shares.
"$etlkit" profile "$s" --range 5 6 -q >"$tmp/out" 2>/dev/null; check "profile, an empty window" 0 $?
expect "profile, an empty window: shares '-'" grep -q "^0 samples, .*, 0 with a stack (-), 0 in no module (-)$" "$tmp/out"
"$etlkit" profile "$s" --range 5 6 -q --butterfly ntdll.dll+0x10 >"$tmp/out" 2>/dev/null
expect "profile --butterfly, an empty window: shares '-'" grep -q "the innermost frame of 0 (-)$" "$tmp/out"
expect "profile, an empty window: no 0.00%" sh -c "! grep -q '0\.00%' '$tmp/out'"
"$etlkit" profile "$s" -q >"$tmp/out" 2>/dev/null
expect "profile: shares with samples" grep -q " with a stack ([0-9.]*%), [0-9]* in no module ([0-9.]*%)$" "$tmp/out"
# convert --json: records_in is what info counts in the input, records_out plus the writer's header records what
# it counts in the output, and records_in adds up from the counts (the input's header records made anew apart).
num() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" "$2"; } # num KEY FILE: a number of one-line JSON (0: none)
for m in keep compact; do
  "$etlkit" convert "$s" -o "$tmp/c.etl" --force --cswitch $m --json -q >"$tmp/c.json"; check "convert --cswitch $m" 0 $?
  "$etlkit" info "$s" --json -q >"$tmp/in.json"; "$etlkit" info "$tmp/c.etl" --json -q >"$tmp/out.json"
  for key in records_in records_out records_dropped header_records_in header_records_out duplicates_dropped cswitch_in \
             batches_in batches_out cswitch_out; do
    eval "$key=\$(num $key \"\$tmp/c.json\")"; eval ": \${$key:=0}"
  done
  expect "convert $m: records_in is the input's records" [ "$records_in" = "$(num records "$tmp/in.json")" ]
  expect "convert $m: records_out + header_records_out is the output's records" \
    [ "$((records_out + header_records_out))" = "$(num records "$tmp/out.json")" ]
  expect "convert $m: the input's header records made anew: its logfile header and extension" [ "$header_records_in" = 2 ]
  sum=$((records_out - batches_out - cswitch_out + records_dropped + duplicates_dropped + cswitch_in + batches_in +
         header_records_in))
  expect "convert $m: records_in adds up ($sum, $records_in)" [ "$sum" = "$records_in" ]
done

# --- CPUs that ran no switch are the machine's all the same (NumberOfProcessors): listed, and % CPU over all ----
# (8 CPUs, one thread: cpu listed CPUs 0-4 and divided by 5: System 18.93 % where 11.83 % is right)
"$etlkit" synth --quiet --seed 2 --cpus 8 --threads 1 --processes 1 --duration 20ms -o "$tmp/c8.etl"
"$etlkit" cpu "$tmp/c8.etl" --json >"$tmp/c8.json"; check "cpu of 8 CPUs, 1 thread" 0 $?
expect "cpu: num_cpus 8, 8 CPUs listed" python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d['num_cpus'] == 8 and len(d['cpus']) == 8))" "$tmp/c8.json"
"$etlkit" cpu "$tmp/c8.etl" >"$tmp/c8.txt"
expect "cpu: System's % CPU over 8 CPUs" grep -q '^System .* 11\.83 ' "$tmp/c8.txt"
# --- a wait in the window whose switch-in comes after it: Waits are known (waits_known said false, nulled every
# thread's waits, and still listed the wait by reason: the report contradicted itself)
"$etlkit" synth --quiet --seed 6 --cpus 2 --threads 4 --processes 2 --duration 2ms -o "$tmp/w6.etl"
"$etlkit" waits "$tmp/w6.etl" --range 47100ns 66500ns --json >"$tmp/w6.json"; check "waits, a wait cut by the window" 0 $?
expect "waits: the wait cut by the window is known, counted once, 19.4 us" python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
t = [x for x in d['threads'] if x['tid'] == 284]
sys.exit(not (d['waits_known'] and t and t[0]['wait_count'] == 1 and t[0]['wait_ns'] == 19400 and len(d['by_reason']) == 1))" "$tmp/w6.json"
# --- convert keeps the trace's end; cpu --interval's processes are the totals' (fifth exploratory round, F6, F8) ---
# convert --cswitch compact wrote each CPU's last batch at its last record, here an Image DCEnd of the end rundown
# after the last scheduler record: the window's end moved 5 ns (100000111 -> 100000116), each CPU's tail with it.
"$etlkit" synth --quiet --seed 249524 --cpus 32 --threads 30 --processes 2 --duration 100ms --clock cycles \
  --cpu-mhz 1000 --stacks --lock-rate 100 --lock-contention 1 -o "$tmp/e.etl"; check "synth, an end rundown" 0 $?
"$etlkit" convert -q "$tmp/e.etl" -o "$tmp/ec.etl" --cswitch compact; check "convert --cswitch compact" 0 $?
"$etlkit" convert -q "$tmp/ec.etl" -o "$tmp/ecf.etl" --cswitch full; check "convert --cswitch full" 0 $?
for f in e ec ecf; do "$etlkit" cpu "$tmp/$f.etl" --json | sed 's/.*"window":\({[^}]*}\).*/\1/' >"$tmp/$f.win"; done
expect "convert compact: the window is the input's ($(cat "$tmp/e.win"), $(cat "$tmp/ec.win"))" \
  cmp -s "$tmp/e.win" "$tmp/ec.win"
expect "convert compact, then full: the window is the input's ($(cat "$tmp/ecf.win"))" cmp -s "$tmp/e.win" "$tmp/ecf.win"
# A relogged trace has events seconds past its EndTime (gc-threads: 2.9 s): the output's EndTime was the newest event,
# and every report's window 2.6 s longer. The input's EndTime, which its reader trusts, is kept.
g=$samples/gc-threads-x64.etl
"$etlkit" convert -q "$g" -o "$tmp/g.etl"; check "convert gc-threads" 0 $?
for f in "$g" "$tmp/g.etl"; do
  "$etlkit" info -q --json "$f" | grep -o '"end_time":[0-9]*'; "$etlkit" cpu -q --json "$f" | sed 's/.*"window":\({[^}]*}\).*/\1/'
done >"$tmp/g.ends"
expect "convert: EndTime and the window are the input's ($(tr '\n' ' ' <"$tmp/g.ends"))" \
  sh -c '[ "$(sed -n 1,2p "$1")" = "$(sed -n 3,4p "$1")" ]' sh "$tmp/g.ends"
# A thread that ran before its DCStart (CPU 8's head slice, tid 700 of services.exe, [0, 1.6 us)): cpu and
# cpu --range give it to the process that adopts it, the interval lost it (its processes added up to 1.6 us less
# than its busy_ns, services.exe 1.6 us short).
"$etlkit" synth --quiet --seed 394766 --cpus 13 --threads 30 --processes 8 --duration 1ms --clock system \
  --pointer-size 32 --buffer-size 8K --pmc 2 --no-spinlocks --cpu-mhz 1000 -o "$tmp/i.etl"
for n in 1 2; do
  "$etlkit" cpu "$tmp/i.etl" --json --interval 100us --threads $n >"$tmp/i$n.json"; check "cpu --interval --threads $n" 0 $?
done
expect "cpu --interval: --threads 1 and 2 the same" cmp -s "$tmp/i1.json" "$tmp/i2.json"
"$etlkit" cpu "$tmp/i.etl" --json --range 0ns 100us >"$tmp/ir.json"; check "cpu --range 0ns 100us" 0 $?
expect "cpu --interval: each interval's processes add up to its busy_ns, the first's are cpu --range's" python3 -c "
import json, sys
d, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ok = all(sum(p['busy_ns'] for p in i['processes']) == i['busy_ns'] for i in d['intervals'])
first = {(p['pid'], p['name']): p['busy_ns'] for p in d['intervals'][0]['processes'] if p['busy_ns']}
want = {(p['pid'], p['name']): p['cpu_ns'] for p in r['processes'] if p['cpu_ns']}
sys.exit(not (ok and first == want))" "$tmp/i1.json" "$tmp/ir.json"
# --- a ReadyThread before its CPU's first switch was readied by the thread that switch names as its old one (the
# head slice's): it read Unknown (tid 284 readied at 21.2 us on CPU 0 by 328, which ran there until 801.7 us)
"$etlkit" switches "$tmp/w6.etl" --json | grep '"new_tid":284' | head -1 >"$tmp/w6.row"
expect "switches: 284's first switch-in readied by 328 ($(grep -o '"readying_tid":[0-9]*' "$tmp/w6.row"))" grep -q '"readying_tid":328' "$tmp/w6.row"
"$etlkit" convert "$tmp/w6.etl" -o "$tmp/w6c.etl" --cswitch compact -q
"$etlkit" switches "$tmp/w6c.etl" --json | grep '"new_tid":284' | head -1 >"$tmp/w6c.row"
expect "switches, compact: 284's first switch-in readied by 328" grep -q '"readying_tid":328' "$tmp/w6c.row"
echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
