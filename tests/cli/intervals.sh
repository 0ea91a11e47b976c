#!/bin/sh
# intervals.sh ETLKIT GEN_INTERVALS [plain|asan] - cpu --interval and --range at the trace's edges (issue 18):
#  1. Every interval of the window, or a refusal (exit 64) that names the limit and the interval that fits.
#  2. A trace whose end is idle lists every interval to its end.
#  3. 200,000 processes with --interval 20us: bounded memory (ulimit -v 1 GiB, not under ASan) and time,
#     and each interval's top processes are there.
#  4. --range past the trace is clipped to it, with one line on stderr: busy + idle + unknown = window.
#  5. The intervals are aligned to the trace start, with --range too (the first and last cut by it).
set -u
etlkit=$1; gen=$2; mode=${3:-plain}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
check() { # check NAME EXPECTED_STATUS ACTUAL_STATUS
  if [ "$2" = "$3" ]; then passes=$((passes+1)); else echo "FAIL: $1: exit $3, expected $2" >&2; fails=$((fails+1)); fi
}
expect() { # expect NAME CONDITION...
  name=$1; shift
  if "$@"; then passes=$((passes+1)); else echo "FAIL: $name" >&2; fails=$((fails+1)); fi
}
scale=1; [ "$mode" = asan ] && scale=10
# bounded SECONDS CMD...: under 1 GiB of address space (not under ASan) and a time limit; 124 on timeout.
bounded() {
  secs=$(( $1 * scale )); shift
  ( [ "$mode" = asan ] || ulimit -v 1048576; exec timeout -k 5 "$secs" "$@" )
}
# json_num FILE KEY: the first "KEY":N of a JSON file.
json_num() { grep -o "\"$2\":-\{0,1\}[0-9]*" "$1" | head -n 1 | cut -d: -f2; }
# intervals FILE: how many intervals a cpu --json output lists.
intervals() { grep -o '{"start_ns":[0-9]*,"end_ns":[0-9]*,"cpus"' "$1" | wc -l | tr -d ' '; }

"$gen" "$tmp" || { echo "FAIL: gen_intervals" >&2; exit 1; }
s2=$tmp/s2.etl; s1=$tmp/s1.etl
"$etlkit" synth --quiet -o "$s2"; check "synth 2 s" 0 $?
"$etlkit" synth --quiet --duration 1 --pmc 2 -o "$s1"; check "synth 1 s" 0 $?

# --- 1. more intervals than the limit: refused with the one that fits -----------------------------
"$etlkit" cpu "$s2" --interval 10us --json >"$tmp/out" 2>"$tmp/err"; check "10us over 2 s" 64 $?
expect "10us: nothing on stdout" test ! -s "$tmp/out"
expect "10us: one line" test "$(wc -l < "$tmp/err")" -eq 1
expect "10us: names the count and the limit" grep -q -- "--interval 10us makes 200001 intervals over .*, more than 100000" "$tmp/err"
expect "10us: names the interval that fits" grep -q -- "use --interval 20.001us or more" "$tmp/err"
"$etlkit" cpu "$s2" --interval 20us >/dev/null 2>"$tmp/err"; check "20us over 2.0000069 s" 64 $?
expect "20us: names the interval that fits" grep -q -- "use --interval 20.001us or more" "$tmp/err"
# The interval it names fits: every interval of the window, the last one ending with it.
"$etlkit" cpu "$s2" --interval 20.001us --json >"$tmp/out"; check "20.001us" 0 $?
w0=$(json_num "$tmp/out" start_ns); w1=$(json_num "$tmp/out" end_ns)
expect "20.001us: every interval" test "$(intervals "$tmp/out")" -eq $(( (w1 - w0 + 20000) / 20001 ))
expect "20.001us: the last ends with the window" grep -q "\"end_ns\":$w1,\"cpus\"" "$tmp/out"
# Within the limit through --range: 10us over 1 s.
"$etlkit" cpu "$s2" --interval 10us --range 0.5 1.5 --json >"$tmp/out"; check "10us over a 1 s range" 0 $?
expect "10us over 1 s: 100000 intervals" test "$(intervals "$tmp/out")" -eq 100000

# --- 2. an idle end: every interval to the end ----------------------------------------------------
"$etlkit" cpu "$tmp/idle-end.etl" --interval 1ms --json >"$tmp/out"; check "idle end --json" 0 $?
expect "idle end: window of 1 s" test "$(json_num "$tmp/out" end_ns)" -eq 1000000000
expect "idle end: 1000 intervals" test "$(intervals "$tmp/out")" -eq 1000
expect "idle end: the last is idle and ends the window" \
  grep -q '{"start_ns":999000000,"end_ns":1000000000,"cpus":\[0,0\],"busy_ns":0' "$tmp/out"
expect "idle end: the first is busy" grep -q '{"start_ns":0,"end_ns":1000000,"cpus":\[999000,998900\]' "$tmp/out"
"$etlkit" cpu "$tmp/idle-end.etl" --interval 1ms >"$tmp/out"; check "idle end text" 0 $?
expect "idle end text: 1000 rows" test "$(sed -n '/^Busy share per interval/,$p' "$tmp/out" | grep -c '^ *[0-9]')" -eq 1000

# --- 3. 200,000 processes per interval, in bounded memory -----------------------------------------
bounded 120 "$etlkit" cpu "$tmp/procs.etl" --interval 20us --json >"$tmp/out" 2>"$tmp/err"
check "200,000 processes --interval 20us" 0 $?
w1=$(json_num "$tmp/out" end_ns)
expect "200,000 processes: every interval" test "$(intervals "$tmp/out")" -eq $(( (w1 + 19999) / 20000 ))
# The top 10 are the first 10 threads' processes (39 us each); the first interval holds 10 us of the first 4.
first=$(grep -o '{"start_ns":0,"end_ns":20000,[^]]*\],"busy_ns":[0-9]*,"processes":\[[^]]*\]' "$tmp/out")
expect "200,000 processes: the first interval's 10 processes" test "$(echo "$first" | grep -o '"pid":' | wc -l)" -eq 10
for pid in 1000 1004 1008 1012; do
  expect "200,000 processes: pid $pid ran 10 us of the first interval" \
    sh -c "echo '$first' | grep -q '\"pid\":$pid,\"name\":\"[^\"]*\",\"busy_ns\":10000}'"
done
bounded 120 "$etlkit" cpu "$tmp/procs.etl" --interval 20us --top 3 >/dev/null 2>&1; check "200,000 processes text" 0 $?

# --- 4. --range past the trace: clipped, said once, and the CPUs add up to the window ---------------
"$etlkit" cpu "$s1" --json >"$tmp/whole"; check "cpu whole" 0 $?
end=$(json_num "$tmp/whole" end_ns)
for c in cpu waits spinlocks wakeups pmc; do
  "$etlkit" $c "$s1" --range 0.5 200 --json >"$tmp/out" 2>"$tmp/err"; check "$c --range 0.5 200" 0 $?
  expect "$c --range: window clipped to the end" grep -q "\"window\":{\"start_ns\":500000000,\"end_ns\":$end}" "$tmp/out"
  expect "$c --range: one note" test "$(grep -c 'note: .* ends at .*: --range 0.5 200 is clipped to 0.500000 s' "$tmp/err")" -eq 1
done
"$etlkit" cpu "$s1" --range 0.5 200 --json >"$tmp/out" 2>/dev/null
# busy + idle + unknown of every CPU = the window
sums=$(grep -o '"busy_ns":[0-9]*,"idle_ns":[0-9]*,"unknown_ns":[0-9]*,"switches"' "$tmp/out" |
  awk -F'[:,]' '{print $2 + $4 + $6}' | sort -u)
w0=$(json_num "$tmp/out" start_ns); w1=$(json_num "$tmp/out" end_ns)
expect "cpu --range: busy + idle + unknown = window on each CPU" test "$sums" = "$((w1 - w0))"
"$etlkit" cpu "$s1" --range 0.5 200 >"$tmp/out" 2>&1; check "cpu --range text" 0 $?
expect "cpu --range text: header window" grep -q "window 0.500000 s .. " "$tmp/out"
expect "cpu --range text: not 200 s" sh -c "! grep -q '200.000000 s' '$tmp/out'"
"$etlkit" cpu "$s1" --range 100 200 --json >"$tmp/out" 2>"$tmp/err"; check "cpu --range past the end" 0 $?
expect "cpu --range past the end: empty window at the end" grep -q "\"window\":{\"start_ns\":$end,\"end_ns\":$end}" "$tmp/out"
expect "cpu --range past the end: a note" grep -q "note: " "$tmp/err"
"$etlkit" cpu "$s1" --range 100 200 --quiet >/dev/null 2>"$tmp/err"; check "cpu --range --quiet" 0 $?
expect "cpu --range --quiet: no note" test ! -s "$tmp/err"
"$etlkit" cpu "$s1" --range 0 0.5 >/dev/null 2>"$tmp/err"; check "cpu --range inside" 0 $?
expect "cpu --range inside: no note" test ! -s "$tmp/err"
"$etlkit" cpu "$s1" --range -1 0.5 --json >"$tmp/out" 2>"$tmp/err"; check "cpu --range from before the start" 0 $?
expect "cpu --range from before the start: from 0" grep -q '"window":{"start_ns":0,"end_ns":500000000}' "$tmp/out"
expect "cpu --range from before the start: a note" grep -q "note: " "$tmp/err"
"$etlkit" cpu "$s1" --range -5 -1 >/dev/null 2>"$tmp/err"; check "cpu --range before the start" 64 $?

# An interval as long as int64 allows: one interval, the window's, its end not start + T wrapped negative (review).
"$etlkit" cpu "$s1" --range 0.5 1 --interval 9223372036.854775s --json >"$tmp/out" 2>"$tmp/err"; check "cpu --interval INT64" 0 $?
expect "cpu --interval INT64: the window's end" grep -q '"intervals":\[{"start_ns":500000000,"end_ns":1000000000,' "$tmp/out"

# --- 5. intervals aligned to the trace start (spec §2: [t0 + k·n, t0 + (k+1)·n) ∩ W), with --range too ---
# (explore item 5: they started at the range's start, so an interval's numbers depended on --range.)
"$etlkit" cpu "$s1" --interval 100ms --range 0.05 0.32 --json >"$tmp/out"; check "cpu --interval --range 0.05 0.32" 0 $?
expect "--range 0.05 0.32: intervals on the trace's 100 ms edges, the first and last cut" test \
  "$(grep -o '"start_ns":[0-9]*,"end_ns":[0-9]*,"cpus"' "$tmp/out" | tr '\n' ' ')" = \
  '"start_ns":50000000,"end_ns":100000000,"cpus" "start_ns":100000000,"end_ns":200000000,"cpus" "start_ns":200000000,"end_ns":300000000,"cpus" "start_ns":300000000,"end_ns":320000000,"cpus" '
"$etlkit" cpu "$s1" --interval 100ms --json >"$tmp/whole"
# [0.1, 0.2) and [0.2, 0.3) are whole in both: the same busy time per CPU with or without --range.
for s in 100000000 200000000; do
  expect "interval at $s ns: the same with and without --range" test \
    "$(grep -o "\"start_ns\":$s,\"end_ns\":[0-9]*,\"cpus\":\[[0-9,]*\],\"busy_ns\":[0-9]*" "$tmp/out")" = \
    "$(grep -o "\"start_ns\":$s,\"end_ns\":[0-9]*,\"cpus\":\[[0-9,]*\],\"busy_ns\":[0-9]*" "$tmp/whole")"
done
"$etlkit" cpu "$s1" --interval 100ms --range 0.05 0.32 >"$tmp/out"; check "cpu --interval --range text" 0 $?
expect "--range 0.05 0.32 text: rows start at 0.05, 0.1, 0.2, 0.3" test \
  "$(sed -n '/^Busy share per interval/,$p' "$tmp/out" | awk '$1 ~ /^[0-9]/ {printf "%s ", $1}')" = \
  "0.050000 0.100000 0.200000 0.300000 "
# A window off the edges meets one interval more than ceil(window / T): counted and refused alike.
"$etlkit" cpu "$s2" --interval 10us --range 0.000005 0.500005 --json >"$tmp/out" 2>"$tmp/err"
check "10us over 0.5 s off the edges" 0 $?
expect "10us off the edges: 50001 intervals" test "$(intervals "$tmp/out")" -eq 50001

echo "intervals.sh: $passes passed, $fails failed" >&2
[ "$fails" -eq 0 ]
