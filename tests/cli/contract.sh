#!/bin/sh
# contract.sh ETLKIT SAMPLES - the CLI's promises: exit statuses, help, one-line errors,
# data on stdout and diagnostics on stderr, pipes as input.
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

"$etlkit" --version >"$tmp/out" 2>&1; check version 0 $?
expect "version text" grep -q '^etlkit [0-9]' "$tmp/out"
"$etlkit" --help >"$tmp/out" 2>&1; check help 0 $?
for c in info dump; do
  "$etlkit" $c --help >"$tmp/out" 2>&1; check "$c --help" 0 $?
  expect "$c --help text" grep -q "Usage: etlkit $c" "$tmp/out"
  "$etlkit" $c >/dev/null 2>&1; check "$c without FILE" 64 $?
  "$etlkit" $c --bogus "$k" >/dev/null 2>&1; check "$c bad option" 64 $?
done
"$etlkit" frobnicate >/dev/null 2>&1; check "unknown command" 64 $?
"$etlkit" >/dev/null 2>&1; check "no command" 64 $?

"$etlkit" convert --help >"$tmp/out" 2>&1; check "convert --help" 0 $?
"$etlkit" convert "$k" >/dev/null 2>&1; check "convert without -o" 64 $?
"$etlkit" convert "$k" -o "$tmp/c.etl" --cswitch sideways >/dev/null 2>&1; check "convert bad --cswitch" 64 $?
# --max-wait-reason: one range (what the encoder takes), checked when parsing, the error naming it.
for c in "convert -o $tmp/mwr.etl --cswitch keep" dump; do
  for n in 0 55; do
    "$etlkit" $c "$k" --max-wait-reason $n >/dev/null 2>"$tmp/err"; check "$c --max-wait-reason $n" 64 $?
    expect "$c --max-wait-reason $n names the range" grep -q -- '--max-wait-reason needs 1\.\.54' "$tmp/err"
  done
done
"$etlkit" convert "$k" -o "$tmp/mwr.etl" --cswitch compact --max-wait-reason 54 2>/dev/null; check "convert --max-wait-reason 54" 0 $?
"$etlkit" dump --filter NoSuchEvent "$k" >/dev/null 2>&1; check "dump unknown filter" 64 $?
"$etlkit" dump --filter Start "$k" >/dev/null 2>&1; check "dump ambiguous filter" 64 $?
"$etlkit" dump --expand --order file "$k" >/dev/null 2>&1; check "dump --expand --order file" 64 $?

# Not an ETL file: exit 2, exactly one line on stderr, nothing on stdout.
printf 'hello, this is not a trace\n' > "$tmp/text.etl"
for f in "$tmp/text.etl" /dev/null; do
  "$etlkit" info "$f" >"$tmp/out" 2>"$tmp/err"; check "not ETL $f" 2 $?
  expect "not ETL one line ($f)" [ "$(wc -l < "$tmp/err")" -eq 1 ]
  expect "not ETL no stdout ($f)" [ ! -s "$tmp/out" ]
done
# An endless stream that is not a trace stops at its first header instead of eating memory.
timeout 20 "$etlkit" info /dev/zero >/dev/null 2>&1; check "/dev/zero" 2 $?
head -c 4096 /dev/urandom > "$tmp/random.etl"
"$etlkit" dump "$tmp/random.etl" >/dev/null 2>"$tmp/err"; check "random bytes" 2 $?
"$etlkit" info "$tmp/does-not-exist.etl" >/dev/null 2>"$tmp/err"; check "missing file" 1 $?
expect "missing file one line" [ "$(wc -l < "$tmp/err")" -eq 1 ]
"$etlkit" info "$tmp" >/dev/null 2>&1; check "directory" 1 $?

# A clean sample: exit 0 and no stderr.
"$etlkit" info "$k" >"$tmp/out" 2>"$tmp/err"; check "info clean" 0 $?
expect "info clean stderr empty" [ ! -s "$tmp/err" ]
"$etlkit" dump --format jsonl "$k" >"$tmp/a" 2>/dev/null; check "dump clean" 0 $?
# A pipe gives the same records as the file.
cat "$k" | "$etlkit" dump --format jsonl - >"$tmp/b" 2>/dev/null; check "dump pipe" 0 $?
expect "pipe equals file" cmp -s "$tmp/a" "$tmp/b"
"$etlkit" dump --format csv --limit 5 "$k" >"$tmp/out"; check "csv" 0 $?
expect "csv header + 5 rows" [ "$(wc -l < "$tmp/out")" -eq 6 ]
# --limit 0: no limit (as --top 0 is all); it printed nothing.
"$etlkit" dump --format jsonl --limit 0 "$k" >"$tmp/out"; check "dump --limit 0" 0 $?
expect "dump --limit 0: every record" cmp -s "$tmp/out" "$tmp/a"
"$etlkit" dump --help | tr -s ' \n' ' ' >"$tmp/out"
expect "dump --help: --limit 0" grep -q -- "--limit N stop after N lines (0 = no limit" "$tmp/out"

# Filters and decoded fields.
"$etlkit" dump --format jsonl --filter Process/DCStart "$k" >"$tmp/out" 2>/dev/null; check "dump --filter" 0 $?
expect "filter keeps only that hook" [ "$(grep -c '"hook":771,' "$tmp/out")" -eq "$(wc -l < "$tmp/out")" ]
expect "filter finds the rundown" [ "$(wc -l < "$tmp/out")" -gt 50 ]
expect "process fields decoded" grep -q '"ImageFileName":"System"' "$tmp/out"
"$etlkit" info --json "$k" >"$tmp/out"; check "info json" 0 $?
expect "info names the kernel flags" grep -q '"kernel_flags":\["PERF_PROCESS","PERF_THREAD","PERF_LOADER"\]' "$tmp/out"
# The JSON's records per CPU are the text's "Records by CPU", and they add up to the records.
"$etlkit" info "$k" | sed -n '/^Records by CPU:/,/^$/s/^  cpu \([0-9]*\) *\([0-9]*\)$/\1 \2/p' >"$tmp/bycpu.txt"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r=d['by_cpu']; assert sum(x['count'] for x in r)==d['records']
for x in r: print(x['cpu'], x['count'])" "$tmp/out" >"$tmp/bycpu.json"; check "info json by_cpu sums to records" 0 $?
expect "info json by_cpu is the text's" cmp -s "$tmp/bycpu.txt" "$tmp/bycpu.json"
expect "info json by_cpu not empty" [ -s "$tmp/bycpu.txt" ]

# waitchain on a trace without switches: no chain (exit 4), and why on stderr, stdout empty (as with --json, whose
# object goes to stdout).
"$etlkit" waitchain "$k" --thread 4 >"$tmp/out" 2>"$tmp/err"; check "waitchain no switches" 4 $?
expect "waitchain no switches: stdout empty" [ ! -s "$tmp/out" ]
expect "waitchain no switches: why on stderr" grep -q "no context switches in this trace" "$tmp/err"
# switches on the same trace: every form says why, exit 0; --json's empty JSON-lines stream (no row) cannot, so
# stderr does, as for --csv (explore22 F10: nothing on either stream); --quiet keeps stderr silent.
"$etlkit" switches "$k" --json >"$tmp/out" 2>"$tmp/err"; check "switches --json no switches" 0 $?
expect "switches --json no switches: no row" [ ! -s "$tmp/out" ]
expect "switches --json no switches: why on stderr" grep -q "^etlkit switches: note: .*no context switches in this trace.*: no rows$" "$tmp/err"
expect "switches --json no switches: one line" [ "$(wc -l < "$tmp/err")" -eq 1 ]
"$etlkit" switches "$k" --json --quiet >"$tmp/out" 2>"$tmp/err"; check "switches --json --quiet no switches" 0 $?
expect "switches --json --quiet: stderr silent" [ ! -s "$tmp/err" ]
"$etlkit" switches "$k" --csv >"$tmp/out" 2>"$tmp/err"; check "switches --csv no switches" 0 $?
expect "switches --csv no switches: why on stderr" grep -q "no context switches in this trace.*: the table is empty$" "$tmp/err"

# convert: a lossless rewrite reads back with as many records; errors have their statuses.
"$etlkit" convert "$k" -o "$tmp/conv.etl" --compress 2>/dev/null; check "convert" 0 $?
"$etlkit" info --json "$tmp/conv.etl" >"$tmp/out"; check "converted file reads" 0 $?
expect "converted file compressed" grep -q '"compression":"xpress"' "$tmp/out"
"$etlkit" convert "$tmp/text.etl" -o "$tmp/c2.etl" 2>"$tmp/err"; check "convert not ETL" 2 $?
"$etlkit" convert "$k" -o "$tmp/no/such/dir/c.etl" 2>"$tmp/err"; check "convert unwritable" 1 $?

# A trace with both CSwitch events and batches converts to one form, each switch once.
both=$(dirname "$0")/../data/synth-64-qpc-both-z.etl
"$etlkit" convert "$both" -o "$tmp/full.etl" --cswitch full --json >"$tmp/out" 2>/dev/null; check "convert both->full" 0 $?
expect "both->full drops the duplicate form" grep -q '"duplicates_dropped":37' "$tmp/out"
"$etlkit" info --json "$tmp/full.etl" >"$tmp/out"; check "both->full reads" 0 $?
expect "both->full: CSwitch only" grep -q '"cswitch_events":4998,"compact_batches":0' "$tmp/out"
"$etlkit" convert "$tmp/full.etl" -o "$tmp/full.etl" 2>"$tmp/err"; check "convert onto its input" 64 $?
"$etlkit" info "$tmp/full.etl" >/dev/null 2>&1; check "input intact after refused convert" 0 $?
# compact -> full -> the same answers: the all-ones convert writes for what a batch does not carry (the new
# thread of each CPU's last switch) read back as unknown, not as a thread 4294967295.
compact=$(dirname "$0")/../data/synth-64-qpc-compact.etl
"$etlkit" convert "$compact" -o "$tmp/expanded.etl" --cswitch full 2>/dev/null; check "convert compact->full" 0 $?
for c in cpu waits switches; do
  (cd "$(dirname "$compact")" && "$etlkit" $c --json "$(basename "$compact")") | sed 's/"file":"[^"]*"//' >"$tmp/a.json"
  (cd "$tmp" && "$etlkit" $c --json expanded.etl) | sed 's/"file":"[^"]*"//' >"$tmp/b.json"
  expect "compact->full: $c the same" cmp -s "$tmp/a.json" "$tmp/b.json"
done
"$etlkit" cpu --json "$tmp/expanded.etl" >"$tmp/out"
expect "compact->full: the last switches' tails unknown" grep -q '"unknown_ns":[1-9]' "$tmp/out"
expect "compact->full: no thread 4294967295" sh -c "! grep -q 4294967295 '$tmp/out'"
"$etlkit" dump --expand --format jsonl "$(dirname "$0")/../data/synth-64-qpc-compact.etl" >"$tmp/out" 2>/dev/null; check "dump --expand" 0 $?
expect "expanded switches carry the paired new thread" grep -q '"expanded":"compact","fields":{"NewThreadId":' "$tmp/out"

# A truncated file: exit 3, warnings on stderr, the records before the cut on stdout.
head -c 100000 "$k" > "$tmp/trunc.etl"
"$etlkit" dump --format jsonl "$tmp/trunc.etl" >"$tmp/out" 2>"$tmp/err"; check "truncated" 3 $?
expect "truncated has records" [ "$(wc -l < "$tmp/out")" -gt 100 ]
expect "truncated warns with offset" grep -q "offset 0x" "$tmp/err"
# A file cut inside its logfile header: said so (exit 2: nothing can be read), not "not an ETL file" as for text.
head -c 300 "$k" > "$tmp/cuthdr.etl"
"$etlkit" info "$tmp/cuthdr.etl" >"$tmp/out" 2>"$tmp/err"; check "cut in the logfile header" 2 $?
expect "cut in the logfile header: one line" [ "$(wc -l < "$tmp/err")" -eq 1 ]
expect "cut in the logfile header: cut short, where" grep -q "cut short: the file ends at byte 300, inside its logfile header record" "$tmp/err"
# Cut before the logfile header record's first 32 bytes (72..103): the same "cut short" line, not "only N bytes"
# (explore22 F9); 100 bytes of text or zeros are still not an ETL file.
for n in 72 73 78 100 103; do
  head -c $n "$k" > "$tmp/cuthdr.etl"
  "$etlkit" info "$tmp/cuthdr.etl" >"$tmp/out" 2>"$tmp/err"; check "cut at byte $n" 2 $?
  expect "cut at byte $n: cut short, one line" sh -c "[ \$(wc -l < '$tmp/err') -eq 1 ] && grep -q 'cut short: the file ends at byte $n, ' '$tmp/err'"
done
head -c 100 /dev/zero > "$tmp/zero.etl"
for f in "$tmp/zero.etl" "$tmp/text.etl"; do
  "$etlkit" info "$f" >/dev/null 2>"$tmp/err"; check "short non-ETL $f" 2 $?
  expect "short non-ETL $f: not an ETL file" grep -q "not an ETL file" "$tmp/err"
done
"$etlkit" info "$tmp/text.etl" >/dev/null 2>"$tmp/err"
expect "text: not an ETL file" grep -q "not an ETL file" "$tmp/err"
# A corrupt buffer in the middle: the others are still read.
cp "$k" "$tmp/corrupt.etl"
printf '\000\000\000\000' | dd of="$tmp/corrupt.etl" bs=1 seek=$((65536*3)) conv=notrunc 2>/dev/null
"$etlkit" info --json "$tmp/corrupt.etl" >"$tmp/out" 2>"$tmp/err"; check "corrupt buffer" 3 $?
expect "corrupt buffer counted" grep -q '"bad_buffers":1' "$tmp/out"

# compare against a trace without context switches: an error (exit 2, one line naming it), not -100 %
# everywhere with exit 0 (a CI gate recorded with the wrong kernel flags would pass); --allow-empty runs it.
"$etlkit" synth --quiet --duration 0.2 -o "$tmp/sw.etl"
"$etlkit" compare "$tmp/sw.etl" "$k" --fail-if 'cpu(total) > 10%' >"$tmp/out" 2>"$tmp/err"; check "compare empty AFTER" 2 $?
expect "compare empty says which" grep -q "kernel-shutdown-x64.etl has no context switches" "$tmp/err"
expect "compare empty: one line" [ "$(wc -l < "$tmp/err")" -eq 1 ]
expect "compare empty: no answer" [ ! -s "$tmp/out" ]
"$etlkit" compare "$k" "$tmp/sw.etl" --json >"$tmp/out" 2>"$tmp/err"; check "compare empty BEFORE" 2 $?
"$etlkit" compare "$tmp/sw.etl" "$k" --allow-empty --fail-if 'cpu(total) < -10%' >"$tmp/out" 2>&1
check "compare --allow-empty" 1 $?
expect "compare --allow-empty: the gate cannot be computed" grep -q "^FAIL  cpu(total) < -10%: cannot be computed: no CPU time is known in .*kernel-shutdown-x64.etl" "$tmp/out"

# A side whose window holds nothing is the same case: --range past its end (clipped to 0 ns), or a window with no
# switch in it. Before, every amount read 0 ns/s or "new" and every gate passed (exit 0).
"$etlkit" synth --quiet --seed 4 --cpus 2 --threads 40 --processes 8 --duration 0.4 --load 70 --churn 20 -o "$tmp/before.etl"
"$etlkit" synth --quiet --seed 4 --cpus 2 --threads 40 --processes 8 --duration 0.4 --load 90 --churn 20 -o "$tmp/after.etl"
"$etlkit" synth --quiet --seed 4 --cpus 2 --duration 0.6 -o "$tmp/long.etl"
cd "$tmp" || exit 1
"$etlkit" compare before.etl after.etl --range 0.5 0.6 --fail-if 'cpu(total) > +10%' >out 2>err
check "compare --range past both ends" 2 $?
expect "compare --range past the end: names BEFORE and why" grep -q "^etlkit compare: before.etl ends at 0.40000[0-9] s: --range 0.5 0.6 holds none of it" err
expect "compare --range past the end: one line" [ "$(wc -l < err)" -eq 1 ]
expect "compare --range past the end: no answer" [ ! -s out ]
"$etlkit" compare long.etl after.etl --range 0.45 0.5 --json >out 2>err; check "compare --range past AFTER's end" 2 $?
expect "compare --range past AFTER's end: names AFTER" grep -q "^etlkit compare: after.etl ends at .*holds none of it" err
expect "compare --range past AFTER's end: one line" [ "$(wc -l < err)" -eq 1 ]
# 50..51 ns past a tick of 100 ns: no switch can fall in it.
"$etlkit" compare before.etl after.etl --range 0.10000005 0.100000051 >out 2>err; check "compare window without a switch" 2 $?
expect "compare window without a switch: says so" grep -q "^etlkit compare: before.etl has no context switch in its window 0.100000 s .. 0.100000 s (--range 0.10000005 0.100000051)" err
expect "compare window without a switch: one line" [ "$(wc -l < err)" -eq 1 ]
# --allow-empty compares anyway, but a gate on an amount that cannot be computed fails (exit 1), blank in text, null in JSON.
"$etlkit" compare before.etl after.etl --range 0.5 0.6 --allow-empty --fail-if 'cpu(total) > +10%' \
    --fail-if 'ready_p99(total) < -99%' >out 2>err
check "compare --allow-empty --range past the end: the gates fail" 1 $?
expect "compare --allow-empty --range past the end: cpu gate" grep -q "^FAIL  cpu(total) > +10%: cannot be computed: before.etl's window is 0 ns" out
expect "compare --allow-empty --range past the end: ready gate" grep -q "^FAIL  ready_p99(total) < -99%: cannot be computed" out
expect "compare --allow-empty --range past the end: blank amounts" grep -q "^CPU busy      - -> -  - (-)$" out
expect "compare --allow-empty --range past the end: no 0 ns/s" sh -c '! grep -q "0 ns/s" out'
"$etlkit" compare long.etl after.etl --range 0.45 0.5 --allow-empty --json --fail-if 'switches(total) > 1' >out 2>err
check "compare --allow-empty --json: the gate fails" 1 $?
tr -d ' \n' < out > flat
expect "compare --allow-empty --json: the window's amounts are null" grep -q '"total":{"in_before":true,"in_after":true,"before_cpu_ns":[0-9]*,"after_cpu_ns":null,"delta_ns":null,"delta_pct":null' flat
expect "compare --allow-empty --json: switches null" grep -q '"after_switches_per_s":null' flat
expect "compare --allow-empty --json: the gate's crossed is null" grep -q '"crossed":null,"why":"after.etl.swindowis0ns"' flat
expect "compare --allow-empty --json: failed" grep -q '"failed":true}' flat

# A name absent from BEFORE has no Ready percentile there: null, blank, and no change computed from a made-up 0.
"$etlkit" compare before.etl after.etl --json >out 2>err; check "compare pair" 0 $?
tr -d ' \n' < out > flat
expect "compare: a new process's BEFORE percentiles are null" \
    grep -q '"name":"cl.exe","in_before":false,"in_after":true,"before_cpu_ns":0,"after_cpu_ns":[0-9]*,"delta_ns":[0-9]*,"delta_pct":null,"before_wait_ns":0,"after_wait_ns":[0-9]*,"delta_wait_ns":[0-9]*,"delta_wait_pct":null,"before_switches_per_s":0.000,"after_switches_per_s":[0-9.]*,"before_ready_p50_ns":null,"after_ready_p50_ns":[0-9]*,"delta_ready_p50_ns":null,"delta_ready_p50_pct":null,"before_ready_p99_ns":null,"after_ready_p99_ns":[0-9]*,"delta_ready_p99_ns":null' flat
expect "compare: no BEFORE percentile of 0 anywhere" sh -c '! grep -q "\"before_ready_p[0-9]*_ns\":0[,}]" flat'
"$etlkit" compare before.etl after.etl --top 0 --fail-if 'ready_p99(process=cl) > +1000%' >out 2>err
check "compare: a gate on a new process's percentile fails" 1 $?
expect "compare: the new process's percentile is blank" grep -Eq '^  cl.exe \[new\] +0 ns +[0-9.]+ ms +\+[0-9.]+ ms +new +- +[0-9.]+ ms' out
expect "compare: the gate says why" grep -q "^FAIL  ready_p99(process=cl) > +1000%: cannot be computed: cl.exe is not in before.etl" out
cd - >/dev/null || exit 1

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
