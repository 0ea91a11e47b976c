#!/bin/sh
# ts_top_bit.sh ETLKIT WORK - a record time with its top bit set is damage, passed over (README "Limits"),
# whatever the logfile header says. A crafted trace whose every time (the header's first) is moved up by
# 2^63 left the reader no session window (container/reader.c, time_window): it read as undamaged (exit 0)
# and the exports' raw *_ts columns, signed 64-bit, were NULL, silently. Now every record is told at its
# offset with its ticks and passed over (exit 3), and no export holds a tick past 2^63 - 1. A trace whose
# header is sound and one CPU's buffer has such times: those records alone are passed over.
set -u
etlkit=$1; work=$2
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
"$etlkit" synth -q --stacks --pmc 2 --spinlocks --duration 0.2 -o t.etl || exit 1
"$etlkit" dump --format jsonl --order file t.etl >t.jsonl || exit 1
# all.etl: every record's time moved up by 2^63; one.etl: only those of the last buffer's records.
python3 - <<'PY' || exit 1
import json, struct
b = bytearray(open('t.etl', 'rb').read())
bufsize = struct.unpack_from('<I', b, 0)[0]  # WMI_BUFFER_HEADER BufferSize: synth writes every buffer whole
recs = [r for r in map(json.loads, open('t.jsonl')) if 'ts' in r and not r.get('expanded')]
last = max(r['buf'] for r in recs)
for name, pick in (('all', lambda r: True), ('one', lambda r: r['buf'] == last)):
    c = bytearray(b); n = 0
    for r in filter(pick, recs):
        at = r['buf'] * bufsize + r['off']
        i = c.find(struct.pack('<Q', r['ts']), at, at + 24)  # the time in the record's header
        if i < 0: raise SystemExit('no time at file offset %#x' % at)
        c[i:i + 8] = struct.pack('<Q', r['ts'] + (1 << 63)); n += 1
    if n < 10: raise SystemExit('%s: only %d records patched' % (name, n))
    open(name + '.etl', 'wb').write(c)
    open(name + '.n', 'w').write('%d\n' % n)
PY
for f in all one; do
  "$etlkit" info --json "$f.etl" >"$f.info" 2>"$f.err"; rc=$?
  [ $rc -eq 3 ] || fail "info $f: exit $rc, not 3"
  grep -q "has time 0x[89a-f][0-9a-f]* ticks, outside the session (its top bit set: no session clock reaches it); passed over" "$f.err" ||
    fail "info $f: not told: $(head -2 "$f.err")"
  rm -rf "$f.csv"
  "$etlkit" export "$f.etl" --to csv -o "$f.csv" 2>"$f.xerr"; rc=$?
  [ $rc -eq 3 ] || fail "export $f: exit $rc, not 3"
  "$etlkit" export "$f.etl" --to sqlite -o "$f.sqlite" 2>"$f.serr"; rc=$?
  [ $rc -eq 3 ] || fail "export --to sqlite $f: exit $rc, not 3"
  ! grep -q "stored as NULL" "$f.serr" || fail "export --to sqlite $f: $(grep 'stored as NULL' "$f.serr")"
done
# Every record of all.etl passed over; of one.etl, the patched ones (info counts the records it reads).
python3 - <<'PY' || fail "records read: $(cat counts.txt 2>/dev/null)"
import json, csv, glob, sys
t = json.load(open('all.info'))['records']
one = json.load(open('one.info'))['records']
n_one = int(open('one.n').read())
clean = sum(1 for _ in open('t.jsonl'))
print(t, one, n_one, file=open('counts.txt', 'w'))
assert t == 0, t
assert 0 < one < clean, (one, clean)
# No tick past 2^63 - 1 in any table, and none left empty where its ns is there.
for f in glob.glob('one.csv/*.csv'):
    rows = list(csv.reader(open(f, newline='')))
    for k, c in enumerate(rows[0]):
        if not (c == 'ts' or c.endswith('_ts')): continue
        j = rows[0].index(c[:-2] + 'ns') if c.endswith('_ts') and c[:-2] + 'ns' in rows[0] else (rows[0].index('ns') if c == 'ts' and 'ns' in rows[0] else None)
        for r in rows[1:]:
            assert r[k] == '' or int(r[k]) < (1 << 63), (f, c, r[k])
            assert j is None or r[j] == '' or r[k] != '', (f, c, 'tick NULL where ns is not')
PY
[ $fails -eq 0 ] && echo "ts_top_bit: all checks passed"
[ $fails -eq 0 ]
