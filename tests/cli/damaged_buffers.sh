#!/bin/sh
# damaged_buffers.sh ETLKIT - damage to one buffer's header costs at most that buffer (explore6 F4, F5, F6).
# Each case: exit 3, a warning with the buffer's file offset, and the answers of what the damage did not touch
# equal to the undamaged trace's.
set -u
etlkit=$1
here=$(dirname "$0")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails+1)); }

records() { "$etlkit" info --json "$1" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])'; }

# A compressed file's buffers each have their own BufferSize: one a little off (or a bit flipped) once lost
# every buffer after it ("cut short"; 95 % of the real PerfView sample). The chain of sizes finds the next one.
"$etlkit" synth --seed 7 --pmc 2 --compress -o "$tmp/z.etl" 2>/dev/null || bad "synth --compress"
want=$(records "$tmp/z.etl")
for delta in -1 1 8 4096 -8192; do
  off=$(python3 "$here/damage.py" "$tmp/z.etl" "$tmp/zb.etl" bsize c2 "$delta") || { bad "damage.py bsize"; continue; }
  "$etlkit" info "$tmp/zb.etl" >/dev/null 2>"$tmp/err"; rc=$?
  [ "$rc" = 3 ] || bad "bsize $delta: info exit $rc, expected 3"
  grep -q "offset $off: BufferSize .* does not lead to the next buffer" "$tmp/err" || bad "bsize $delta: $(head -c 300 "$tmp/err")"
  got=$(records "$tmp/zb.etl")
  [ "$got" = "$want" ] || bad "bsize $delta: $got records, expected $want"
done
sample=${2:-}
if [ -n "$sample" ] && [ -f "$sample/perfview-x64-compressed.etl" ]; then
  want=$(records "$sample/perfview-x64-compressed.etl")
  python3 "$here/damage.py" "$sample/perfview-x64-compressed.etl" "$tmp/pv.etl" bsize 5 -1 >/dev/null
  got=$(records "$tmp/pv.etl")
  [ "$got" = "$want" ] || bad "perfview bsize -1: $got records, expected $want"
fi

# same_cpus A.json B.json [CPU]: window, CPU count and every CPU (but CPU) equal
same_cpus() {
  python3 - "$@" <<'PY' || return 1
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
skip = int(sys.argv[3]) if len(sys.argv) > 3 else -1
if a['window'] != b['window']: sys.exit('window %s != %s' % (a['window'], b['window']))
if a['num_cpus'] != b['num_cpus']: sys.exit('cpus %s != %s' % (a['num_cpus'], b['num_cpus']))
for x, y in zip(a['cpus'], b['cpus']):
    if x['cpu'] != skip and x != y: sys.exit('cpu %d: %s != %s' % (x['cpu'], x, y))
PY
}

# case NAME TEXT CPU DAMAGE...: exit 3, TEXT told at the damaged buffer's offset, the CPUs but CPU (-1: all) as
# undamaged.
"$etlkit" synth --seed 7 --pmc 2 -o "$tmp/u.etl" 2>/dev/null || bad "synth"
"$etlkit" cpu --json "$tmp/u.etl" >"$tmp/u.json" 2>/dev/null || bad "cpu on the undamaged trace"
case_() {
  name=$1; text=$2; cpu=$3; shift 3
  off=$(python3 "$here/damage.py" "$tmp/u.etl" "$tmp/$name.etl" "$@") || { bad "$name: damage.py"; return; }
  "$etlkit" cpu --json "$tmp/$name.etl" >"$tmp/$name.json" 2>"$tmp/$name.err"; rc=$?
  [ "$rc" = 3 ] || bad "$name: cpu exit $rc, expected 3"
  grep -q "offset $off: .*$text" "$tmp/$name.err" || bad "$name: no '$text' at $off: $(head -c 300 "$tmp/$name.err")"
  msg=$(same_cpus "$tmp/u.json" "$tmp/$name.json" "$cpu" 2>&1) || bad "$name: $msg"
}
# A ProcessorIndex past the header's NumberOfProcessors: once a phantom CPU 68 % busy and CPU 3 133 ms too busy.
case_ proc "ProcessorIndex 36, but the machine has 4 processors" 3 proc c3 36
case_ proc2047 "ProcessorIndex 2047" 3 proc c3 2047
# An impossible SequenceNumber: the buffer once sorted last on its CPU (a 1 s ready delay that never happened).
case_ seq "SequenceNumber 281474976710655 is impossible" -1 seq c3 281474976710655
# A buffer written twice: once counted twice.
case_ dup "a copy of buffer" -1 dup c3

# BufferFlag EVENTS_LOST and BUFFER_LOST (0x02, 0x04 at 0x34): the session lost events while recording, which is not
# damage of the file (exit 0), as the header's EventsLost; info counts the buffers so flagged.
python3 - "$tmp/u.etl" "$tmp/flag.etl" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
struct.pack_into('<H', d, 10 * 0x10000 + 0x34, struct.unpack_from('<H', d, 10 * 0x10000 + 0x34)[0] | 0x6)
struct.pack_into('<H', d, 12 * 0x10000 + 0x34, struct.unpack_from('<H', d, 12 * 0x10000 + 0x34)[0] | 0x2)
open(sys.argv[2], 'wb').write(d)
PY
"$etlkit" info "$tmp/flag.etl" >"$tmp/flag.txt" 2>&1; rc=$?
[ "$rc" = 0 ] || bad "flags: info exit $rc, expected 0"
grep -q "^Buffers flagged: *2 EVENTS_LOST, 1 BUFFER_LOST" "$tmp/flag.txt" || bad "flags: $(grep -i flagged "$tmp/flag.txt")"
"$etlkit" info --json "$tmp/flag.etl" | grep -q '"buffers_flagged_events_lost":2,"buffers_flagged_buffer_lost":1' ||
  bad "flags: --json keys"
"$etlkit" info "$tmp/u.etl" | grep -q "Buffers flagged" && bad "flags: a clean trace has a Buffers flagged line"

[ $fails -eq 0 ] && echo "damaged_buffers: all passed" && exit 0
echo "damaged_buffers: $fails failed" >&2; exit 1
