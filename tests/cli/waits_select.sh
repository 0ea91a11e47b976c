#!/bin/sh
# waits_select.sh ETLKIT - `waits --thread T` and `--process P` count the selected threads alone in every member
# (explore9 F1: ready, by_reason, longest_waits and longest_ready were the whole machine's): the ready totals and
# the waits by reason add up to the threads listed, the longest intervals are theirs, the text's sections say the
# same, and `waits --by stack` with the same selection has the same totals, as the README promises.
set -u
etlkit=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null 2>&1 || { echo "waits_select.sh: skipped: no python3 to read the JSON"; exit 77; }
fails=0
t="$tmp/t.etl"
"$etlkit" synth --quiet --stacks --cswitch full --stack-form both --seed 5 --duration 0.5 -o "$t" ||
  { echo "FAIL: synth" >&2; exit 1; }
# A busy thread and a process of several threads, picked from the trace itself (not the whole machine's).
"$etlkit" waits "$t" --json --top 0 > "$tmp/all.json" || { echo "FAIL: waits" >&2; exit 1; }
set -- $(python3 - "$tmp/all.json" <<'PY'
import json, sys, collections
w = json.load(open(sys.argv[1]))
th = [t for t in w['threads'] if t['wait_count']]
by_pid = collections.Counter(t['pid'] for t in th)
pid = max((n, p) for p, n in by_pid.items() if p is not None)[1]
tid = max(th, key=lambda t: t['wait_count'])['tid']
name = next(t['process'] for t in th if t['pid'] == pid)
print(tid, pid, name.split('.')[0], len(w['threads']))
PY
)
tid=$1; pid=$2; pname=$3; nall=$4
# The trace without the buffer of its start rundown (Thread DCStart): threads first seen in a switch are adopted
# by the DCEnd at the end, and count to their process in every member and in --by stack alike (exit 3: damaged).
python3 - "$t" "$tmp/cut.etl" <<'PY' || { echo "FAIL: cutting the rundown" >&2; exit 1; }
import struct, sys
d = open(sys.argv[1], 'rb').read(); out = bytearray(); o = 0; n = 0
while o + 0x48 <= len(d):
    size, fill = struct.unpack_from('<I', d, o)[0], struct.unpack_from('<I', d, o + 0x30)[0]
    if size < 0x48: break
    r, end, rundown = o + 0x48, o + min(fill, size), False
    while r + 8 <= end:
        m = struct.unpack_from('<I', d, r)[0]
        if m == 0xffffffff: break
        ht = (m >> 16) & 0xff
        if ht in (1, 2, 3, 4, 0x10, 0x11): size_r, hook = struct.unpack_from('<HH', d, r + 4)
        else: size_r, hook = m & 0xffff, None
        rundown |= ht in (1, 2) and hook == 0x0503
        if size_r == 0: break
        r += (size_r + 7) & ~7
    if rundown: n += 1
    else: out += d[o:o + size]
    o += size
open(sys.argv[2], 'wb').write(out)
sys.exit(0 if n else 1)
PY
for sel in "--thread $tid" "--process $pid" "--process $pname" "--process $pid --range 0.1 0.3" \
           "--thread $tid --range 0.05 0.45" "cut --process $pid" "cut --process $pname"; do
  tr=$t; ok=0
  case $sel in cut*) tr=$tmp/cut.etl; ok=3; sel=${sel#cut };; esac
  # shellcheck disable=SC2086
  "$etlkit" waits "$tr" --json --top 0 --longest 100000 $sel > "$tmp/w.json" 2>/dev/null; r1=$?
  "$etlkit" waits "$tr" --by stack --json $sel > "$tmp/b.json" 2>/dev/null; r2=$?
  "$etlkit" waits "$tr" --longest 5 $sel > "$tmp/w.txt" 2>/dev/null; r3=$?
  [ "$r1$r2$r3" = "$ok$ok$ok" ] || { echo "FAIL: $tr $sel: waits exit $r1 $r2 $r3" >&2; fails=$((fails+1)); continue; }
  python3 - "$tmp/w.json" "$tmp/b.json" "$tmp/w.txt" "$nall" "$sel" <<'PY' || fails=$((fails+1))
import json, sys
w, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
text, nall, sel = open(sys.argv[3]).read(), int(sys.argv[4]), sys.argv[5]
th, r = w['threads'], w['ready']
tids = {t['tid'] for t in th}
bad = []
def eq(what, x, y):
    if x != y: bad.append('%s: %r, expected %r' % (what, x, y))
if not th or len(th) >= nall: bad.append('%d threads selected of %d' % (len(th), nall))
eq('ready.ready_count', r['ready_count'], sum(t['ready_count'] for t in th))
eq('ready.ready_ns', r['ready_ns'], sum(t['ready_ns'] for t in th))
eq('ready.woken_count', r['woken_count'], sum(t['woken_count'] for t in th))
eq('ready.woken_ns', r['woken_ns'], sum(t['woken_ns'] for t in th))
eq('ready.ready_max_ns', r['ready_max_ns'], max(t['ready_max_ns'] or 0 for t in th))
eq('by_reason count', sum(x['count'] for x in w['by_reason']), sum(t['wait_count'] for t in th))
eq('by_reason wait_ns', sum(x['wait_ns'] for x in w['by_reason']), sum(t['wait_ns'] for t in th))
eq('longest_waits', len(w['longest_waits']), sum(t['wait_count'] for t in th))
eq('longest_ready', len(w['longest_ready']), r['ready_count'])
eq('longest intervals of other threads',
   sorted({x['tid'] for x in w['longest_waits'] + w['longest_ready']} - tids), [])
eq('--by stack ready_ns', b['ready_ns'], r['ready_ns'])
eq('--by stack readies', b['readies'], r['ready_count'])
eq('--by stack wait_ns', b['wait_ns'], sum(t['wait_ns'] for t in th))
eq('--by stack waits', b['waits'], sum(t['wait_count'] for t in th))
# The text: the headline counts the selected switch-ins, and the longest lists name selected TIDs only.
if 'Ready latency of %d switch-ins' % r['ready_count'] not in text: bad.append('text headline')
sec = None
for line in text.splitlines():
    if line.startswith('Longest'): sec = line; continue
    if not line.startswith('  '): sec = None; continue
    f = line.split()
    if sec and f[0] != 'Duration' and int(f[4 if f[1] in ('ms', 'us', 'ns', 's') else 3]) not in tids:
        bad.append('text %s: %s' % (sec, line.strip()))
for x in bad: print('FAIL: waits %s: %s' % (sel, x), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
done
# Without a selection: every thread, as before.
python3 - "$tmp/all.json" <<'PY' || fails=$((fails+1))
import json, sys
w = json.load(open(sys.argv[1]))
if w['ready']['ready_count'] != sum(t['ready_count'] for t in w['threads']):
    print('FAIL: waits: ready_count is not the threads\' sum', file=sys.stderr); sys.exit(1)
PY
[ $fails -eq 0 ] || { echo "waits_select: $fails failed" >&2; exit 1; }
echo "waits_select: ok"
