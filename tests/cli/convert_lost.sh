#!/bin/sh
# convert_lost.sh ETLKIT - what a session lost survives `etlkit convert`: a buffer flagged EVENTS_LOST or
# BUFFER_LOST in the input gives a buffer of its CPU so flagged in the output (every --cswitch form,
# compressed too), so `spinlocks` of the output still says "no upper bound with events lost" (the flag was
# dropped: the output's bounds read as exact); the logfile header's EventsLost and BuffersLost are kept; a
# trace with no loss gets no flag; --buffer-size: sizes that are not a power of two nor a page multiple
# write a trace read as the input, and sizes out of range or not a multiple of 8 are refused (exit 64).
set -u
etlkit=$1
case $etlkit in /*) ;; *) etlkit=$(pwd)/$etlkit ;; esac
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
command -v python3 >/dev/null 2>&1 || { echo "convert_lost.sh: skipped: no python3"; exit 77; }
cd "$tmp" || exit 1
"$etlkit" synth -q --spinlocks --seed 4 --duration 0.3 -o s.etl || { echo "FAIL: synth"; exit 1; }
# lost.etl: the third buffer flagged EVENTS_LOST (BufferFlag at 0x34 of its header), the fourth BUFFER_LOST,
# the header's counts 0 (the flags alone tell the loss); counted.etl: the logfile header's EventsLost 5 and
# BuffersLost 1 (0x30, 0x114 of its payload: after 0x48 + 0x20).
python3 - s.etl lost.etl counted.etl <<'PY' || { echo "FAIL: patch"; exit 1; }
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
bs = struct.unpack_from('<I', d, 0)[0]
assert len(d) // bs >= 4
for i, f in ((2, 2), (3, 4)):
    o = i * bs + 0x34
    struct.pack_into('<H', d, o, struct.unpack_from('<H', d, o)[0] | f)
open(sys.argv[2], 'wb').write(d)
d = bytearray(open(sys.argv[1], 'rb').read())
h = 0x48 + 0x20
struct.pack_into('<I', d, h + 0x30, 5)
struct.pack_into('<I', d, h + 0x114, 1)
open(sys.argv[3], 'wb').write(d)
PY
# flags FILE: the OR of every buffer's loss flags after buffer 0 (2 EVENTS_LOST, 4 BUFFER_LOST)
flags() {
  python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
o, f = struct.unpack_from('<I', d, 0)[0], 0
while o + 0x48 <= len(d):
    size = struct.unpack_from('<I', d, o)[0]
    f |= struct.unpack_from('<H', d, o + 0x34)[0] & 6
    if size < 0x48: break
    o += size
print(f)
PY
}
[ "$(flags lost.etl)" = 6 ] || fail "the patched input's flags: $(flags lost.etl)"
"$etlkit" spinlocks lost.etl -q | grep -q 'no upper bound with events lost' || fail "spinlocks of the input: no loss"
for args in "" "--cswitch compact" "--cswitch full --compress" "--buffer-size 4104"; do
  rm -f out.etl
  "$etlkit" convert lost.etl -o out.etl -q $args || fail "convert $args"
  [ "$(flags out.etl)" = 6 ] || fail "convert $args: the output's loss flags are $(flags out.etl), not 6"
  "$etlkit" spinlocks out.etl -q | grep -q 'no upper bound with events lost' ||
    fail "convert $args: spinlocks of the output says nothing of the loss"
  rm -f out.etl
  "$etlkit" convert counted.etl -o out.etl -q $args || fail "convert $args of counted.etl"
  "$etlkit" info --json out.etl | python3 -c 'import json,sys; h=json.load(sys.stdin)
assert (h["events_lost"], h["buffers_lost"]) == (5, 1), h' 2>/dev/null || fail "convert $args: the header's counts"
done
rm -f out.etl
"$etlkit" convert s.etl -o out.etl -q || fail "convert of a trace with no loss"
[ "$(flags out.etl)" = 0 ] || fail "a trace with no loss got loss flags"
# --buffer-size: odd sizes read as the input; refusals.
"$etlkit" cpu --json s.etl | sed 's/"file":"[^"]*"//' >cpu0.json
for bs in 4104 12296 65544; do
  rm -f out.etl
  "$etlkit" convert s.etl -o out.etl -q --buffer-size $bs || fail "--buffer-size $bs"
  "$etlkit" cpu --json out.etl | sed 's/"file":"[^"]*"//' >cpu1.json
  cmp -s cpu0.json cpu1.json || fail "--buffer-size $bs: cpu --json differs from the input's"
done
for bs in 4095 4100 16777224 0 -8 99999999999999999999 1e4; do
  "$etlkit" convert s.etl -o refused.etl -q --buffer-size $bs 2>/dev/null; rc=$?
  [ $rc -eq 64 ] || fail "--buffer-size $bs: exit $rc, not 64"
  [ -e refused.etl ] && fail "--buffer-size $bs: an output"
done
[ $fails -eq 0 ] && echo "convert_lost: all checks passed"
[ $fails -eq 0 ]
