#!/bin/sh
# lost_waits.sh ETLKIT - a thread's previous switch-out, Ready Time and readier across lost records (h4).
# Records lost on any CPU (a buffer missing, one zeroed or of random bytes, the file cut inside a buffer, every buffer
# of one CPU gone) may have held a later switch-out or ReadyThread of a thread that runs on another CPU: its switch-in
# after them has its Last Switch-Out, Waits, Ready and readier unknown, never an older switch-out's or ReadyThread's.
# They once were (exit 3, with the damage told): a 15.8 ms "ready delay" made of a lost buffer's 10 ms, ready max
# 410 us -> 15.8 ms, p99 852 us -> 10.3 ms on a cut file. Every known value of the damaged trace's rows must be the
# undamaged trace's; the readier of a ReadyThread logged after its CPU's lost switches is unknown too.
set -u
etlkit=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
bad() { echo "FAIL: $*" >&2; fails=$((fails+1)); }

# damage IN OUT ACTION ARG...: remove N | zero N | rand N FRAC | cut N FRAC | cpu C (N: a buffer's index in the file)
damage() {
  python3 - "$@" <<'PY'
import random, struct, sys
src, dst, act, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
d = bytearray(open(src, 'rb').read())
bufs, o = [], 0
while o + 0x48 <= len(d):
    size, = struct.unpack_from('<I', d, o)
    bufs.append((o, size, struct.unpack_from('<H', d, o + 0x28)[0] & 0x7FF, struct.unpack_from('<I', d, o + 0x30)[0]))
    o += size
if act == 'remove':
    o, size, _, _ = bufs[int(args[0])]; del d[o:o + size]
elif act == 'zero':
    o, size, _, _ = bufs[int(args[0])]; d[o:o + size] = bytes(size)
elif act == 'rand':
    o, size, _, fill = bufs[int(args[0])]; s = o + 0x48 + int((fill - 0x48) * float(args[1]))
    d[s:o + fill] = bytes(random.Random(7).getrandbits(8) for _ in range(o + fill - s))
elif act == 'cut':
    o, size, _, fill = bufs[int(args[0])]; d = d[:o + int(fill * float(args[1]))]
elif act == 'cpu':
    for o, size, cpu, _ in reversed(bufs[1:]):
        if cpu == int(args[0]): del d[o:o + size]
open(dst, 'wb').write(d)
PY
}

# same_known CLEAN DAMAGED: every row's known P, Ready and readier fields equal the clean trace's row of that switch
same_known() {
  python3 - "$@" <<'PY'
import json, sys
F = ('last_switch_out_ns', 'time_since_last_ns', 'waits_ns', 'ready_time_ns', 'ready_ns', 'readying_tid',
     'readying_process', 'first_readying_tid', 'ready_in_dpc', 'new_prev_state', 'new_prev_wait_reason', 'count_waits')
rows = lambda f: [json.loads(l) for l in open(f) if l.strip()]
key = lambda r: (r['cpu'], r.get('switch_in_ts'), r.get('head', False))
clean = {key(r): r for r in rows(sys.argv[1])}
bad, known = [], 0
for r in rows(sys.argv[2]):
    c = clean.get(key(r))
    if c is None or r.get('new_tid') != c.get('new_tid'): continue
    for f in F:
        if f in r:
            known += 1
            if r[f] != c.get(f): bad.append('cpu %d si %s tid %s %s: %s, truly %s' % (r['cpu'], r['switch_in_ts'], r['new_tid'], f, r[f], c.get(f)))
if bad: sys.exit('%d wrong, e.g. %s' % (len(bad), '; '.join(bad[:3])))
if known < 1000: sys.exit('only %d known values: the test sees nothing' % known)
PY
}

# not_above CLEAN DAMAGED: the damaged trace's ready and waits maxima are none above the clean trace's
not_above() {
  python3 - "$@" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
out = []
for k in ('ready_max_ns', 'woken_max_ns'):
    if b['ready'][k] is not None and b['ready'][k] > a['ready'][k]: out.append('%s %s > %s' % (k, b['ready'][k], a['ready'][k]))
ta = {(t['tid'], t['pid']): t for t in a['threads']}
for t in b['threads']:
    c = ta.get((t['tid'], t['pid']))
    for k in ('ready_max_ns', 'wait_max_ns'):
        if c and t.get(k) is not None and c.get(k) is not None and t[k] > c[k]: out.append('tid %d %s %s > %s' % (t['tid'], k, t[k], c[k]))
if out: sys.exit('; '.join(out[:4]))
PY
}

"$etlkit" synth -q --seed 3 --duration 0.5 --buffer-size 4K -o "$tmp/c.etl" || bad "synth"
"$etlkit" switches --json "$tmp/c.etl" >"$tmp/c.rows" 2>/dev/null || bad "switches on the clean trace"
"$etlkit" waits --json --top 0 "$tmp/c.etl" >"$tmp/c.waits" 2>/dev/null || bad "waits on the clean trace"
for d in "remove 20" "remove 33" "zero 41" "rand 20 0.3" "rand 70 0.5" "cut 60 0.5" "cpu 2"; do
  name=$(echo "$d" | tr ' .' '__')
  damage "$tmp/c.etl" "$tmp/$name.etl" $d || { bad "$d: damage"; continue; }
  "$etlkit" switches --json "$tmp/$name.etl" >"$tmp/$name.rows" 2>/dev/null; rc=$?
  [ $rc = 3 ] || bad "$d: switches exit $rc, expected 3"
  msg=$(same_known "$tmp/c.rows" "$tmp/$name.rows" 2>&1) && passes=$((passes+1)) || bad "$d: switches: $msg"
  "$etlkit" waits --json --top 0 "$tmp/$name.etl" >"$tmp/$name.waits" 2>/dev/null; rc=$?
  [ $rc = 3 ] || bad "$d: waits exit $rc, expected 3"
  msg=$(not_above "$tmp/c.waits" "$tmp/$name.waits" 2>&1) && passes=$((passes+1)) || bad "$d: waits: $msg"
done

# waitchain --at inside a gap whose start was lost: no chain, saying why (it was the older switch-out's gap); with
# --from, the lost part is 'unknown'.
pick=$(python3 - "$tmp/c.rows" "$tmp/remove_20.rows" <<'PY'
import json, sys
rows = lambda f: [json.loads(l) for l in open(f) if l.strip()]
clean = {(r['cpu'], r.get('switch_in_ts')): r for r in rows(sys.argv[1]) if not r.get('head')}
for r in rows(sys.argv[2]):
    c = clean.get((r['cpu'], r.get('switch_in_ts')))
    if c and not r.get('head') and r.get('new_tid') and 'last_switch_out_ns' in c and 'last_switch_out_ns' not in r \
            and c['switch_in_ns'] - c['last_switch_out_ns'] > 2000:
        print(r['new_tid'], (c['last_switch_out_ns'] + c['switch_in_ns']) // 2, c['last_switch_out_ns']); break
PY
)
set -- $pick
if [ $# = 3 ]; then
  "$etlkit" waitchain "$tmp/c.etl" --thread "$1" --at "$2ns" >/dev/null 2>&1; rc=$?
  [ $rc = 0 ] || bad "waitchain on the clean trace: exit $rc"
  "$etlkit" waitchain "$tmp/remove_20.etl" --thread "$1" --at "$2ns" >/dev/null 2>"$tmp/wc.err"; rc=$?
  [ $rc = 4 ] && grep -q "has no known start: records were lost" "$tmp/wc.err" && passes=$((passes+1)) ||
    bad "waitchain --at in a gap of lost start: exit $rc, $(head -c 300 "$tmp/wc.err")"
  "$etlkit" waitchain "$tmp/remove_20.etl" --thread "$1" --at "$2ns" --from "$3ns" --json >"$tmp/wc.json" 2>/dev/null; rc=$?
  [ $rc = 3 ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [s["state"] for s in d["chain"]["segments"]] == ["unknown"], d' \
    "$tmp/wc.json" && passes=$((passes+1)) || bad "waitchain --from over a lost gap: exit $rc, $(head -c 300 "$tmp/wc.json")"
else
  bad "no row of a lost gap in remove 20"
fi

# ready_lost counts the window's and the selection's switch-ins, as the numbers beside it do (it counted the whole
# trace's: 15 in a window before the cut, and in --thread of a thread that lost none), and the stderr note names
# the file ("etlkit waits: note: 46 ..." had no path).
lost_of() { "$etlkit" waits --json --top 0 "$@" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["ready_lost"])'; }
f=$tmp/cut_60_0_5.etl
all=$(lost_of "$f"); early=$(lost_of "$f" --range 0 0.25); late=$(lost_of "$f" --range 0.25 1)
[ "${all:-0}" -gt 0 ] && [ "$early" = 0 ] && [ "$((early + late))" = "$all" ] && passes=$((passes+1)) ||
  bad "ready_lost over windows: whole $all, [0, 0.25) $early, [0.25, 1) $late"
tids=$(python3 - "$tmp/c.rows" "$tmp/cut_60_0_5.rows" <<'PY'
import json, sys
rows = lambda f: [json.loads(l) for l in open(f) if l.strip()]
clean = {(r['cpu'], r.get('switch_in_ts')): r for r in rows(sys.argv[1]) if not r.get('head')}
lost, n = set(), {}
for r in rows(sys.argv[2]):
    c = clean.get((r['cpu'], r.get('switch_in_ts')))
    if r.get('head') or not r.get('new_tid') or not c or c.get('new_tid') != r.get('new_tid'): continue
    n[r['new_tid']] = n.get(r['new_tid'], 0) + 1
    if 'ready_time_ns' in c and 'ready_time_ns' not in r: lost.add(r['new_tid'])
kept = [t for t in sorted(n, key=lambda t: -n[t]) if t not in lost]
if lost and kept: print(sorted(lost)[0], kept[0])
PY
)
set -- $tids
if [ $# = 2 ]; then
  one=$(lost_of "$f" --thread "$1"); none=$(lost_of "$f" --thread "$2")
  [ "${one:-0}" -gt 0 ] && [ "$one" -lt "$all" ] && [ "$none" = 0 ] && passes=$((passes+1)) ||
    bad "ready_lost of --thread: $1 (lost some) $one, $2 (lost none) $none, whole $all"
else
  bad "no thread with lost rows and one without in cut 60 0.5"
fi
"$etlkit" waits --json "$f" 2>&1 >/dev/null | grep -q "^etlkit waits: note: $f: $all switch-ins have no known Ready or Waits" &&
  passes=$((passes+1)) || bad "waits --json: the stderr note with the file: $("$etlkit" waits --json "$f" 2>&1 >/dev/null | grep switch-in)"
"$etlkit" waits "$f" --range 0 0.25 2>/dev/null | grep -q "switch-ins.* no known Ready" &&
  bad "waits --range before the loss: a note of lost switch-ins" || passes=$((passes+1))

# A trace without ReadyThread events: its waits are unknown for that, lost records or not (it said "records were
# lost before the switch-ins" and that they "may have held its ReadyThread"), and a wait gate on two damaged such
# traces fails for that (exit 1), not as undecided for the damage (exit 3).
"$etlkit" synth -q --seed 3 --duration 0.5 --buffer-size 4K --no-ready-thread -o "$tmp/nr.etl" || bad "synth --no-ready-thread"
damage "$tmp/nr.etl" "$tmp/nrz.etl" zero 41
"$etlkit" waits "$tmp/nrz.etl" >"$tmp/nrz.out" 2>/dev/null; rc=$?
[ $rc = 3 ] && grep -q "Waits unknown: the trace has no ReadyThread events" "$tmp/nrz.out" &&
  ! grep -q "may have held its ReadyThread" "$tmp/nrz.out" && passes=$((passes+1)) ||
  bad "waits on a damaged trace without ReadyThread: exit $rc, $(grep -i "unknown\|switch-ins" "$tmp/nrz.out" | head -3)"
nrl=$(lost_of "$tmp/nrz.etl")
python3 - "$tmp/nrz.etl" "$nrl" "$etlkit" <<'PY' && passes=$((passes+1)) || bad "ready_lost without ReadyThread: $nrl"
import json, subprocess, sys
# without ReadyThread a switch-in's Ready is lost only with its previous switch-out: at most the rows without one
rows = [json.loads(l) for l in subprocess.run([sys.argv[3], 'switches', '--json', sys.argv[1]], capture_output=True,
                                              text=True).stdout.splitlines() if l.strip()]
no_p = sum(1 for r in rows if not r.get('head') and r.get('new_tid') and 'last_switch_out_ns' not in r)
sys.exit(0 if 0 < int(sys.argv[2]) <= no_p else 1)
PY
head -c 150000 "$tmp/nr.etl" >"$tmp/nrcut.etl"; cp "$tmp/nrcut.etl" "$tmp/nrcut2.etl"
"$etlkit" compare "$tmp/nrcut.etl" "$tmp/nrcut2.etl" -q --fail-if 'wait(total) > +10%' >"$tmp/cmp.out" 2>&1; rc=$?
[ $rc = 1 ] && grep -q "cannot be computed: no wait is known in .*nrcut.etl (no switch-in with a ReadyThread)" "$tmp/cmp.out" &&
  passes=$((passes+1)) || bad "compare of two cut traces without ReadyThread, a wait gate: exit $rc, $(grep 'wait(total)' "$tmp/cmp.out")"

# A CPU with no buffer in a file that misses one mid-file (288d01b took its known end as 0, so every switch-in of
# the trace lost its Ready: waits_known false, ready_lost = every switch-in). Its records, if any, can lie only in
# the missing buffer, flushed long before the end: switch-ins after it keep their Ready. Made by naming CPU 1's
# buffers CPU 4 (the header says 5 processors): CPU 1 is then one the trace never used.
python3 - "$tmp/c.etl" "$tmp/c5.etl" "$tmp/c5z.etl" <<'PY' || bad "relabel CPU 1"
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
o = 0x48
while struct.unpack_from('<I', d, o)[0] != 4096: o += 4  # the logfile header's BufferSize; NumberOfProcessors at +12
assert struct.unpack_from('<I', d, o + 12)[0] == 4
struct.pack_into('<I', d, o + 12, 5)
bufs, o = [], 0
while o + 0x48 <= len(d):
    bufs.append(o); o += struct.unpack_from('<I', d, o)[0]
for o in bufs[1:]:
    v, = struct.unpack_from('<H', d, o + 0x28)
    if v & 0x7FF == 1: struct.pack_into('<H', d, o + 0x28, (v & ~0x7FF) | 4)
open(sys.argv[2], 'wb').write(d)
o = bufs[41]; d[o:o + 4096] = bytes(4096)
open(sys.argv[3], 'wb').write(d)
PY
"$etlkit" switches --json "$tmp/c5.etl" >"$tmp/c5.rows" 2>/dev/null || bad "switches on the relabelled trace"
"$etlkit" switches --json "$tmp/c5z.etl" >"$tmp/c5z.rows" 2>/dev/null
msg=$(same_known "$tmp/c5.rows" "$tmp/c5z.rows" 2>&1) && passes=$((passes+1)) || bad "bufferless CPU: switches: $msg"
"$etlkit" waits --json --top 0 "$tmp/c5z.etl" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
n = d["ready"]["ready_count"] + d["ready_lost"]
sys.exit(0 if d["waits_known"] and d["ready_lost"] < n / 2 else "waits_known %s, ready_lost %d of %d" % (d["waits_known"], d["ready_lost"], n))' &&
  passes=$((passes+1)) || bad "bufferless CPU: every switch-in lost its Ready"
late=$(lost_of "$tmp/c5z.etl" --range 0.3 1); [ "$late" = "$(lost_of "$tmp/zero_41.etl" --range 0.3 1)" ] &&
  passes=$((passes+1)) || bad "bufferless CPU: after the missing buffer's flush, $late lost (the trace with CPU 1: $(lost_of "$tmp/zero_41.etl" --range 0.3 1))"

echo "lost_waits.sh: $passes passed, $fails failed" >&2
[ "$fails" -eq 0 ]
