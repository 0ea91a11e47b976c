#!/bin/sh
# sched_reports.sh ETLKIT - spinlocks, pmc and wakeups on hostile values (xsched, session 40): a number that cannot
# be computed or represented is null ("-" for people, an empty CSV cell), told, never printed as if it were one.
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
"$etlkit" synth -q --pmc 4 --lock-rate 20000 --seed 3 --duration 0.5 -o "$a"; check "synth" 0 $?

# A PMC sum past 2^64: the last switch of CPUs 0 and 1 each jump by ~2^63.9 in slot 0, named a label (a kind not
# checked for jumps). The total stopped at 18446744073709551615, below its CPUs' sum, exit 0; now null, told, exit 3.
last=$("$etlkit" dump "$a" --order file --format jsonl | python3 -c '
import json, sys
last = {}; i = 0
for l in sys.stdin:
    o = json.loads(l)
    if "pmc" not in o: continue
    last[o["cpu"]] = i; i += 1
print(last[0], last[1])')
set -- $last
dmg "$a" "$tmp/s1.etl" pmcset "$1" 0 0xF000000000000000
dmg "$tmp/s1.etl" "$tmp/s2.etl" pmcset "$2" 0 0xF000000000000000
"$etlkit" pmc "$tmp/s2.etl" --counters uops,instructions,llc,branch --json --top 0 >"$tmp/out" 2>"$tmp/err"
check "pmc sum past 2^64 --json" 3 $?
expect "pmc sum past 2^64 --json: the total's is null, the CPUs' known" python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
t = j['total']
sys.exit(not (t['deltas'][0] is None and t['counters']['uops'] is None and j['sums_saturated'] == [0]
              and t['deltas'][1] is not None and all(c['deltas'][0] is not None for c in j['cpus'])
              and sum(c['deltas'][0] for c in j['cpus']) > 2**64))" "$tmp/out"
expect "pmc sum past 2^64: warned" grep -q "warning: the sum of uops is past 2^64" "$tmp/err"
"$etlkit" pmc "$tmp/s2.etl" --counters uops,instructions,llc,branch >"$tmp/out" 2>/dev/null
check "pmc sum past 2^64 text" 3 $?
expect "pmc sum past 2^64 text: no 18446744073709551615" sh -c "! grep -q 18446744073709551615 '$tmp/out'"
expect "pmc sum past 2^64 text: note" grep -q "^note: the sum of uops is past 2^64" "$tmp/out"
"$etlkit" pmc "$tmp/s2.etl" --counters uops,instructions,llc,branch --csv --top 0 >"$tmp/out" 2>/dev/null
check "pmc sum past 2^64 --csv" 3 $?
expect "pmc sum past 2^64 --csv: no 18446744073709551615" sh -c "! grep -q 18446744073709551615 '$tmp/out'"
"$etlkit" pmc "$a" --json >"$tmp/out" 2>&1; check "pmc undamaged" 0 $?
expect "pmc undamaged: nothing saturated" grep -q '"sums_saturated":\[\]' "$tmp/out"

# wakeups --range counts a wake-up whole, its idle time before the window too: the help said "intervals are clipped".
"$etlkit" wakeups --help >"$tmp/out" 2>&1
expect "wakeups --help: --range counts wake-ups whole" sh -c "grep -q 'the idle time before one is' '$tmp/out' && ! grep -q 'intervals are clipped' '$tmp/out'"

# A header without CpuSpeedInMHz: the shares of CPU cannot be computed, the collision and the rate can; the text left
# the whole line out (the JSON had them).
python3 -c "import struct,sys; d=bytearray(open(sys.argv[1],'rb').read()); assert struct.unpack_from('<I',d,156)[0]==3000; struct.pack_into('<I',d,156,0); open(sys.argv[2],'wb').write(d)" "$a" "$tmp/nomhz.etl"
"$etlkit" spinlocks "$tmp/nomhz.etl" >"$tmp/out" 2>&1; check "spinlocks no MHz" 0 $?
expect "spinlocks no MHz: collision and rate, no share" grep -q "^CPU spent acquiring - (CPU speed unknown); collision [0-9.]*%; [0-9.]* acquisitions/s$" "$tmp/out"

# A waker thread of no known process (its Thread events renamed to another TID) and the wake-ups of no known readier
# were two rows "Unknown -" in wakeups' process table, and two {"pid":null,"name":"Unknown"} in by_process.
tid=$("$etlkit" wakeups "$a" --json | python3 -c '
import json, sys
print([t["tid"] for t in json.load(sys.stdin)["by_thread"] if t["tid"]][0])')
"$etlkit" dump "$a" --order file --format jsonl | python3 -c '
import json, struct, sys
path, out, tid = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = bytearray(open(path, "rb").read()); bs = struct.unpack_from("<I", d, 0)[0]; n = 0
for l in sys.stdin:
    o = json.loads(l)
    if o.get("hook") not in (0x0501, 0x0502, 0x0503, 0x0504) or o.get("fields", {}).get("TThreadId") != tid: continue
    at = o["buf"] * bs + o["off"] + o["size"] - o["len"] + 4
    assert struct.unpack_from("<I", d, at)[0] == tid
    struct.pack_into("<I", d, at, 99999); n += 1
assert n
open(out, "wb").write(d)' "$a" "$tmp/noproc.etl" "$tid"
"$etlkit" wakeups "$tmp/noproc.etl" --top 0 >"$tmp/out" 2>&1; check "wakeups waker of no process" 0 $?
expect "wakeups waker of no process: told apart" sh -c "grep -q '^  Unknown process  *- ' '$tmp/out' && grep -q '^  Unknown  *- ' '$tmp/out'"
"$etlkit" wakeups "$tmp/noproc.etl" --top 0 --json >"$tmp/out" 2>&1; check "wakeups waker of no process --json" 0 $?
expect "wakeups waker of no process --json: waker keys" python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
u = [(p['waker'], p['count']) for p in j['by_process'] if p['name'] == 'Unknown' and p['pid'] is None]
k = [t['waker'] for t in j['by_thread'] if t['tid'] == int(sys.argv[2])]
sys.exit(not (sorted(w for w, c in u) == ['thread', 'unknown'] and k == ['thread']
              and dict(u)['unknown'] == j['by_waker']['unknown']))" "$tmp/out" "$tid"
"$etlkit" wakeups "$tmp/noproc.etl" --csv >"$tmp/out" 2>&1; check "wakeups waker of no process --csv" 0 $?
expect "wakeups --csv: the waker column" grep -q "^$tid,Unknown,.*,thread" "$tmp/out"
"$etlkit" report "$tmp/noproc.etl" -o "$tmp/noproc.html" >/dev/null 2>&1; check "report waker of no process" 0 $?
expect "report waker of no process: the bars told apart" sh -c "grep -q '>Unknown process<' '$tmp/noproc.html' && grep -q '>Unknown<' '$tmp/noproc.html'"

# Two uncontended events waiting 2^32-1 cycles, read with A = 2^32-1 (a rate the kernel takes): the total's Σw·wait
# passed 2^64 and stopped at 18446744073709551615; its mean wait and % of CPU were made of it, and the text said
# nothing (JSON's saturated: true). Now null, noted, and the rates warning still given.
u=$("$etlkit" dump "$a" --order file --format jsonl | python3 -c '
import json, sys
i = 0; u = []
for l in sys.stdin:
    o = json.loads(l)
    if o.get("hook") != 0x0529: continue
    f = o["fields"]
    if f["SpinCount"] == 0 and f["HoldTimeInCycles"] <= 1000000 and f["InterruptCount"] == 0: u.append(i)
    i += 1
print(u[0], u[1])')
set -- $u
dmg "$a" "$tmp/w1.etl" spinset "$1" wait 0xffffffff
dmg "$tmp/w1.etl" "$tmp/w2.etl" spinset "$2" wait 0xffffffff
"$etlkit" spinlocks "$tmp/w2.etl" --acquire-rate 4294967295 --json >"$tmp/out" 2>"$tmp/err"
check "spinlocks sum past 2^64 --json" 0 $?
expect "spinlocks sum past 2^64 --json: null, not made of UINT64_MAX" python3 -c "
import json, sys
t = json.load(open(sys.argv[1]))['total']
w = t['wait_cycles']
sys.exit(not (t['saturated'] and w['total'] is None and w['mean'] is None and t['acquisition_cpu_pct'] is None
              and t['est_acquisitions'] is not None))" "$tmp/out"
expect "spinlocks sum past 2^64: the rates warning" grep -q "the locks take more than 2^64 cycles of the CPU, more than all of it" "$tmp/err"
"$etlkit" spinlocks "$tmp/w2.etl" --acquire-rate 4294967295 >"$tmp/out" 2>/dev/null
expect "spinlocks sum past 2^64 text: said" grep -q "^note: weighted sums past 2^64" "$tmp/out"
expect "spinlocks sum past 2^64 text: no share" grep -q "^CPU spent acquiring - (a sum past 2^64); collision" "$tmp/out"

# pmc with a selection of no switch (--thread 0, the idle thread's id): the trace has counters, the selection none;
# it said "no PMC counters on the context switches in this trace", and the CSV had no counter column.
"$etlkit" pmc "$a" --thread 0 >"$tmp/out" 2>/dev/null; check "pmc --thread 0" 0 $?
expect "pmc --thread 0: not 'no PMC counters in this trace'" sh -c "! grep -q 'no PMC counters' '$tmp/out' && grep -q '^Counters: Cycles, Instructions, LLC misses, Branch misses' '$tmp/out'"
"$etlkit" pmc "$a" --thread 0 --csv >"$tmp/out" 2>/dev/null; check "pmc --thread 0 --csv" 0 $?
expect "pmc --thread 0 --csv: the counters' columns" grep -q ",slices,cycles,instructions,llc,branch," "$tmp/out"

# A jump past 10 GHz in slot 0 without --counters: the kinds are synth's order, a guess, and a trace whose slot 0
# counts instructions (UIforETW's -pmc InstructionRetired,UnhaltedCoreCycles) passes 10 G a second at an IPC of 3:
# the warning blamed the data alone (exit 3, the slices dropped). It names the guess; with --counters it does not.
n=$("$etlkit" dump "$a" --order file --format jsonl | python3 -c '
import json, sys
i = 0
for l in sys.stdin:
    o = json.loads(l)
    if "pmc" in o: i += 1
print(i // 2)')
dmg "$a" "$tmp/j.etl" pmcxor "$n" 0 0x0000010000000000
"$etlkit" pmc "$tmp/j.etl" --top 1 >/dev/null 2>"$tmp/err"; check "pmc jump, slots by position" 3 $?
expect "pmc jump, slots by position: the guess named" grep -q "(or slot 0 does not count cycles: the slots are named by position, as etlkit synth --pmc writes them; name the trace's with --counters)" "$tmp/err"
"$etlkit" pmc "$tmp/j.etl" --top 1 --counters cycles,instructions,llc,branch >/dev/null 2>"$tmp/err"; check "pmc jump, --counters" 3 $?
expect "pmc jump, --counters: no guess to name" sh -c "grep -q 'slices dropped' '$tmp/err' && ! grep -q 'named by position' '$tmp/err'"

# wakeups' by_cpu had a count only up to the last CPU that woke: a selection or window of none gave [], and one that
# woke only on CPU 1 of 4 gave [0,n]. Every CPU of the trace has its count, 0 too.
"$etlkit" wakeups "$a" --range 0 1us --json >"$tmp/out" 2>/dev/null; check "wakeups 1 us" 0 $?
expect "wakeups 1 us: a count per CPU" grep -q '"by_cpu":\[0,0,0,0\]' "$tmp/out"
"$etlkit" wakeups "$a" --range 0 1us >"$tmp/out" 2>/dev/null
expect "wakeups 1 us text: a count per CPU" grep -q "^Per CPU: 0: 0 1: 0 2: 0 3: 0$" "$tmp/out"

# A CSwitch that carries 3 counters among switches of 4 (its header's count lowered, the payload moved up): the two
# slices at it are dropped, which the text's note says; with --csv nothing said it (only the reset had its note).
"$etlkit" dump "$a" --order file --format jsonl | python3 -c '
import json, struct, sys
path, out = sys.argv[1], sys.argv[2]
d = bytearray(open(path, "rb").read()); bs = struct.unpack_from("<I", d, 0)[0]
cs = [o for o in map(json.loads, sys.stdin) if o.get("hook") == 0x0524 and len(o.get("pmc", [])) == 4]
o = cs[len(cs) // 2]; b = o["buf"] * bs + o["off"]; n = o["size"]
r = bytes(d[b:b + n]); vw = struct.unpack_from("<H", r, 0)[0]
h = bytearray(r[:16]); struct.pack_into("<H", h, 0, (vw & ~0x0700) | 3 << 8)
d[b:b + n] = bytes(h) + r[16:40] + r[48:] + bytes(8)
open(out, "wb").write(d)' "$a" "$tmp/mm.etl"
"$etlkit" pmc "$tmp/mm.etl" --json >"$tmp/out" 2>/dev/null; check "pmc 3 of 4 counters --json" 0 $?
expect "pmc 3 of 4 counters --json: two slices dropped" grep -q '"pmc_count_mismatch":2,' "$tmp/out"
"$etlkit" pmc "$tmp/mm.etl" --csv >"$tmp/out" 2>"$tmp/err"; check "pmc 3 of 4 counters --csv" 0 $?
expect "pmc 3 of 4 counters --csv: told on stderr" grep -q "note: 2 slices dropped: their two switches carry different numbers of counters (pmc_count_mismatch)" "$tmp/err"
"$etlkit" pmc "$tmp/mm.etl" --csv -q >"$tmp/out" 2>"$tmp/err"
expect "pmc 3 of 4 counters --csv -q: quiet" [ ! -s "$tmp/err" ]

# A CSwitch without counters among switches with 4 (its counters cut out, a 32-byte record of an unknown hook where
# they were): the two slices at it are not counted; the CSV did not say so either.
"$etlkit" dump "$a" --order file --format jsonl | python3 -c '
import json, struct, sys
path, out = sys.argv[1], sys.argv[2]
d = bytearray(open(path, "rb").read()); bs = struct.unpack_from("<I", d, 0)[0]
cs = [o for o in map(json.loads, sys.stdin) if o.get("hook") == 0x0524 and len(o.get("pmc", [])) == 4]
o = cs[len(cs) // 2]; b = o["buf"] * bs + o["off"]; n = o["size"]
assert n % 8 == 0
r = bytes(d[b:b + n]); vw = struct.unpack_from("<H", r, 0)[0]
h = bytearray(r[:16]); struct.pack_into("<H", h, 0, vw & ~0x0700); struct.pack_into("<H", h, 4, n - 32)
f = bytearray(r[:16]); struct.pack_into("<H", f, 0, vw & 0xFF); struct.pack_into("<H", f, 4, 32)
struct.pack_into("<H", f, 6, 0x0F99)
d[b:b + n] = bytes(h) + r[48:] + bytes(f) + bytes(16)
open(out, "wb").write(d)' "$a" "$tmp/un.etl"
"$etlkit" pmc "$tmp/un.etl" --json >"$tmp/out" 2>/dev/null; check "pmc a switch without counters --json" 0 $?
expect "pmc a switch without counters --json: two slices unpaired" grep -q '"switches_without_pmc":1,"slices_unpaired":2,' "$tmp/out"
"$etlkit" pmc "$tmp/un.etl" --csv >"$tmp/out" 2>"$tmp/err"; check "pmc a switch without counters --csv" 0 $?
expect "pmc a switch without counters --csv: told on stderr" grep -q "note: 2 slices not counted: without counters at one end (slices_unpaired)" "$tmp/err"

# A buffer lost mid-trace: the wake-ups after its slices of no known thread idled for a time not known either; the
# text gave one cause, "idle since before the trace".
dmg "$a" "$tmp/drop.etl" dropbuf 10
"$etlkit" wakeups "$tmp/drop.etl" >"$tmp/out" 2>/dev/null; check "wakeups lost buffer" 3 $?
expect "wakeups lost buffer: both causes of unknown idle" grep -q "; unknown: idle since before the trace, or across records lost)$" "$tmp/out"

# pmc's cpus, as wakeups' by_cpu: a window of no slice listed no CPU ([]); every CPU of the trace has its row.
"$etlkit" pmc "$a" --range 0 1us --json >"$tmp/out" 2>/dev/null; check "pmc 1 us" 0 $?
expect "pmc 1 us: a row per CPU" python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
sys.exit(not ([c['cpu'] for c in j['cpus']] == [0, 1, 2, 3] and all(c['slices'] == 0 and c['ipc'] is None for c in j['cpus'])))" "$tmp/out"

# A --counters label that is another slot's own key ("pmc1", slot 1's when unnamed) made two "pmc1" keys in JSON's
# counters objects: a reader keeps one, so slot 0's sum read as slot 1's. Every key is unique.
"$etlkit" pmc "$a" --counters pmc1 --top 1 --json >"$tmp/out" 2>/dev/null; check "pmc --counters pmc1" 0 $?
expect "pmc --counters pmc1: keys unique, each its slot's" python3 -c "
import json, sys
j = json.load(open(sys.argv[1]), object_pairs_hook=lambda kv: (len(kv) == len(dict(kv)) or sys.exit(1)) and dict(kv))
t = j['total']
sys.exit(not (list(t['counters']) == ['pmc1', 'pmc1_1', 'pmc2', 'pmc3'] and list(t['counters'].values()) == t['deltas']))" "$tmp/out"
# The CSV header the same: it had pmc1 twice (a reader by column name took slot 1's numbers for slot 0's).
"$etlkit" pmc "$a" --counters pmc1 --csv >"$tmp/out" 2>/dev/null; check "pmc --counters pmc1 --csv" 0 $?
expect "pmc --counters pmc1 --csv: the header's names unique ($(head -1 "$tmp/out"))" \
  [ "$(head -1 "$tmp/out" | tr -d '\357\273\277\r' | cut -d, -f6-9)" = "pmc1,pmc1_1,pmc2,pmc3" ]
# A trace before Windows 8.1 has no hold threshold: the report page said "hold threshold 0 cycles", spinlocks "none".
"$etlkit" synth -q --os-build 9200 --seed 3 --duration 0.3 -o "$tmp/w8.etl"; check "synth --os-build 9200" 0 $?
"$etlkit" report "$tmp/w8.etl" -o "$tmp/w8.html" >/dev/null 2>&1; check "report of a Windows 8 trace" 0 $?
expect "report of a Windows 8 trace: no hold threshold, as spinlocks says" sh -c \
  "grep -q 'hold threshold none (as' '$tmp/w8.html' && ! grep -q 'hold threshold 0 cycles' '$tmp/w8.html'"

echo "sched_reports: $passes passed, $fails failed"
[ "$fails" = 0 ]
