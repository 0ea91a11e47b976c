#!/bin/sh
# skipped_records.sh ETLKIT - records the reader passes over inside the file are a gap of their CPU (explore19 F7):
# the rest of a buffer after a record that does not frame, a buffer that cannot be loaded. The slice across them is
# unknown, as across a missing buffer (README "Buffers missing"), never the thread that ran before: once CPU 0 was
# busy 262.7 ms of 300 (one 248 ms slice of a thread), unknown 0. The other CPUs are the undamaged trace's.
# A scheduler record passed over alone is the same loss (explore25 F2): a compact batch whose Size grew (CPU 0 busy
# 103.6 -> 149.7 ms, one 77.5 ms slice of a thread, unknown unchanged), a context switch whose time is outside the
# session, two of them in one buffer (each its own gap).
# Checked on the per-CPU run (cpu) and the time-ordered model (cpu --interval, export's slice table), --threads 1 and 2.
set -u
etlkit=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails+1)); }

# dmg IN OUT marker CPU K: zero the marker of the K-th record of CPU's middle buffer (the rest cannot be framed);
# dmg IN OUT offset CPU D: add D to that buffer's Offset (compressed: more than its payload expands to);
# dmg IN OUT size CPU K: add 0x1000 to the Size of the K-th (from 1) compact batch (0x0525) of that buffer;
# dmg IN OUT time CPU K[,K...]: add 2^40 to the time of the K-th (from 0) context switches (0x0524) of that buffer.
dmg() {
  python3 - "$@" <<'PY'
import struct, sys
src, dst, op, cpu, k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
ks = [int(x) for x in k.split(',')]
k = ks[0]
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
elif op in ('size', 'time'):
    recs, o = [], off + 0x48  # (offset, hook, offset of its time)
    while o + 8 <= off + fill:
        m, = struct.unpack_from('<I', d, o)
        size, hook = struct.unpack_from('<HH', d, o + 4)
        if m == 0xFFFFFFFF or size == 0: break
        ht = (m >> 16) & 0xFF
        recs.append((o, hook, o + 8 if ht in (0x10, 0x11) else o + 0x10))
        o += (size + 7) & ~7
    if op == 'size':
        o = [r[0] for r in recs if r[1] == 0x0525][k - 1]
        struct.pack_into('<H', d, o + 4, struct.unpack_from('<H', d, o + 4)[0] + 0x1000)
    else:
        sw = [r for r in recs if r[1] == 0x0524]
        for i in ks:
            t, = struct.unpack_from('<Q', d, sw[i][2])
            struct.pack_into('<Q', d, sw[i][2], t + (1 << 40))
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
if c['unknown_ns'] < int(sys.argv[4]): sys.exit('cpu %d: the skipped records are not unknown: %s' % (cpu, c))
# What was read is as it was: the time lost is taken from busy or idle, never given to either.
x = u['cpus'][cpu]
if c['busy_ns'] > x['busy_ns'] or c['idle_ns'] > x['idle_ns']:
    sys.exit('cpu %d: the time lost was given to a thread or to idle: %s, undamaged %s' % (cpu, c, x))
PY
cat >"$tmp/slices.py" <<'PY'
import csv, sys
cpu = sys.argv[3]
def long(p):
    return [(int(r['end_ns']) - int(r['start_ns']), r['tid']) for r in csv.DictReader(open(p)) if r['cpu'] == cpu]
most = max(n for n, _ in long(sys.argv[1]))
wrong = [(n, tid) for n, tid in long(sys.argv[2]) if n > most and tid != '']
if wrong: sys.exit('slices across the skipped records given to a thread (ns, tid): %s' % wrong[:3])
# Each gap (GAPS of them, apart) is a slice of no thread more than the undamaged trace has.
nu, nd = (sum(tid == '' for _, tid in long(p)) for p in sys.argv[1:3])
if nd < nu + int(sys.argv[4]): sys.exit('%d slices of no thread, undamaged %d: not one per gap (%s)' % (nd, nu, sys.argv[4]))
PY

# check NAME TRACE DAMAGED CPU TEXT [LEAST [GAPS]]: exit 3 with TEXT told; in cpu (per CPU and, with --interval,
# time-ordered; --threads 1 and 2) CPU's time adds up to the window with at least LEAST ns (1 ms) unknown, its busy
# and idle no more than the undamaged trace's, every other CPU's is the undamaged trace's; in export's slice table no
# slice of CPU longer than the longest of the undamaged trace's has a thread, and GAPS (1) more have none.
check() {
  name=$1 trace=$2 damaged=$3 cpu=$4 text=$5 least=${6:-1000000} gaps=${7:-1}
  for t in "--threads 1" "--threads 2" "--interval 100ms --threads 1" "--interval 100ms --threads 2"; do
    "$etlkit" cpu --json $t "$trace" >"$tmp/u.json" 2>/dev/null || bad "$name: cpu $t on the undamaged trace"
    "$etlkit" cpu --json $t "$damaged" >"$tmp/d.json" 2>"$tmp/err"; rc=$?
    [ "$rc" = 3 ] || bad "$name: cpu $t exit $rc, expected 3"
    grep -q "$text" "$tmp/err" || bad "$name: not told '$text': $(head -c 300 "$tmp/err")"
    msg=$(python3 "$tmp/cpus.py" "$tmp/u.json" "$tmp/d.json" "$cpu" "$least" 2>&1) || bad "$name cpu $t: $msg"
  done
  "$etlkit" export "$trace" --to csv -o "$tmp/u" --force >/dev/null 2>&1 || bad "$name: export of the undamaged trace"
  "$etlkit" export "$damaged" --to csv -o "$tmp/d" --force >/dev/null 2>&1; rc=$?
  [ "$rc" = 3 ] || bad "$name: export exit $rc, expected 3"
  msg=$(python3 "$tmp/slices.py" "$tmp/u/slice.csv" "$tmp/d/slice.csv" "$cpu" "$gaps" 2>&1) || bad "$name export: $msg"
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
# info's check of each CPU's buffer order (2523ff3) knows no record of that buffer: none out of order, one bad buffer
# (it once told a made-up 'record at +0x0 (hook 0x0000)' at time 0, bad_buffers 2).
"$etlkit" info --json "$tmp/z_cut.etl" >"$tmp/zi.json" 2>"$tmp/zi.err"
grep -q "merged at its CPU's time" "$tmp/zi.err" && bad "info z_cut: a buffer out of order told: $(head -c 300 "$tmp/zi.err")"
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["recovery"]["bad_buffers"] != 1)' "$tmp/zi.json" ||
  bad "info z_cut: bad_buffers is not 1"

# A compact batch of CPU 0 passed over for its Size (4892 bytes, its layout's 1128 at most): its switches and those
# its Size covered lost (390), where the CPU's busy time was once 46 ms more, one slice of a thread 77.5 ms.
"$etlkit" synth -o "$tmp/k.etl" --duration 300ms --seed 21 --clock cycles --cswitch compact -q 2>/dev/null || bad "synth k"
dmg "$tmp/k.etl" "$tmp/k_size.etl" size 0 4
check batch "$tmp/k.etl" "$tmp/k_size.etl" 0 "hook 0x0525 version 2) has Size 4892.*not that event; passed over"
# Context switches of CPU 0 passed over for their time: one, then two in the same buffer, far apart (each its gap).
dmg "$tmp/a.etl" "$tmp/a_time.etl" time 0 50
check cswitch "$tmp/a.etl" "$tmp/a_time.etl" 0 "hook 0x0524.*outside the session.*passed over" 1
dmg "$tmp/a.etl" "$tmp/a_time2.etl" time 0 50,400
check cswitch2 "$tmp/a.etl" "$tmp/a_time2.etl" 0 "hook 0x0524.*outside the session.*passed over" 1 2

[ "$fails" = 0 ] && echo "skipped_records: ok" || { echo "skipped_records: $fails failure(s)"; exit 1; }
