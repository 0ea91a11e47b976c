#!/bin/sh
# spinpmc.sh ETLKIT - spinlocks and pmc on selections and damaged inputs (explore10 A, B, C, H, E): a number that
# cannot be computed is not printed as one, a bound is never narrower than the truth allows, damage is told.
set -u
etlkit=$1
here=$(dirname "$0")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
check() { # check NAME EXPECTED_STATUS ACTUAL_STATUS
  if [ "$2" = "$3" ]; then passes=$((passes+1)); else echo "FAIL: $1: exit $3, expected $2" >&2; fails=$((fails+1)); fi
}
expect() { # expect NAME CONDITION...
  name=$1; shift
  if "$@"; then passes=$((passes+1)); else echo "FAIL: $name" >&2; fails=$((fails+1)); fi
}
dmg() { python3 "$here/spinpmc_damage.py" "$etlkit" "$@" 2>/dev/null; }
a=$tmp/a.etl
"$etlkit" synth -q --pmc 4 --lock-rate 20000 --seed 3 -o "$a"; check "synth" 0 $?

# A: a selection's bounds come from every event of each CPU (its counter is shared by all threads), and say so.
"$etlkit" spinlocks "$a" --process 868 >"$tmp/out" 2>&1; check "spinlocks --process" 0 $?
expect "spinlocks --process: the bounds are a selection's" grep -q "^Note: the bounds of a selection of threads are wide" "$tmp/out"
"$etlkit" spinlocks "$a" --process 868 --json >"$tmp/out" 2>&1; check "spinlocks --process --json" 0 $?
expect "spinlocks --process --json: bounds_note" grep -q '"bounds_note":"the bounds of a selection of threads are wide' "$tmp/out"
"$etlkit" spinlocks "$a" --json >"$tmp/out" 2>&1; check "spinlocks --json" 0 $?
expect "spinlocks --json: no bounds_note" grep -q '"bounds_note":null' "$tmp/out"
"$etlkit" spinlocks "$a" >"$tmp/out" 2>&1
expect "spinlocks: no selection note" sh -c "! grep -q 'bounds of a selection' '$tmp/out'"

# A counter that went backwards (PMC record 200's cycles set 1 below its CPU's previous switch's) drops one slice:
# the text's note, JSON's count, and with --csv the same note on stderr (explore24 F2: CSV said nothing).
dmg "$a" "$tmp/r.etl" pmcset 200 0 "$("$etlkit" dump "$a" --order file --format jsonl | python3 -c '
import json, sys
prev = {}; i = 0
for l in sys.stdin:
    o = json.loads(l)
    if "pmc" not in o: continue
    if i == 200: print(prev[o["cpu"]]["pmc"][0] - 1); break
    prev[o["cpu"]] = o; i += 1')"
"$etlkit" pmc "$tmp/r.etl" >"$tmp/out" 2>&1; check "pmc reset" 0 $?
expect "pmc reset: note" grep -q "^note: 1 slices dropped: a counter went backwards (pmc_counter_reset)" "$tmp/out"
"$etlkit" pmc "$tmp/r.etl" --csv >"$tmp/out" 2>"$tmp/err"; check "pmc reset --csv" 0 $?
expect "pmc reset --csv: note on stderr" grep -q "^etlkit pmc: .*r.etl: note: 1 slices dropped: a counter went backwards (pmc_counter_reset)" "$tmp/err"
expect "pmc reset --csv: no note in the CSV" sh -c "! grep -q 'went backwards' '$tmp/out'"
"$etlkit" pmc "$tmp/r.etl" --csv -q >"$tmp/out" 2>"$tmp/err"; check "pmc reset --csv -q" 0 $?
expect "pmc reset --csv -q: quiet" [ ! -s "$tmp/err" ]

# B: a counter jump no CPU can make (bit 40 of the cycles of CPU 2's last switch: 4484 GHz) is dropped, told
# with where it lies, exit 3; the undamaged trace has none.
"$etlkit" pmc "$a" --json >"$tmp/out" 2>"$tmp/err"; check "pmc" 0 $?
expect "pmc: no implausible slice" grep -q '"pmc_implausible":0,"pmc_implausible_first":null' "$tmp/out"
dmg "$a" "$tmp/b.etl" pmcxor 35644 0 0x0000010000000000
"$etlkit" pmc "$tmp/b.etl" --top 1 >"$tmp/out" 2>"$tmp/err"; check "pmc bit 40" 3 $?
expect "pmc bit 40: warning with where" grep -q "warning: 1 slices dropped: a counter jumped more than a CPU can count .*the first on CPU 2 at 1.99971. s .*Cycles +1099511" "$tmp/err"
expect "pmc bit 40: note" grep -q "^note: 1 slices dropped: a counter jumped" "$tmp/out"
expect "pmc bit 40: no GHz past 10" sh -c "! grep -Eq ' [0-9]{2,}\.[0-9]{3}\$' '$tmp/out'"
"$etlkit" pmc "$tmp/b.etl" --json >"$tmp/out" 2>/dev/null; check "pmc bit 40 --json" 3 $?
expect "pmc bit 40 --json: where" grep -q '"pmc_implausible":1,"pmc_implausible_first":{"cpu":2,' "$tmp/out"
# The report page meets it in its own pass: exit 3 as pmc (its data have the count).
"$etlkit" report "$tmp/b.etl" -o "$tmp/b.html" >/dev/null 2>&1; check "report: pmc bit 40" 3 $?
expect "report: pmc bit 40: the page is written" [ -s "$tmp/b.html" ]
"$etlkit" report "$a" -o "$tmp/a.html" >/dev/null 2>&1; check "report: undamaged" 0 $?

# C: a cycles counter that never counts: IPC, CPI and GHz are "-" in text, null in JSON, empty in CSV, and said.
"$etlkit" synth -q --pmc 4 --seed 9 --duration 0.3 -o "$tmp/pz.etl"; check "synth pz" 0 $?
dmg "$tmp/pz.etl" "$tmp/pz0.etl" pmcall 0 0
"$etlkit" pmc "$tmp/pz0.etl" --top 1 >"$tmp/out" 2>&1; check "pmc cycles 0" 0 $?
expect "pmc cycles 0: no 0.000 CPI or GHz" sh -c "! grep -Eq ' 0\\.000( |\$)' '$tmp/out'"
expect "pmc cycles 0: said" grep -q "^note: the Cycles counter (slot 0) never counted" "$tmp/out"
"$etlkit" pmc "$tmp/pz0.etl" --json --top 1 >"$tmp/out" 2>&1; check "pmc cycles 0 --json" 0 $?
expect "pmc cycles 0 --json: null" grep -q '"ipc":null,"cpi":null,"llc_mpki":[0-9.]*,"branch_mpki":[0-9.]*,"branch_miss_pct":null,"ghz":null}' "$tmp/out"
"$etlkit" pmc "$tmp/pz0.etl" --csv >"$tmp/out" 2>&1; check "pmc cycles 0 --csv" 0 $?
expect "pmc cycles 0 --csv: empty" grep -q '^0,Idle (0),,[0-9]*,[0-9]*,0,[0-9]*,[0-9]*,[0-9]*,,,[0-9.]*,[0-9.]*,,.\?$' "$tmp/out"

# C2: an instructions counter that never counts: IPC was 0.000 (text, JSON 0.0, CSV) for every row; now "-", null,
# empty, and said (the CSV's note on stderr, the cycles' one too).
dmg "$tmp/pz.etl" "$tmp/pi0.etl" pmcall 1 0
"$etlkit" pmc "$tmp/pi0.etl" --top 1 >"$tmp/out" 2>&1; check "pmc instructions 0" 0 $?
expect "pmc instructions 0: no IPC of 0.000" sh -c "! grep -Eq ' 0\.000( |\$)' '$tmp/out'"
expect "pmc instructions 0: said" grep -q "^note: the Instructions counter (slot 1) never counted (0 over .* of CPU time): IPC, CPI and the misses" "$tmp/out"
"$etlkit" pmc "$tmp/pi0.etl" --json --top 1 >"$tmp/out" 2>&1; check "pmc instructions 0 --json" 0 $?
expect "pmc instructions 0 --json: null" sh -c "grep -q '\"ipc\":null,\"cpi\":null,\"llc_mpki\":null,\"branch_mpki\":null,' '$tmp/out' && ! grep -q '\"ipc\":0' '$tmp/out'"
"$etlkit" pmc "$tmp/pi0.etl" --csv >"$tmp/out" 2>"$tmp/err"; check "pmc instructions 0 --csv" 0 $?
expect "pmc instructions 0 --csv: empty" sh -c "! grep -q ',0\.000,' '$tmp/out' && grep -q '^0,Idle (0),,[0-9]*,[0-9]*,[0-9]*,0,[0-9]*,[0-9]*,,,,,,[0-9.]*.\?\$' '$tmp/out'"
expect "pmc instructions 0 --csv: said on stderr" grep -q "^etlkit pmc: .*pi0.etl: note: the Instructions counter (slot 1) never counted" "$tmp/err"
"$etlkit" pmc "$tmp/pz0.etl" --csv >/dev/null 2>"$tmp/err"
expect "pmc cycles 0 --csv: said on stderr" grep -q "^etlkit pmc: .*pz0.etl: note: the Cycles counter (slot 0) never counted" "$tmp/err"

# H: a SpinLock released before it was acquired has no hold: out of the hold figures, told with where, exit 3.
dmg "$a" "$tmp/h.etl" spinset 100 release 5
"$etlkit" spinlocks "$tmp/h.etl" >"$tmp/out" 2>"$tmp/err"; check "spinlocks release < acquire" 3 $?
expect "spinlocks release < acquire: warning" grep -q "warning: 1 SpinLock events released before they were acquired .*the first on CPU 2 at 0.11605. s: no hold" "$tmp/err"
expect "spinlocks release < acquire: note" grep -q "^note: 1 SpinLock events released before they were acquired" "$tmp/out"
expect "spinlocks release < acquire: told beside the irq ones" grep -q "^  and 1 more left out of hold figures (released before acquired" "$tmp/out"
"$etlkit" spinlocks "$tmp/h.etl" --json >"$tmp/out" 2>/dev/null; check "spinlocks release < acquire --json" 3 $?
expect "spinlocks release < acquire --json: hold without it" grep -q '"hold_cycles":{"total":295980215,"weight":65165,"mean":4542,"p50":2528,' "$tmp/out"
expect "spinlocks release < acquire --json: counted" grep -q '"irq_skipped":47,"release_before_acquire":1,' "$tmp/out"
"$etlkit" report "$tmp/h.etl" -o "$tmp/h.html" >/dev/null 2>&1; check "report: release < acquire" 3 $?

# H2: an AcquireTime of 0 (a TSC reads 0 only at reset) made a hold of 6 hours, printed as the lock's maximum, exit 0:
# no hold the kernel measured, out of the hold figures, told with where and why, exit 3 (JSON, CSV, the page too).
dmg "$a" "$tmp/z.etl" spinset 100 acquire 0
"$etlkit" spinlocks "$tmp/z.etl" >"$tmp/out" 2>"$tmp/err"; check "spinlocks AcquireTime 0" 3 $?
expect "spinlocks AcquireTime 0: warning" grep -q "warning: 1 SpinLock events whose AcquireTime and ReleaseTime are no hold the kernel measured (a time of 0, a hold past 120 s at 3000 MHz: hold_impossible), the first on CPU 2 at 0.11605. s (AcquireTime 0, ReleaseTime 66146547140100)" "$tmp/err"
expect "spinlocks AcquireTime 0: note" grep -q "^note: 1 SpinLock events whose AcquireTime and ReleaseTime are no hold" "$tmp/out"
expect "spinlocks AcquireTime 0: told beside the irq ones" grep -q "^  and 1 more left out of hold figures (times no hold can have: hold_impossible)" "$tmp/out"
expect "spinlocks AcquireTime 0: no hold of hours" sh -c "! grep -v '^note: ' '$tmp/out' | grep -q 66146547140100"
"$etlkit" spinlocks "$tmp/z.etl" --json >"$tmp/out" 2>/dev/null; check "spinlocks AcquireTime 0 --json" 3 $?
expect "spinlocks AcquireTime 0 --json: hold without it" grep -q '"hold_cycles":{"total":295980215,"weight":65165,"mean":4542,"p50":2528,' "$tmp/out"
expect "spinlocks AcquireTime 0 --json: counted" grep -q '"release_before_acquire":0,"hold_impossible":1,"cells_dropped"' "$tmp/out"
"$etlkit" spinlocks "$tmp/z.etl" --csv >"$tmp/out" 2>"$tmp/err"; check "spinlocks AcquireTime 0 --csv" 3 $?
expect "spinlocks AcquireTime 0 --csv: warning" grep -q "warning: 1 SpinLock events whose AcquireTime" "$tmp/err"
expect "spinlocks AcquireTime 0 --csv: no hold of hours" sh -c "! grep -q 66146547140100 '$tmp/out'"
"$etlkit" report "$tmp/z.etl" -o "$tmp/z.html" >/dev/null 2>&1; check "report: AcquireTime 0" 3 $?

# E: events lost (a missing buffer: exit 3; EventsLost in the header: exit 0): the bounds keep their minimum, lose
# their maximum, and say why (truth: 3188 contended, the missing buffer's file said 3106..3106).
dmg "$a" "$tmp/drop.etl" dropbuf 20
"$etlkit" spinlocks "$tmp/drop.etl" >"$tmp/out" 2>/dev/null; check "spinlocks lost buffer" 3 $?
expect "spinlocks lost buffer: no maximum" grep -q "^  contended 3106 (true count at least 3106; no upper bound with events lost)" "$tmp/out"
expect "spinlocks lost buffer: why" grep -q "^Note: the trace lost events (buffers missing, damaged or cut)" "$tmp/out"
"$etlkit" spinlocks "$tmp/drop.etl" --json >"$tmp/out" 2>/dev/null; check "spinlocks lost buffer --json" 3 $?
expect "spinlocks lost buffer --json: max null" grep -q '"contended":{"estimate":3106,"min":3106,"max":null}' "$tmp/out"
expect "spinlocks lost buffer --json: note" grep -q '"bounds_note":"the trace lost events (buffers missing' "$tmp/out"
python3 -c "import struct,sys; d=bytearray(open(sys.argv[1],'rb').read()); struct.pack_into('<I',d,152,500); open(sys.argv[2],'wb').write(d)" "$a" "$tmp/lost.etl"
"$etlkit" spinlocks "$tmp/lost.etl" >"$tmp/out" 2>/dev/null; check "spinlocks EventsLost" 0 $?
expect "spinlocks EventsLost: no maximum" grep -q "^  contended 3188 (true count at least 3188; no upper bound with events lost)" "$tmp/out"
expect "spinlocks EventsLost: why" grep -q "^Note: the trace lost events (EventsLost or BuffersLost in the header)" "$tmp/out"

# D: the slices across the lost buffer are of no known thread: counted nowhere, so "all" is the sum of its rows.
"$etlkit" pmc "$tmp/drop.etl" --json --top 0 >"$tmp/out" 2>/dev/null; check "pmc lost buffer" 3 $?
# Which CPU the buffer was is not in the file: each of the 4 CPUs' slices across it is of no known thread.
expect "pmc lost buffer: a slice of no known thread per CPU" grep -q '"slices_unknown":4,' "$tmp/out"
expect "pmc lost buffer: total is the threads' sum" python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
t = j['total']
sys.exit(not (t['slices'] == sum(x['slices'] for x in j['threads']) == sum(x['slices'] for x in j['cpus'])
              and t['cpu_ns'] == sum(x['cpu_ns'] for x in j['threads'])))" "$tmp/out"

# K: every count is over the window the slices are: switches_with_pmc was the whole trace's (35982) beside a window's
# 1984 slices, and 35982 beside a 0 ns window's none.
"$etlkit" pmc "$a" --json --range 0.5 0.6 >"$tmp/out" 2>/dev/null; check "pmc --range" 0 $?
expect "pmc --range: switches of the window" python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
n = j['total']['slices'] + j['slices_unpaired'] + j['pmc_counter_reset'] + j['pmc_count_mismatch'] + j['pmc_implausible']
sys.exit(not (0 < n <= j['switches_with_pmc'] + j['switches_without_pmc'] <= n + 4))" "$tmp/out"
"$etlkit" pmc "$a" --json --range 5 6 >"$tmp/out" 2>/dev/null; check "pmc --range past the end" 0 $?
expect "pmc --range past the end: no switch" grep -q '"switches_with_pmc":0,"switches_without_pmc":0,' "$tmp/out"
"$etlkit" pmc "$a" --range 5 6 >"$tmp/out" 2>/dev/null
expect "pmc --range past the end: text" grep -q '^0 switches with counters, 0 without; 0 slices counted' "$tmp/out"
"$etlkit" report "$a" --range 5 6 -o "$tmp/r56.html" >/dev/null 2>&1
expect "report --range past the end: the trace has counters" sh -c "! grep -q 'This trace has no PMC counters' '$tmp/r56.html'"

# J: --counters naming a kind twice is a usage error; names past the switches' counters are said.
"$etlkit" pmc "$a" --counters instructions,instructions,llc >/dev/null 2>"$tmp/err"; check "pmc --counters twice" 64 $?
expect "pmc --counters twice: why" grep -q "instructions named twice (slots 0 and 1)" "$tmp/err"
"$etlkit" pmc "$a" --counters cycles,instructions,llc,branch,branches --top 1 >/dev/null 2>"$tmp/err"; check "pmc --counters 5 of 4" 0 $?
expect "pmc --counters 5 of 4: said" grep -q "warning: --counters names 5 slots, the switches carry 4 counters: branches names no counter" "$tmp/err"
"$etlkit" pmc "$a" --counters foo,foo --top 1 >/dev/null 2>&1; check "pmc --counters: other labels may repeat" 0 $?

# --range's help says what each does: neither clips (a slice's counters, an event's cycles count whole).
"$etlkit" pmc --help >"$tmp/out" 2>&1
expect "pmc --help: --range counts slices whole" sh -c "grep -q 'counters cannot be split, so a' '$tmp/out' && ! grep -q 'intervals are clipped' '$tmp/out'"
"$etlkit" spinlocks --help >"$tmp/out" 2>&1
expect "spinlocks --help: --range counts events whole" sh -c "grep -q 'its wait and hold cycles are' '$tmp/out' && ! grep -q 'intervals are clipped' '$tmp/out'"
"$etlkit" cpu --help >"$tmp/out" 2>&1
expect "cpu --help: --range clips" grep -q 'intervals are' "$tmp/out"

echo "spinpmc: $passes passed, $fails failed"
[ "$fails" = 0 ]
