#!/bin/sh
# convert_lost_place.sh ETLKIT - where `etlkit convert` puts an input buffer's EVENTS_LOST / BUFFER_LOST flag: on
# the output buffer of the same CPU that holds that CPU's first record at or after the flagged buffer's first record
# (for a flagged buffer with no record: the CPU's next record), or, when that CPU writes nothing from there on, on
# an empty buffer of that CPU after its last one. Each flagged input buffer flags one output buffer, so `info` of
# input and output say the same "Buffers flagged", and `spinlocks` of the output says its bounds are open.
# Cases (a synth trace, buffers flagged by hand): (A) a CPU's second buffer, whose first record flushes the CPU's
# full first buffer (the flag went on that older buffer too); (B) a CPU's last buffer emptied (no records: its flag
# never reached the output); (C) a CPU's first buffer emptied (its flag goes to the CPU's next record's buffer); (D)
# a CPU's first buffer emptied and its second flagged (two losses before one record: an empty buffer, then the
# record's); and all four at once. Output buffers of 1 MiB hold several input buffers: each loss still begins one.
set -u
etlkit=$1
case $etlkit in /*) ;; *) etlkit=$(pwd)/$etlkit ;; esac
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
command -v python3 >/dev/null 2>&1 || { echo "convert_lost_place.sh: skipped: no python3"; exit 77; }
cd "$tmp" || exit 1
"$etlkit" synth -q --spinlocks --seed 4 --duration 0.6 -o s.etl || { echo "FAIL: synth"; exit 1; }
"$etlkit" synth -q --spinlocks --seed 4 --duration 1.5 --cswitch compact -o c.etl || { echo "FAIL: synth"; exit 1; }

# patch IN OUT CASES: the buffer header fields (container.md §2): Offset 0x30 (0x48: empty), BufferFlag 0x34,
# ProcessorIndex 0x28 (PROC_INDEX form). CASES: letters of the cases above to make.
patch() {
  python3 - "$@" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
cases = sys.argv[3]
bs = struct.unpack_from('<I', d, 0)[0]
assert len(d) % bs == 0
by_cpu = {}
for i in range(1, len(d) // bs):
    by_cpu.setdefault(struct.unpack_from('<H', d, i * bs + 0x28)[0], []).append(i)
multi = [c for c in sorted(by_cpu) if len(by_cpu[c]) >= 2]
assert len(multi) >= 4, by_cpu
def flag(i, f, empty=False):
    o = i * bs
    struct.pack_into('<H', d, o + 0x34, struct.unpack_from('<H', d, o + 0x34)[0] | f)
    if empty:
        struct.pack_into('<I', d, o + 0x30, 0x48)
        d[o + 0x48:o + bs] = b'\xff' * (bs - 0x48)
if 'A' in cases: flag(by_cpu[multi[0]][1], 2)
if 'B' in cases: flag(by_cpu[multi[1]][-1], 4, True)
if 'C' in cases: flag(by_cpu[multi[2]][0], 6, True)
if 'D' in cases:
    flag(by_cpu[multi[3]][0], 2, True)
    flag(by_cpu[multi[3]][1], 4)
open(sys.argv[2], 'wb').write(d)
PY
}

# check IN OUT: every flagged input buffer's flags are on the output buffer its rule names (above); prints what fails.
check() {
  "$etlkit" dump -q --order file --format jsonl "$1" >in.jsonl
  "$etlkit" dump -q --order file --format jsonl "$2" >out.jsonl
  python3 - "$1" "$2" in.jsonl out.jsonl <<'PY'
import json, struct, sys
def bufs(path):
    d = open(path, 'rb').read()
    v, o = [], 0
    while o + 0x48 <= len(d):
        size = struct.unpack_from('<I', d, o)[0]
        v.append({'cpu': struct.unpack_from('<H', d, o + 0x28)[0], 'flags': struct.unpack_from('<H', d, o + 0x34)[0] & 6,
                  'ts': []})
        if size < 0x48: break
        o += size
    return v
def load(path, jl):
    v = bufs(path)
    for line in open(jl):
        r = json.loads(line)
        v[r['buf']]['ts'].append(r['ts'])
    return v
inb, outb = load(sys.argv[1], sys.argv[3]), load(sys.argv[2], sys.argv[4])
bad = 0
for j, b in enumerate(inb):
    if not b['flags'] or j == 0: continue
    c = b['cpu']
    later = [t for k in range(j, len(inb)) if inb[k]['cpu'] == c for t in inb[k]['ts']]
    mine = [k for k, o in enumerate(outb) if k and o['cpu'] == c]
    if later:
        T = min(later)
        at = [i for i, k in enumerate(mine) if any(t >= T for t in outb[k]['ts'])]
        if at:  # that buffer, or an empty one right before it (another loss before the same record)
            i = at[0]
            while i and not outb[mine[i - 1]]['ts']: i -= 1
            want = mine[i:at[0] + 1]
        else:
            want = []
    else:  # an empty buffer after the CPU's last record
        want = [k for k in mine if not outb[k]['ts'] and all(not outb[m]['ts'] for m in mine if m > k)]
    if not any((outb[k]['flags'] & b['flags']) == b['flags'] for k in want):
        print('input buffer %d (CPU %u, flags %d): output buffers %s have flags %s' %
              (j, c, b['flags'], want, [outb[k]['flags'] for k in want]))
        bad += 1
sys.exit(1 if bad else 0)
PY
}
info_flags() {
  "$etlkit" info --json "$1" 2>/dev/null | python3 -c 'import json,sys; h=json.load(sys.stdin)
print(h["buffers_flagged_events_lost"], h["buffers_flagged_buffer_lost"])'
}

for src in s c; do
  for k in A B C D ABCD; do patch $src.etl $src-$k.etl $k || { echo "FAIL: patch"; exit 1; }; done
  "$etlkit" spinlocks -q $src-B.etl | grep -q 'no upper bound with events lost' || fail "$src-B.etl: spinlocks says no loss"
  for args in "" "--cswitch compact" "--cswitch full --compress" "--buffer-size 4104" "--buffer-size 1048576"; do
    for in in $src-A $src-B $src-C $src-D $src-ABCD; do
      rm -f out.etl
      "$etlkit" convert $in.etl -o out.etl -q $args || { fail "convert $in $args"; continue; }
      msg=$(check $in.etl out.etl) || fail "convert $in.etl $args: $msg"
      [ "$(info_flags out.etl)" = "$(info_flags $in.etl)" ] ||
        fail "convert $in.etl $args: info's Buffers flagged $(info_flags out.etl), the input's $(info_flags $in.etl)"
      "$etlkit" spinlocks -q out.etl | grep -q 'no upper bound with events lost' ||
        fail "convert $in.etl $args: spinlocks of the output says nothing of the loss"
    done
  done
done
# A file missing a buffer (the one before B's emptied one, of its CPU): the output misses its number too, and
# B's empty buffer is numbered after it, as the input's is: cpu reads the output as the input (the hole's place).
python3 - s-ABCD.etl gap.etl <<'PY' || { echo "FAIL: patch gap"; exit 1; }
import struct, sys
d = open(sys.argv[1], 'rb').read()
bs = struct.unpack_from('<I', d, 0)[0]
by_cpu = {}
for i in range(1, len(d) // bs):
    by_cpu.setdefault(struct.unpack_from('<H', d, i * bs + 0x28)[0], []).append(i)
i = by_cpu[[c for c in sorted(by_cpu) if len(by_cpu[c]) >= 2][1]][-2]
open(sys.argv[2], 'wb').write(d[:i * bs] + d[(i + 1) * bs:])
PY
for args in "" "--cswitch full --compress"; do
  rm -f out.etl
  "$etlkit" convert gap.etl -o out.etl -q $args 2>/dev/null; rc=$?
  [ $rc -eq 3 ] || fail "convert gap.etl $args: exit $rc, not 3"
  msg=$(check gap.etl out.etl) || fail "convert gap.etl $args: $msg"
  [ "$(info_flags out.etl)" = "$(info_flags gap.etl)" ] ||
    fail "convert gap.etl $args: info's Buffers flagged $(info_flags out.etl), the input's $(info_flags gap.etl)"
  "$etlkit" cpu gap.etl 2>/dev/null | sed 1d >cpu0.txt
  "$etlkit" cpu out.etl 2>/dev/null | sed 1d >cpu1.txt
  cmp -s cpu0.txt cpu1.txt || fail "convert gap.etl $args: cpu differs from the input's: $(diff cpu0.txt cpu1.txt)"
done
[ $fails -eq 0 ] && echo "convert_lost_place: all checks passed"
[ $fails -eq 0 ]
