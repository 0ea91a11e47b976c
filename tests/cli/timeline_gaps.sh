#!/bin/sh
# timeline_gaps.sh ETLKIT - `export --to perfetto|ftrace` of a trace that lost a CPU's records (explore25 F1): a
# buffer missing in the middle of a CPU's data, records passed over (a record that does not frame), the file cut
# short. The thread that ran before the loss is switched out, at the CPU's last record before it, to the unknown
# thread (4294967295, as a compact record's missing thread), which is switched out at the CPU's next switch to its
# old thread: the importers (trace_processor's sched tracker) then show a hole, never that thread running across the
# gap (it was once 31 ms on CPU 1 where the undamaged trace has 23 us), and the switch chain has no mismatch.
# The unknown time of each CPU is at most `cpu`'s (to the microsecond, ftrace's unit): it starts at the CPU's last
# record read, where `cpu` counts from the switch before the loss; the damaged CPU's is within 1 % of `cpu`'s.
# Undamaged: nothing added.
set -u
etlkit=$(readlink -f "$1")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails+1)); }
cd "$tmp" || exit 1

# dmg IN OUT drop|marker|cut CPU: CPU's middle buffer removed / the marker of its 5th record zeroed (the rest of the
# buffer cannot be framed) / the file cut in the middle of that buffer.
dmg() {
  python3 - "$@" <<'PY'
import struct, sys
src, dst, op, cpu = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
d = bytearray(open(src, 'rb').read())
bufs, off = [], 0
while off + 0x48 <= len(d):
    size, = struct.unpack_from('<I', d, off)
    bufs.append((off, size, struct.unpack_from('<H', d, off + 0x28)[0] & 0x7FF))
    if size < 0x48:
        break
    off += size
mine = [b for b in bufs[1:] if b[2] == cpu]
off, size, _ = mine[len(mine) // 2]
if op == 'drop':
    del d[off:off + size]
elif op == 'cut':
    d = d[:off + size // 2]
else:
    o = off + 0x48
    for _ in range(5):
        o += (struct.unpack_from('<H', d, o + 4)[0] + 7) & ~7
    d[o:o + 4] = b'\0\0\0\0'
open(dst, 'wb').write(d)
PY
}

# check.py FTRACE DECODED CPU.json CLEAN_MAX_NS DAMAGED_CPU: the ftrace lines and the Perfetto switches (protoc
# --decode_raw) chain on every CPU, no thread runs longer than the undamaged trace's longest slice, and the damaged
# CPU's unknown time is cpu --json's.
cat >check.py <<'PY'
import json, re, sys, collections
ft, dec, cj, most, dcpu = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3])), int(sys.argv[4]), int(sys.argv[5])
end, U = cj['window']['end_ns'], 4294967295
err = []
def judge(name, sw, unit):
    """sw: (cpu, ns, old, new) in the file's order within a CPU."""
    cur, unk = {}, collections.Counter()
    for c, ns, old, new in sorted(sw, key=lambda x: (x[0], x[1])):
        if c in cur:
            t0, tid = cur[c]
            if tid != old: err.append('%s: cpu %d at %d: switches out %d, %d switched in at %d' % (name, c, ns, old, tid, t0))
            if tid == U: unk[c] += ns - t0
            elif tid != 0 and ns - t0 > most: err.append('%s: cpu %d: tid %d runs %d ns from %d' % (name, c, tid, ns - t0, t0))
        cur[c] = (ns, new)
    for c, (t0, tid) in cur.items():
        if tid == U: unk[c] += end - t0
        elif tid != 0 and end - t0 > most: err.append('%s: cpu %d: tid %d runs %d ns from %d to the end' % (name, c, tid, end - t0, t0))
    want = cj['cpus'][dcpu]['unknown_ns']
    # from the CPU's last record read before the loss: cpu --json counts from the switch before it (a skip's)
    if not want or unk[dcpu] > want + unit or unk[dcpu] < want * 0.99:
        err.append('%s: cpu %d unknown %d ns, cpu --json %d' % (name, dcpu, unk[dcpu], want))
    for x in cj['cpus']:
        if unk[x['cpu']] > x['unknown_ns'] + unit: err.append('%s: cpu %d unknown %d > cpu --json %d' % (name, x['cpu'], unk[x['cpu']], x['unknown_ns']))
rx = re.compile(r'\[(\d+)\] \S+ +(\d+)\.(\d+): sched_switch: .*prev_pid=(\d+) .* next_pid=(\d+) ')
sw = []
for line in open(ft):
    m = rx.search(line)
    if m: sw.append((int(m[1]), int(m[2]) * 10**9 + int(m[3]) * 1000, int(m[4]), int(m[5])))
judge('ftrace', sw, 1000)
# protoc --decode_raw: Trace.packet (1) { etw_events (95) { cpu (1), event (2) { timestamp (1), cpu (4), cswitch (2) { new (1), old (2) } } } }
sw, stack, ev = [], [], None
for line in open(dec):
    t = line.strip()
    if t.endswith('{'):
        stack.append(t.split()[0])
        if stack[-2:] == ['95', '2'] and len(stack) == 3: ev = {}
    elif t == '}':
        if len(stack) == 4 and stack[-3:] == ['95', '2', '2'] and ev is not None: ev['sw'] = True
        if len(stack) == 3 and ev is not None:
            if ev.get('sw'): sw.append((ev['cpu'], ev['ts'], ev['old'], ev['new']))
            ev = None
        stack.pop()
    elif ev is not None and ':' in t:
        k, v = t.split(':', 1)
        v = v.strip()
        if len(stack) == 3 and k == '1': ev['ts'] = int(v)
        elif len(stack) == 3 and k == '4': ev['cpu'] = int(v)
        elif len(stack) == 4 and stack[-1] == '2' and k in ('1', '2'): ev['new' if k == '1' else 'old'] = int(v)
if not sw: err.append('perfetto: no switch decoded')
judge('perfetto', sw, 0)
if err: print('\n'.join(err[:8]))
sys.exit(1 if err else 0)
PY

"$etlkit" synth -q --seed 5 --duration 0.5 --buffer-size 8K -o clean.etl || { bad synth; exit 1; }
"$etlkit" export clean.etl --to sqlite -o clean.db -q
most=$(python3 -c "
import sqlite3; print(sqlite3.connect('clean.db').execute('select max(end_ns - start_ns) from slice where tid != 0 and head = 0').fetchone()[0])")
for kind in drop marker cut; do
  dmg clean.etl $kind.etl $kind 1
  "$etlkit" cpu $kind.etl --json >$kind.json 2>/dev/null
  "$etlkit" export $kind.etl --to ftrace -o $kind.txt -q; rc=$?
  [ $rc -eq 3 ] || bad "$kind: ftrace exit $rc, expected 3"
  "$etlkit" export $kind.etl --to perfetto -o $kind.pftrace -q; rc=$?
  [ $rc -eq 3 ] || bad "$kind: perfetto exit $rc, expected 3"
  if command -v protoc >/dev/null 2>&1; then
    protoc --decode_raw <$kind.pftrace >$kind.dec || bad "$kind: protoc --decode_raw cannot parse the file"
  else
    : >$kind.dec; echo "protoc not found: the Perfetto file's switches not checked"
  fi
  python3 check.py $kind.txt $kind.dec $kind.json "$most" 1 || bad "$kind: above"
  u=$(grep -c 'sched_switch: .*next_pid=4294967295 ' $kind.txt)
  [ "$u" -gt 0 ] || bad "$kind: no switch of the unknown thread"
done
# Undamaged: no unknown thread in either file.
"$etlkit" export clean.etl --to ftrace -o clean.txt -q
[ "$(grep -c 4294967295 clean.txt)" = 0 ] || bad "clean: an unknown thread in the ftrace text"

# The missing buffer's warning gives its neighbours' flush times earlier first (explore25 F6): buffers flushed at
# the session's stop are not in SequenceNumber order (it said "flushed between 0.500006 s and 0.499708 s").
"$etlkit" synth -q --seed 5 --duration 0.5 -o big.etl && dmg big.etl bigdrop.etl drop 1
"$etlkit" info bigdrop.etl 2>&1 >/dev/null | sed -n 's/.*flushed between \([0-9.]*\) s and \([0-9.]*\) s.*/\1 \2/p' >fl
[ -s fl ] || bad "bigdrop: no flush times in the warning"
awk '$1 > $2 { print "FAIL: bigdrop: flushed between " $1 " s and " $2 " s"; exit 1 }' fl || fails=$((fails+1))

# The slice table (sqlite; csv and parquet have the same rows) holds every unknown span as a row with tid NULL, a
# CPU's records ending before the trace (cut, its last buffers missing) too (explore25 F5: no row at all there, so
# summing tid IS NULL gave 0 ns where cpu says 195 ms): per CPU, the NULL rows are cpu --json's unknown time, the
# slices cover the window, and cpu_by_cpu still gives cpu --json's numbers.
for kind in cut marker bigdrop; do
  f=$kind.etl; [ $kind = bigdrop ] || f=$kind.etl
  "$etlkit" cpu $f --json >$kind.json 2>/dev/null
  "$etlkit" export $f --to sqlite -o $kind.db -q
  python3 - $kind.db $kind.json <<'PY' || bad "$kind: slice table, above"
import json, sqlite3, sys
db, cj = sqlite3.connect(sys.argv[1]), json.load(open(sys.argv[2]))
w = cj['window']['end_ns'] - cj['window']['start_ns']
for c in cj['cpus']:
    nul, cov = db.execute('select coalesce(sum(case when tid is null then end_ns - start_ns end), 0), sum(end_ns - start_ns) '
                          'from slice where cpu = ?', (c['cpu'],)).fetchone()
    v = db.execute('select busy_ns, idle_ns, unknown_ns, switches from cpu_by_cpu where cpu = ?', (c['cpu'],)).fetchone()
    if nul != c['unknown_ns'] or cov != w or v != (c['busy_ns'], c['idle_ns'], c['unknown_ns'], c['switches']):
        sys.exit('cpu %d: tid NULL %d ns, slices %d ns of %d, cpu_by_cpu %s; cpu --json %s' % (c['cpu'], nul, cov, w, v, c))
PY
done

# cpu --interval and the report's heat strip tell unknown time from idle (explore25 F4: CPU 1's 31 ms lost read
# 0.00 % busy, the idle colour): per interval, JSON unknown_cpus adds up to cpu --json's unknown per CPU and covers
# the lost span, the text has an Unknown % column, the page hatches the cells (class hu) and says so in the legend.
"$etlkit" cpu drop.etl --interval 2ms --json 2>/dev/null >iv.json
python3 - iv.json drop.json <<'PY' || bad "drop: cpu --interval --json unknown, above"
import json, sys
iv, cj = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for c in cj['cpus']:
    got = sum(i['unknown_cpus'][c['cpu']] for i in iv['intervals'])
    if got != c['unknown_ns']: sys.exit('cpu %d: intervals unknown %d, cpu --json %d' % (c['cpu'], got, c['unknown_ns']))
if any(i['unknown_ns'] != sum(i['unknown_cpus']) for i in iv['intervals']): sys.exit('unknown_ns is not the CPUs\' sum')
full = [i for i in iv['intervals'] if i['unknown_cpus'][1] == i['end_ns'] - i['start_ns']]
if len(full) < 10: sys.exit('CPU 1: %d intervals wholly unknown, expected the ~15 of the lost buffer' % len(full))
PY
"$etlkit" cpu drop.etl --interval 2ms 2>/dev/null | grep -q 'All %  Unknown %' || bad "drop: no Unknown % column"
"$etlkit" cpu clean.etl --interval 2ms 2>/dev/null | grep -q 'Unknown %' && bad "clean: an Unknown % column"
# Unknown time without a loss: the slices --complete-only drops (reviewer70 N1: the note said "records lost").
"$etlkit" cpu clean.etl --interval 2ms --complete-only 2>/dev/null | grep -q "slices dropped by --complete-only" ||
  bad "clean --complete-only: the Unknown % note does not say why"
"$etlkit" report drop.etl -o drop.html -q 2>/dev/null
[ "$(grep -c 'class="hu"' drop.html)" -gt 0 ] || bad "drop: report: no hatched (unknown) heat strip cell"
grep -q 'unknown: more than half' drop.html || bad "drop: report: no legend for the unknown cells"
"$etlkit" report clean.etl -o clean.html -q 2>/dev/null
grep -q 'class="hu"' clean.html && bad "clean: report: a hatched cell"

echo "$fails failed"
[ $fails -eq 0 ]
