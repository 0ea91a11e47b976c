#!/bin/sh
# skipped_records.sh ETLKIT - records the reader passes over inside the file are a gap of their CPU (explore19 F7):
# the rest of a buffer after a record that does not frame, a buffer that cannot be loaded. The slice across them is
# unknown, as across a missing buffer (README "Buffers missing"), never the thread that ran before: once CPU 0 was
# busy 262.7 ms of 300 (one 248 ms slice of a thread), unknown 0. The other CPUs are the undamaged trace's.
# Checked on the per-CPU run (cpu) and the time-ordered model (cpu --interval, export's slice table), --threads 1 and 2.
set -u
etlkit=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails+1)); }

# dmg IN OUT marker CPU K: zero the marker of the K-th record of CPU's middle buffer (the rest cannot be framed);
# dmg IN OUT offset CPU D: add D to that buffer's Offset (compressed: more than its payload expands to).
dmg() {
  python3 - "$@" <<'PY'
import struct, sys
src, dst, op, cpu, k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
d = bytearray(open(src, 'rb').read())
bufs, off = [], 0
while off + 0x48 <= len(d):
    size, = struct.unpack_from('<I', d, off)
    bufs.append((off, struct.unpack_from('<H', d, off + 0x28)[0] & 0x7FF, struct.unpack_from('<I', d, off + 0x30)[0]))
    if size < 0x48:
        break
    off += size
mine = [b for b in bufs[1:] if b[1] == cpu]
off, _, fill = mine[len(mine) // 2]
if op == 'marker':
    o = off + 0x48
    for _ in range(k):
        o += (struct.unpack_from('<H', d, o + 4)[0] + 7) & ~7
    d[o:o + 4] = b'\0\0\0\0'
else:
    struct.pack_into('<I', d, off + 0x30, fill + k)
open(dst, 'wb').write(d)
PY
}

cat >"$tmp/cpus.py" <<'PY'
import json, sys
u, d, cpu = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
# The records lost may have been the trace's last: the window ends sooner, and so do the other CPUs' last slices.
short = u['window']['end_ns'] - d['window']['end_ns']
for x, y in zip(u['cpus'], d['cpus']):
    if x['cpu'] != cpu and (x['switches'] != y['switches'] or
                            any(not 0 <= x[k] - y[k] <= short for k in ('busy_ns', 'idle_ns', 'unknown_ns'))):
        sys.exit('cpu %d: %s != %s' % (x['cpu'], x, y))
c = d['cpus'][cpu]
if c['busy_ns'] + c['idle_ns'] + c['unknown_ns'] != d['window']['end_ns'] - d['window']['start_ns']:
    sys.exit('cpu %d does not add up to the window %s: %s' % (cpu, d['window'], c))
if c['unknown_ns'] < 1000000: sys.exit('cpu %d: the skipped records are not unknown: %s' % (cpu, c))
PY
cat >"$tmp/slices.py" <<'PY'
import csv, sys
cpu = sys.argv[3]
def long(p):
    return [(int(r['end_ns']) - int(r['start_ns']), r['tid']) for r in csv.DictReader(open(p)) if r['cpu'] == cpu]
most = max(n for n, _ in long(sys.argv[1]))
wrong = [(n, tid) for n, tid in long(sys.argv[2]) if n > most and tid != '']
if wrong: sys.exit('slices across the skipped records given to a thread (ns, tid): %s' % wrong[:3])
PY

# check NAME TRACE DAMAGED CPU TEXT: exit 3 with TEXT told; in cpu (per CPU and, with --interval, time-ordered;
# --threads 1 and 2) CPU's time adds up
# to the window with at least 1 ms unknown, every other CPU's is the undamaged trace's; in export's slice table no
# slice of CPU longer than the longest of the undamaged trace's has a thread.
check() {
  name=$1 trace=$2 damaged=$3 cpu=$4 text=$5
  for t in "--threads 1" "--threads 2" "--interval 100ms --threads 1" "--interval 100ms --threads 2"; do
    "$etlkit" cpu --json $t "$trace" >"$tmp/u.json" 2>/dev/null || bad "$name: cpu $t on the undamaged trace"
    "$etlkit" cpu --json $t "$damaged" >"$tmp/d.json" 2>"$tmp/err"; rc=$?
    [ "$rc" = 3 ] || bad "$name: cpu $t exit $rc, expected 3"
    grep -q "$text" "$tmp/err" || bad "$name: not told '$text': $(head -c 300 "$tmp/err")"
    msg=$(python3 "$tmp/cpus.py" "$tmp/u.json" "$tmp/d.json" "$cpu" 2>&1) || bad "$name cpu $t: $msg"
  done
  "$etlkit" export "$trace" --to csv -o "$tmp/u" --force >/dev/null 2>&1 || bad "$name: export of the undamaged trace"
  "$etlkit" export "$damaged" --to csv -o "$tmp/d" --force >/dev/null 2>&1; rc=$?
  [ "$rc" = 3 ] || bad "$name: export exit $rc, expected 3"
  msg=$(python3 "$tmp/slices.py" "$tmp/u/slice.csv" "$tmp/d/slice.csv" "$cpu" 2>&1) || bad "$name export: $msg"
}

# The rest of CPU 0's only buffer (CSwitch events, 32-bit, cycle clock): its time after the last switch read.
"$etlkit" synth -o "$tmp/a.etl" --cswitch full --duration 300ms --seed 22 --clock cycles --pointer-size 32 -q 2>/dev/null ||
  bad "synth a"
dmg "$tmp/a.etl" "$tmp/a_cut.etl" marker 0 300
check tail "$tmp/a.etl" "$tmp/a_cut.etl" 0 "not a valid trace header.*rest of buffer skipped"
# The rest of one of CPU 1's twenty 4 KiB buffers: a slice between two switches.
"$etlkit" synth -o "$tmp/m.etl" --cswitch full --duration 300ms --seed 23 --buffer-size 4K -q 2>/dev/null || bad "synth m"
dmg "$tmp/m.etl" "$tmp/m_cut.etl" marker 1 10
check middle "$tmp/m.etl" "$tmp/m_cut.etl" 1 "not a valid trace header.*rest of buffer skipped"
# A compressed buffer of CPU 1 (compact batches) that cannot be expanded: passed over whole.
"$etlkit" synth -o "$tmp/z.etl" --duration 300ms --seed 23 --buffer-size 4K --compress -q 2>/dev/null || bad "synth z"
dmg "$tmp/z.etl" "$tmp/z_cut.etl" offset 1 64
check whole "$tmp/z.etl" "$tmp/z_cut.etl" 1 "claims more event data than the session's BufferSize"

[ "$fails" = 0 ] && echo "skipped_records: ok" || { echo "skipped_records: $fails failure(s)"; exit 1; }
