#!/bin/sh
# convert_dump.sh ETLKIT - convert and dump --expand judge a compact batch as every reader does (explore12).
# A batch's switches after its buffer's flush (F4), or before their CPU's switch ahead of them (F3, the model's
# time_backwards): dump --expand, convert, cpu and waits tell them at the batch's file offset and exit 3; dump --expand and
# convert --cswitch full pass over what the model passes over (never a switch moved to another time), and
# keep/compact copy the batch as it is, saying so.
set -u
etlkit=$1
here=$(dirname "$0")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails+1)); }

# expanded FILE: the switches dump --expand prints
expanded() { "$etlkit" dump --expand --format jsonl -q "$1" 2>/dev/null | grep -c '"expanded"'; }

"$etlkit" synth -q --seed 21 --duration 1 --buffer-size 16K --cswitch compact -o "$tmp/comp.etl" || bad "synth"
all=$(expanded "$tmp/comp.etl")

# case NAME EXPECT_TEXT DELTA DROPPED: the FirstTimeStamp of CPU 2's middle buffer's 3rd batch moved by DELTA ticks
case_() {
  name=$1; text=$2; delta=$3; dropped=$4
  off=$(python3 "$here/damage.py" "$tmp/comp.etl" "$tmp/$name.etl" first c2 3 "$delta") || { bad "$name: damage.py"; return; }
  "$etlkit" dump --expand --format jsonl "$tmp/$name.etl" >"$tmp/$name.jsonl" 2>"$tmp/$name.err"; rc=$?
  [ "$rc" = 3 ] || bad "$name: dump --expand exit $rc, expected 3"
  grep -q "file offset $off.*$text" "$tmp/$name.err" || bad "$name: dump: no warning '$text' at $off: $(head -c 300 "$tmp/$name.err")"
  n=$(grep -c '"expanded"' "$tmp/$name.jsonl")
  [ "$n" = $((all - dropped)) ] || bad "$name: dump --expand printed $n switches, expected $((all - dropped))"
  for m in keep compact full; do
    "$etlkit" convert --cswitch $m "$tmp/$name.etl" -o "$tmp/$name.$m.etl" 2>"$tmp/$name.$m.err"; rc=$?
    [ "$rc" = 3 ] || bad "$name: convert --cswitch $m exit $rc, expected 3"
    case $m in full) fate="passed over|dropped" ;; *) fate="copied as it is" ;; esac
    grep -q "file offset $off.*$text.*" "$tmp/$name.$m.err" && grep -Eq "$fate" "$tmp/$name.$m.err" ||
      bad "$name: convert --cswitch $m: no warning '$text' ($fate) at $off: $(head -c 300 "$tmp/$name.$m.err")"
  done
  # The reports tell the same damage at the same offset (cpu exited 0 on the batch going back, silently).
  for r in cpu waits; do
    "$etlkit" $r "$tmp/$name.etl" >/dev/null 2>"$tmp/$name.$r.err"; rc=$?
    [ "$rc" = 3 ] || bad "$name: $r exit $rc, expected 3"
    grep -q "file offset $off" "$tmp/$name.$r.err" || bad "$name: $r: no warning at $off: $(head -c 300 "$tmp/$name.$r.err")"
  done
  # The full output holds what the model takes, at the times the file gives, and a SequenceNumber missing after the
  # damaged batch's buffer (9edb730: its readers find the loss, exit 3): cpu answers as on the input but for the
  # span that hole makes unknown (no CPU busy or idle more, no thread running more).
  "$etlkit" cpu --json "$tmp/$name.etl" >"$tmp/$name.in.json" 2>/dev/null
  "$etlkit" cpu --json "$tmp/$name.full.etl" >"$tmp/$name.out.json" 2>/dev/null; rc=$?
  [ "$rc" = 3 ] || bad "$name: cpu of the full output exit $rc, expected 3"
  msg=$(python3 - "$tmp/$name.in.json" "$tmp/$name.out.json" <<'PY' 2>&1
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
if a['window'] != b['window'] or len(a['cpus']) != len(b['cpus']): sys.exit('window or CPUs differ')
for x, y in zip(a['cpus'], b['cpus']):
    if y['busy_ns'] > x['busy_ns'] or y['idle_ns'] > x['idle_ns'] or y['unknown_ns'] < x['unknown_ns'] or \
       y['busy_ns'] + y['idle_ns'] + y['unknown_ns'] != x['busy_ns'] + x['idle_ns'] + x['unknown_ns']:
        sys.exit('cpu %d: %s -> %s' % (x['cpu'], x, y))
ta = {t['tid']: t['cpu_ns'] for t in a['threads']}
more = [t['tid'] for t in b['threads'] if t['cpu_ns'] > ta.get(t['tid'], 0)]
if more: sys.exit('threads running more than in the input: %s' % more[:5])
PY
) || bad "$name: $msg"
  n=$(expanded "$tmp/$name.full.etl"); c=$("$etlkit" dump --format jsonl --filter CSwitch -q "$tmp/$name.full.etl" | grep -c .)
  [ "$c" = $((all - dropped)) ] || bad "$name: convert --cswitch full wrote $c CSwitch events, expected $((all - dropped))"
  # No switch moved: every time of the full output is a time of the input's switches.
  "$etlkit" dump --format jsonl --filter CSwitch -q "$tmp/$name.full.etl" | sed 's/.*"ts":\([0-9]*\).*/\1/' | sort >"$tmp/$name.t1"
  sed 's/.*"ts":\([0-9]*\).*/\1/' "$tmp/$name.jsonl" | sort >"$tmp/$name.t2"
  [ -z "$(comm -23 "$tmp/$name.t1" "$tmp/$name.t2")" ] || bad "$name: convert --cswitch full wrote switch times the input does not have"
}

# 0.5 s later: the batch's switches run past their buffer's flush (cpu drops them: 157).
case_ late "after its buffer was flushed" 5000000 157
# 5 ms earlier: 25 switches go back before their CPU's switch ahead of them (the model passes them over).
case_ back "before its CPU's switch ahead of it" -50000 25

# A buffer the session wrote that is not in the file (CPU 1's middle one cut out): convert tells it (exit 3), and the
# output misses its SequenceNumber too, so that its readers are told as the input's were (explore12 F7: it read
# complete); its header's BuffersLost stays the session's own (it once added the buffer: cli/convert_gaps).
"$etlkit" synth -q --seed 11 --duration 1 --buffer-size 16K -o "$tmp/base.etl" || bad "synth base"
python3 - "$tmp/base.etl" "$tmp/cut.etl" <<'PY' || bad "cut a buffer"
import struct, sys
d = open(sys.argv[1], 'rb').read()
bufs, off = [], 0
while off + 0x48 <= len(d):
    size, = struct.unpack_from('<I', d, off)
    bufs.append((off, size, struct.unpack_from('<H', d, off + 0x28)[0] & 0x7FF))
    off += size
mine = [b for b in bufs[1:] if b[2] == 1]
o, n, _ = mine[len(mine) // 2]
open(sys.argv[2], 'wb').write(d[:o] + d[o + n:])
PY
"$etlkit" convert -q "$tmp/cut.etl" -o "$tmp/cut.out.etl"; rc=$?
[ "$rc" = 3 ] || bad "cut: convert exit $rc, expected 3"
"$etlkit" info "$tmp/cut.out.etl" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" = 3 ] && grep -q "1 buffer the session wrote (SequenceNumber .*) not in the file" "$tmp/err" ||
  bad "cut: the output's missing buffer not told (info exit $rc): $(cat "$tmp/err")"
lost=$("$etlkit" info --json "$tmp/cut.out.etl" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["buffers_lost"])')
[ "$lost" = 0 ] || bad "cut: the output's BuffersLost is $lost, expected the input's 0"
lost=$("$etlkit" info --json "$tmp/base.etl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["buffers_lost"])')
[ "$lost" = 0 ] || bad "base: BuffersLost $lost"

# convert --cswitch compact says what the compact records could not hold as it was (the encoder's counts in
# etl_convert_stats, once printed nowhere): CSwitch events with an old thread priority of 40, a NewThreadWaitTime of
# 2^20 and a wait reason of 60 while Waiting (past the bias) each give a note; a trace without them none.
"$etlkit" synth -q --seed 7 --duration 1 --cpus 4 -o "$tmp/plain.etl" || bad "synth plain"
python3 - "$tmp/plain.etl" "$tmp/clamp.etl" <<'PY' || bad "clamp: patch"
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
off, n = 0, 0
while off + 0x48 <= len(d):
    size, end = struct.unpack_from('<I', d, off)[0], struct.unpack_from('<I', d, off + 0x30)[0]
    p = off + 0x48
    while off and p + 0x10 <= off + end:
        marker, rsz, hook = struct.unpack_from('<IHH', d, p)
        if rsz < 8 or marker == 0xFFFFFFFF: break
        q = p + 0x10 # a CSwitch v2 payload: OldThreadPriority +9, OldThreadWaitReason +12, OldThreadState +14,
        if (marker >> 16) & 0xFF == 0x11 and hook == 0x0524 and d[q + 14] == 5: # NewThreadWaitTime +16
            if n < 5: d[q + 9] = 40
            elif n < 10: struct.pack_into('<I', d, q + 16, 1 << 20)
            elif n < 15: d[q + 12] = 60
            n += 1
        p += (rsz + 7) & ~7
    off += size
open(sys.argv[2], 'wb').write(d)
sys.exit(n < 15)
PY
"$etlkit" convert --cswitch compact "$tmp/clamp.etl" -o "$tmp/clamp.out.etl" 2>"$tmp/err" || bad "clamp: convert exit $?"
grep -q "note: [1-9][0-9]* switch.* with an old thread priority outside 0..31, written as 0 or 31" "$tmp/err" ||
  bad "clamp: no note of the priorities: $(cat "$tmp/err")"
grep -q "note: [1-9][0-9]* switch.* with a NewThreadWaitTime past 131071 .*, written as 131071" "$tmp/err" ||
  bad "clamp: no note of the wait times: $(cat "$tmp/err")"
grep -q "note: [1-9][0-9]* switch.* waiting for a reason at or past the StateWr bias (from the OS build)" "$tmp/err" ||
  bad "clamp: no note of the wait reasons: $(cat "$tmp/err")"
"$etlkit" convert -q --cswitch compact "$tmp/clamp.etl" -o "$tmp/clamp.q.etl" 2>"$tmp/err"
[ -s "$tmp/err" ] && bad "clamp: --quiet printed $(cat "$tmp/err")"
"$etlkit" convert --cswitch compact "$tmp/plain.etl" -o "$tmp/plain.out.etl" 2>"$tmp/err"
grep -q "note:" "$tmp/err" && bad "clamp: a note without a clamp: $(cat "$tmp/err")"

# dump (explore12 F9): --format text prints the PMC counters and the PEBS index jsonl and csv print; --expand
# --filter CSwitch keeps the expanded switches (they are CSwitch events), every one of them.
"$etlkit" synth -q --seed 3 --pmc 2 --duration 0.1 -o "$tmp/pmc.etl" || bad "synth --pmc"
"$etlkit" dump --filter CSwitch --limit 1 "$tmp/pmc.etl" | grep -q ' pmc=\[[0-9]*,[0-9]*\]' ||
  bad "dump --format text: no pmc=[a,b]: $("$etlkit" dump --filter CSwitch --limit 1 "$tmp/pmc.etl")"
n=$("$etlkit" dump --expand --filter CSwitch --format jsonl "$tmp/comp.etl" | grep -c '"expanded"')
[ "$n" = "$all" ] || bad "dump --expand --filter CSwitch printed $n switches, expected $all"

[ "$fails" = 0 ] || { echo "$fails failures" >&2; exit 1; }
echo "convert_dump: ok"
