#!/bin/sh
# analysis.sh ETLKIT - waitchain, wakeups and compare from the command line (issue 10): exit statuses,
# usage errors, --fail-if crossing exactly when the change passes the threshold, JSON keys.
set -u
etlkit=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
check() { # check NAME EXPECTED_STATUS ACTUAL_STATUS
  if [ "$2" = "$3" ]; then passes=$((passes+1)); else echo "FAIL: $1: exit $3, expected $2" >&2; fails=$((fails+1)); fi
}
expect() { # expect NAME CONDITION...
  name=$1; shift
  if "$@"; then passes=$((passes+1)); else echo "FAIL: $name" >&2; fails=$((fails+1)); fi
}
lo=$tmp/lo.etl; hi=$tmp/hi.etl
"$etlkit" synth --quiet --seed 9 --cpus 2 --threads 30 --duration 0.3 --load 20 -o "$lo"; check "synth lo" 0 $?
"$etlkit" synth --quiet --seed 9 --cpus 2 --threads 30 --duration 0.3 --load 80 -o "$hi"; check "synth hi" 0 $?

for c in waitchain wakeups compare; do
  "$etlkit" $c --help >"$tmp/out" 2>&1; check "$c --help" 0 $?
  expect "$c --help text" grep -q "Usage: etlkit $c" "$tmp/out"
  "$etlkit" $c >/dev/null 2>&1; check "$c without FILE" 64 $?
  "$etlkit" $c --bogus "$lo" >/dev/null 2>&1; check "$c bad option" 64 $?
done

# wakeups
"$etlkit" wakeups "$lo" >"$tmp/out" 2>&1; check "wakeups" 0 $?
expect "wakeups text" grep -q "idle wake-ups" "$tmp/out"
"$etlkit" wakeups --json "$lo" >"$tmp/out" 2>&1; check "wakeups --json" 0 $?
for k in '"total":' '"by_process":\[{"pid":' '"by_thread":\[{"tid":' '"name":"DPC"' '"cstates":'; do
  expect "wakeups key $k" grep -q "$k" "$tmp/out"
done
# Idle before a wake-up, against synth --truth: a CPU's first switch from idle has no previous switch on that CPU,
# so how long it idled is not known (once put at 0 ns, under 10 us); the others' histogram is exact.
"$etlkit" synth --quiet --seed 7 --duration 0.5 --cpus 4 -o "$tmp/w.etl" --truth "$tmp/w.jsonl"
"$etlkit" wakeups --json --top 0 "$tmp/w.etl" >"$tmp/w.json" 2>/dev/null; check "wakeups --json, truth" 0 $?
expect "wakeups: idle before the wake as the truth's, the first of each CPU unknown" python3 - "$tmp/w.jsonl" "$tmp/w.json" <<'PY'
import json, sys
sw = [o for o in map(json.loads, open(sys.argv[1])) if o['type'] == 'switch']
meta = next(o for o in map(json.loads, open(sys.argv[1])) if o['type'] == 'meta')
ns = lambda ts: (ts - meta['header_ts']) * 10**9 // meta['ticks_per_sec']
prev, hist, unknown = {}, [0] * 7, 0
for o in sorted(sw, key=lambda o: (o['time'], o['cpu'])):
    if o['old_tid'] == 0 and o['new_tid'] != 0:
        if o['cpu'] not in prev: unknown += 1
        else:
            d = ns(o['time']) - ns(prev[o['cpu']])
            hist[sum(d >= e for e in (10**4, 10**5, 10**6, 10**7, 10**8, 10**9))] += 1
    prev[o['cpu']] = o['time']
j = json.load(open(sys.argv[2]))
sys.exit(not (unknown > 0 and j['idle_unknown'] == unknown and [b['count'] for b in j['idle_before']] == hist))
PY
"$etlkit" wakeups "$tmp/w.etl" >"$tmp/out" 2>/dev/null
expect "wakeups: the unknown ones said" grep -q "^  unknown  *[1-9][0-9]*  *-$" "$tmp/out"
"$etlkit" wakeups --csv "$lo" >"$tmp/out" 2>&1; check "wakeups --csv" 0 $?
expect "wakeups csv header" grep -q "^$(printf '\357\273\277')tid,process,name,count,per_second,pct" "$tmp/out"

# waitchain
"$etlkit" waitchain "$lo" --thread svchost >"$tmp/out" 2>&1; check "waitchain process" 0 $?
expect "waitchain summary" grep -q "^Summary: of " "$tmp/out"
"$etlkit" waitchain "$lo" --thread svchost --json >"$tmp/out" 2>&1; check "waitchain --json" 0 $?
for k in '"chain":{"tid":' '"segments":\[' '"critical_path":\[' '"summary":"of '; do
  expect "waitchain key $k" grep -q "$k" "$tmp/out"
done
"$etlkit" waitchain "$lo" --thread 999999 >/dev/null 2>&1; check "waitchain no such thread" 4 $?
"$etlkit" waitchain "$lo" >/dev/null 2>&1; check "waitchain without --thread" 64 $?
"$etlkit" waitchain - --thread 4 </dev/null >/dev/null 2>&1; check "waitchain stdin" 64 $?
# a pipe is refused as standard input is (the second pass waited for a writer for ever, or read nothing)
mkfifo "$tmp/fifo.etl" && { timeout 60 "$etlkit" waitchain "$tmp/fifo.etl" --thread 4 >/dev/null 2>"$tmp/err"
  check "waitchain on a FIFO" 64 $?; expect "waitchain FIFO says why" grep -q "a pipe will not do" "$tmp/err"; }
# --thread and --process together: refused (the --thread number was taken as a PID of another process)
"$etlkit" waitchain "$lo" --thread 4 --process svchost >/dev/null 2>&1; check "waitchain --thread with --process" 64 $?
# ids are decimal, as printed: a leading zero is no octal (--thread 010 was thread 8)
tid=$("$etlkit" waitchain "$lo" --thread svchost --json | grep -o '"tid":[0-9]*' | head -1 | cut -d: -f2)
"$etlkit" waitchain "$lo" --thread "$tid" --json >"$tmp/w1" 2>/dev/null; check "waitchain --thread $tid" 0 $?
"$etlkit" waitchain "$lo" --thread "0$tid" --json >"$tmp/w2" 2>/dev/null; check "waitchain --thread 0$tid" 0 $?
expect "waitchain --thread 0$tid is thread $tid" cmp -s "$tmp/w1" "$tmp/w2"
"$etlkit" cpu "$lo" --thread "0$tid" --json >"$tmp/c2"; "$etlkit" cpu "$lo" --thread "$tid" --json >"$tmp/c1"
expect "cpu --thread 0$tid is thread $tid" cmp -s "$tmp/c1" "$tmp/c2"
"$etlkit" cpu "$lo" --thread "0x$tid" >/dev/null 2>&1; check "cpu --thread 0x$tid: no hex" 64 $?
"$etlkit" waitchain "$lo" --thread 4 --depth x >/dev/null 2>&1; check "waitchain bad --depth" 64 $?
"$etlkit" waitchain "$lo" --thread 4 --at soon >/dev/null 2>&1; check "waitchain bad --at" 64 $?
"$etlkit" waitchain "$lo" --thread 4 --from 2 --at 1 >/dev/null 2>&1; check "waitchain --from after --at" 64 $?

# compare
"$etlkit" compare "$lo" "$lo" --fail-if 'cpu(total) > 0%' --fail-if 'wait(total) > 0ns' >"$tmp/out" 2>&1
check "compare self" 0 $?
"$etlkit" compare "$lo" "$hi" --fail-if 'cpu(total) > +10%' >/dev/null 2>&1; check "compare crossed" 1 $?
"$etlkit" compare "$lo" "$hi" --fail-if 'cpu(total) < -10%' >/dev/null 2>&1; check "compare not crossed" 0 $?
"$etlkit" compare "$hi" "$lo" --fail-if 'cpu(total) < -10%' >/dev/null 2>&1; check "compare reversed" 1 $?
"$etlkit" compare "$lo" "$hi" --json >"$tmp/out" 2>&1; check "compare --json" 0 $?
for k in '"processes":\[{"name":' '"before_cpu_ns":' '"after_cpu_ns":' '"delta_ns":' '"delta_pct":' '"failed":false'; do
  expect "compare key $k" grep -q "$k" "$tmp/out"
done
# Exactly at the threshold: the change itself is not > but is >=.
d=$(sed -n 's/.*"total":{[^}]*"delta_ns":\(-\{0,1\}[0-9]*\).*/\1/p' "$tmp/out")
expect "compare total delta" test -n "$d"
"$etlkit" compare "$lo" "$hi" --fail-if "cpu(total) > ${d}ns" >/dev/null 2>&1; check "compare at threshold >" 0 $?
"$etlkit" compare "$lo" "$hi" --fail-if "cpu(total) >= ${d}ns" >/dev/null 2>&1; check "compare at threshold >=" 1 $?
"$etlkit" compare "$lo" "$hi" --fail-if "cpu(total) > $((d - 1))ns" >/dev/null 2>&1; check "compare below threshold" 1 $?
"$etlkit" compare "$lo" "$hi" --fail-if 'cpu(process=nosuch) > 1ms' >/dev/null 2>"$tmp/err"; check "compare absent name" 0 $?
expect "compare absent name warns" grep -q "no such name" "$tmp/err"
for bad in 'cpu' 'cpu(total) > 5' 'heat(total) > 5%' 'cpu(total) = 5ms' 'switches(total) > 5ms'; do
  "$etlkit" compare "$lo" "$hi" --fail-if "$bad" >/dev/null 2>"$tmp/err"; check "compare --fail-if '$bad'" 64 $?
  expect "compare --fail-if '$bad' says why" grep -q -- "--fail-if" "$tmp/err"
done
"$etlkit" compare "$lo" >/dev/null 2>&1; check "compare one FILE" 64 $?
"$etlkit" compare "$lo" "$tmp/missing.etl" >/dev/null 2>&1; check "compare missing FILE" 1 $?
# A side cut short (explore24 F1): its unknown CPU time is not idle. A gate that time could decide either way
# cannot be computed and the exit is the damage's (3), never a crossing (1) made of lost data; a gate every value
# the unknown time allows crosses alike is decided (1); one line per such side in the text and on stderr.
head -c $((65536*2+30000)) "$hi" >"$tmp/cut.etl"
"$etlkit" compare "$hi" "$tmp/cut.etl" --fail-if 'cpu(total) < -1%' >"$tmp/out" 2>"$tmp/err"; check "compare cut: undecided gate" 3 $?
expect "compare cut: gate cannot be computed" grep -q "^FAIL  cpu(total) < -1%: cannot be computed: .*cut.etl: .* of its .* CPU time is unknown" "$tmp/out"
expect "compare cut: text says the side's unknown time" grep -q "^note: .*cut.etl: .* CPU time is unknown" "$tmp/out"
expect "compare cut: stderr says it" grep -q "^etlkit compare: note: .*cut.etl: .* CPU time is unknown" "$tmp/err"
"$etlkit" compare "$hi" "$tmp/cut.etl" -q --fail-if 'wait(total) > 1ms' >"$tmp/out" 2>&1; check "compare cut: wait gate" 3 $?
"$etlkit" compare "$hi" "$tmp/cut.etl" -q --fail-if 'cpu(total) > -99%' >"$tmp/out" 2>&1; check "compare cut: decided gate" 1 $?
"$etlkit" compare "$hi" "$tmp/cut.etl" -q --fail-if 'cpu(total) < -99%' >"$tmp/out" 2>&1; check "compare cut: decided, not crossed" 3 $?
# Both sides cut: the gate names both (it named BEFORE alone).
head -c $((65536+30000)) "$hi" >"$tmp/cut3.etl"
"$etlkit" compare "$tmp/cut.etl" "$tmp/cut3.etl" -q --fail-if 'wait(total) > 1ms' >"$tmp/out" 2>&1
expect "compare cut cut3: both sides named" grep -q "cannot be computed: .*cut.etl: .*; .*cut3.etl: .* they held" "$tmp/out"
# An undamaged compact trace's last slices are unknown too, but hide no switch-in of another thread: a wait gate on
# two compact traces is decided (it once failed as "cannot be computed" on every compact trace).
"$etlkit" synth -q --seed 5 --duration 1 --cswitch compact -o "$tmp/ca.etl" && "$etlkit" synth -q --seed 5 --duration 1 \
  --cswitch compact -o "$tmp/cb.etl" || check "synth compact pair" 0 1
"$etlkit" compare "$tmp/ca.etl" "$tmp/cb.etl" -q --fail-if 'wait(total) > 1%' >"$tmp/out" 2>&1; check "compare compact: wait gate decided" 0 $?
"$etlkit" compare "$tmp/ca.etl" "$tmp/cb.etl" -q --fail-if 'wait(total) >= 0%' >"$tmp/out" 2>&1; check "compare compact: wait gate crossed" 1 $?
"$etlkit" compare "$hi" "$tmp/cut.etl" -q --json --fail-if 'cpu(total) < -1%' >"$tmp/out" 2>&1
expect "compare cut --json: crossed null, unknown_ns" grep -q '"after":{[^}]*"unknown_ns":[1-9].*"crossed":null,"why":' "$tmp/out"

# waits on a trace without ReadyThread events (explore item 6): Waits are unknown (spec §1 rule 3), said in one
# line; no count, time or percentile of waiting, nor any statistic of an empty set, is printed as 0.
nort=$tmp/nort.etl
"$etlkit" synth --quiet --duration 0.3 --no-ready-thread -o "$nort"; check "synth --no-ready-thread" 0 $?
"$etlkit" waits "$nort" >"$tmp/out" 2>&1; check "waits no ReadyThread" 0 $?
expect "waits no ReadyThread: says so" grep -q "^  Waits unknown: the trace has no ReadyThread events" "$tmp/out"
expect "waits no ReadyThread: woken stats blank" grep -q "readied by a ReadyThread: 0, p50 -, p99 -, max -$" "$tmp/out"
expect "waits no ReadyThread: no '0 ns'" sh -c "! grep -q ' 0 ns' '$tmp/out'"
"$etlkit" waits "$nort" --json >"$tmp/out" 2>&1; check "waits no ReadyThread --json" 0 $?
expect "waits no ReadyThread --json: waits_known false" grep -q '"waits_known":false' "$tmp/out"
expect "waits no ReadyThread --json: woken stats null" grep -q '"woken_count":0,"woken_ns":0,"woken_mean_ns":null,"woken_p50_ns":null,"woken_p90_ns":null,"woken_p99_ns":null,"woken_p999_ns":null,"woken_max_ns":null}' "$tmp/out"
expect "waits no ReadyThread --json: wait counts null" grep -q '"wait_count":null,"wait_ns":null,"wait_max_ns":null}' "$tmp/out"
expect "waits no ReadyThread --json: no wait count 0" sh -c "! grep -q '\"wait_count\":0' '$tmp/out'"
"$etlkit" waits "$nort" --csv >"$tmp/out" 2>"$tmp/err"; check "waits no ReadyThread --csv" 0 $?
expect "waits no ReadyThread --csv: blank wait cells" grep -q ",,$(printf '\r')\$" "$tmp/out"
expect "waits no ReadyThread --csv: the reason on stderr" grep -q "note: .*Waits unknown: the trace has no ReadyThread" "$tmp/err"
"$etlkit" waits "$lo" --json >"$tmp/out" 2>&1; check "waits with ReadyThread --json" 0 $?
expect "waits with ReadyThread --json: waits_known true" grep -q '"waits_known":true' "$tmp/out"

# waits --range: a Ready interval [RT, SI) or a Waits one [LSO, RT) counts when some of it lies in the window [W0, W1),
# with its clipped length; one of no length when its point does (one that ends at W0 lies before it: explore14 F1).
# Against the switches' rows (the whole trace's), windows at the rows' edges: at SI, at RT, 1 ns past them, 1 ns wide.
"$etlkit" synth --quiet --seed 1 --duration 0.3 -o "$tmp/r.etl"
"$etlkit" switches "$tmp/r.etl" --json >"$tmp/rows.jsonl" 2>/dev/null; check "switches rows" 0 $?
expect "waits --range at the intervals' edges: counts and sums as the rows'" python3 - "$etlkit" "$tmp/r.etl" "$tmp/rows.jsonl" <<'PY'
import json, subprocess, sys
etlkit, trace, rows = sys.argv[1:4]
rows = [json.loads(l) for l in open(rows)]
ready = [(r['ready_time_ns'], r['switch_in_ns']) for r in rows if 'ready_time_ns' in r and r['new_tid'] != 0 and not r.get('head')]
waits = [(r['last_switch_out_ns'], r['ready_time_ns']) for r in rows if r.get('count_waits') == 1 and 'last_switch_out_ns' in r and 'ready_time_ns' in r and not r.get('head')]
def expect(iv, w0, w1):
    n = s = 0
    for a, b in iv:
        part = min(b, w1) - max(a, w0)
        if part > 0 or (a >= b and w0 <= b < w1):
            n += 1; s += max(part, 0)
    return n, s
bad = 0
picks = [r for r in ready if r[1] > r[0]][5:40:5] + [r for r in waits if r[1] > r[0]][5:40:5]
for a, b in picks:
    for w0, w1 in ((b, b + 1), (b + 1, b + 2), (a, a + 1), (a, b), (b, b + 100000), (a - 1, a)):
        d = json.loads(subprocess.run([etlkit, 'waits', trace, '--json', '--top', '0', '--range', '%dns' % w0, '%dns' % w1],
                                      capture_output=True, text=True).stdout)
        got = (d['ready']['ready_count'], d['ready']['ready_ns'])
        gw = (sum(x['count'] for x in d['by_reason']), sum(x['wait_ns'] for x in d['by_reason']))
        want, ww = expect(ready, w0, w1), expect(waits, w0, w1)
        if got != want or gw != ww:
            bad += 1
            sys.stderr.write('window [%d, %d): ready %s, expected %s; waits %s, expected %s\n' % (w0, w1, got, want, gw, ww))
sys.exit(bad != 0 or not picks)
PY

# A window clipped to 0 ns (--range past the end): shares, rates, means and percentiles of it are unknown, not 0.
"$etlkit" cpu "$lo" --range 0.6 0.7 >"$tmp/out" 2>/dev/null; check "cpu 0 ns window" 0 $?
expect "cpu 0 ns window: Busy % blank" test "$(awk '$1 == "all" {print $(NF-1)}' "$tmp/out")" = "-"
expect "cpu 0 ns window: no 0.00" sh -c "! grep -q ' 0\.00 ' '$tmp/out'"
"$etlkit" cpu "$lo" --range 0.6 0.7 --csv >"$tmp/out" 2>/dev/null; check "cpu 0 ns window --csv" 0 $?
expect "cpu 0 ns window --csv: cpu_pct blank" grep -q "^[0-9]*,[^,]*,[^,]*,0,,0," "$tmp/out"
"$etlkit" wakeups "$lo" --range 0.6 0.7 >"$tmp/out" 2>/dev/null; check "wakeups 0 ns window" 0 $?
expect "wakeups 0 ns window: per second blank" grep -q "^0 idle wake-ups, - per second" "$tmp/out"
"$etlkit" wakeups "$lo" --range 0.6 0.7 --json >"$tmp/out" 2>/dev/null; check "wakeups 0 ns window --json" 0 $?
expect "wakeups 0 ns window --json: per_second null" grep -q '"total":0,"per_second":null' "$tmp/out"
"$etlkit" waits "$lo" --range 0.6 0.7 >"$tmp/out" 2>/dev/null; check "waits 0 ns window" 0 $?
expect "waits 0 ns window: statistics blank" grep -q "^Ready latency of 0 switch-ins: mean -, p50 -, p90 -, p99 -, max -$" "$tmp/out"
"$etlkit" waits "$lo" --range 0.6 0.7 --json >"$tmp/out" 2>/dev/null; check "waits 0 ns window --json" 0 $?
expect "waits 0 ns window --json: null" grep -q '"ready_count":0,"ready_ns":0,"ready_mean_ns":null,"ready_p50_ns":null' "$tmp/out"
"$etlkit" spinlocks "$lo" --range 0.6 0.7 --json >"$tmp/out" 2>/dev/null; check "spinlocks 0 ns window --json" 0 $?
expect "spinlocks 0 ns window --json: collision, shares and rates null" grep -q '"collision_pct":null,"acquisition_cpu_pct":null,"contention_cpu_pct":null,"rates_per_s":{"acquisitions":null,"contentions":null,"spins":null}' "$tmp/out"
expect "spinlocks 0 ns window --json: no mean of no event" grep -q '"wait_cycles":{"total":0,"total_contended":0,"mean":null,"p50":null,"p99":null,"max":null}' "$tmp/out"
# Sampling rates that make the locks take more than all of the CPU: the numbers as computed, and one warning line.
"$etlkit" spinlocks "$lo" --acquire-rate 100000000 --contention-rate 1000000 >"$tmp/out" 2>"$tmp/err"
check "spinlocks impossible share" 0 $?
expect "spinlocks impossible share: one warning" test "$(grep -c "warning: .*more than all of it: the trace was not sampled at these rates" "$tmp/err")" -eq 1
"$etlkit" spinlocks "$lo" >"$tmp/out" 2>"$tmp/err"; check "spinlocks default rates" 0 $?
expect "spinlocks default rates: no warning" sh -c "! grep -q 'more than all of it' '$tmp/err'"

# A side's unknown time is said whole whatever its path's length (reviewer70 F1: cut at 240 bytes, mid-sentence).
long="$tmp/$(printf 'd%.0s' $(seq 1 150))"
mkdir -p "$long"
"$etlkit" synth --quiet --seed 7 --duration 2 --cpus 4 -o "$long/before.etl"
head -c $(( $(wc -c < "$long/before.etl") / 2 / 65536 * 65536 )) "$long/before.etl" > "$long/cut_after_long_name.etl"
"$etlkit" compare --fail-if 'cpu(total) < -1%' "$long/before.etl" "$long/cut_after_long_name.etl" >"$tmp/out" 2>"$tmp/err"
check "compare, a long path cut short" 3 $?
expect "compare, a long path: the FAIL line whole" grep -q "^FAIL .*cut_after_long_name.etl: .* CPU time is unknown (buffers lost, the file cut short, or a compact trace's last slices): the change could cross either way$" "$tmp/out"
expect "compare, a long path: the note whole" grep -q "cut_after_long_name.etl: .*last slices): amounts count the known time only$" "$tmp/err"

echo "analysis.sh: $passes passed, $fails failed" >&2
[ "$fails" -eq 0 ]
