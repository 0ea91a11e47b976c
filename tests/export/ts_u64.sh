#!/bin/sh
# ts_u64.sh ETLKIT WORK MODDIR - raw `*_ts` tick columns past 2^63 - 1. A logfile header whose own time is
# past INT64_MAX leaves the reader no session window (container/reader.c, time_window), so a crafted trace
# whose every record time is past it reads as undamaged (exit 0). Its ticks were NULL in every format,
# silently; they follow the 64-bit counters' rule now (u64.sh): CSV and Parquet (UINT64, DuckDB UBIGINT)
# hold each one exactly, SQLite stores NULL and `etlkit export` says how many on stderr, even with --quiet.
# The Parquet part runs when MODDIR holds @duckdb/node-api (duckdb_setup.sh, the fixture, installs it).
set -u
etlkit=$1; work=$2; moddir=${3:-}
rm -rf "$work"; mkdir -p "$work/clean" "$work/big"; cd "$work" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
"$etlkit" synth -q --stacks --pmc 2 --spinlocks --duration 0.2 -o clean/t.etl || exit 1
"$etlkit" dump --format jsonl --order file clean/t.etl >clean.jsonl || exit 1
# Every record's time (the logfile header's first) and every walk's EventTimeStamp moved up by 2^63: the
# same trace, each ns the same.
python3 - <<'PY' || exit 1
import json, struct
b = bytearray(open('clean/t.etl', 'rb').read())
bufsize = struct.unpack_from('<I', b, 0)[0]  # WMI_BUFFER_HEADER BufferSize: synth writes every buffer whole
n = 0
for line in open('clean.jsonl'):
    r = json.loads(line)
    if 'ts' not in r or r.get('expanded'): continue
    at = r['buf'] * bufsize + r['off']
    i = b.find(struct.pack('<Q', r['ts']), at, at + 24)  # the time in the record's header
    if i < 0: raise SystemExit('no time at file offset %#x' % at)
    b[i:i + 8] = struct.pack('<Q', r['ts'] + (1 << 63)); n += 1
    ev = (r.get('fields') or {}).get('EventTimeStamp')  # a stack walk's or stack key's event
    if ev is not None:
        j = b.find(struct.pack('<Q', ev), i + 8, at + r['size'])
        if j < 0: raise SystemExit('no EventTimeStamp at file offset %#x' % at)
        b[j:j + 8] = struct.pack('<Q', ev + (1 << 63))
if n < 1000: raise SystemExit('only %d records patched' % n)
open('big/t.etl', 'wb').write(b)
PY
"$etlkit" info big/t.etl >/dev/null 2>info.err; rc=$?
[ $rc -eq 0 ] || echo "note: info exits $rc on the crafted trace: $(head -1 info.err)"
"$etlkit" export -q clean/t.etl --to csv -o clean/csv || exit 1
"$etlkit" export -q big/t.etl --to csv -o big/csv; rc=$?
[ $rc -eq 0 ] || fail "csv: exit $rc"
# Each table's rows alike, every tick column 2^63 more; told: how many SQLite must leave NULL. Rows ending at
# the trace's end may differ (without a window the reader ends the session at its last record, not EndTime):
# there, a tick only has to be there and past 2^63 - 1.
told=$(python3 - <<'PY'
import csv, os
bad, ticks, ends = [], 0, 0
for name in sorted(os.listdir('clean/csv')):
    if name == 'trace.csv': continue
    a = list(csv.reader(open('clean/csv/' + name, newline='')))
    b = list(csv.reader(open('big/csv/' + name, newline='')))
    if len(a) != len(b) or a[:1] != b[:1]: bad.append(name + ': rows or header differ'); continue
    ts = [k for k, c in enumerate(a[0]) if c == 'ts' or c.endswith('_ts')]
    for ra, rb in zip(a[1:], b[1:]):
        same = [v for k, v in enumerate(ra) if k not in ts] == [v for k, v in enumerate(rb) if k not in ts]
        ends += not same
        for k in ts:
            if rb[k] != '': ticks += 1
            if ra[k] == '' and rb[k] == '': continue
            if ra[k] == '' or rb[k] == '' or int(rb[k]) < (1 << 63) or (same and int(rb[k]) != int(ra[k]) + (1 << 63)):
                bad.append('%s.%s: %r for %r' % (name, a[0][k], rb[k], ra[k]))
if ends > 100: bad.append('%d rows differ' % ends)
print(ticks, '; '.join(bad[:4]))
PY
)
ticks=${told%% *}; bad=${told#* }
[ -z "$bad" ] || fail "csv: $bad"
[ "$ticks" -gt 1000 ] || fail "csv: only '$ticks' tick values written"
"$etlkit" export -q big/t.etl --to sqlite -o big/t.sqlite 2>err.txt; rc=$?
[ $rc -eq 0 ] || fail "sqlite: exit $rc"
grep -q "$ticks values past 9223372036854775807 (the first in [a-z_]*\.[a-z_]*) stored as NULL" err.txt ||
  fail "sqlite: the $ticks NULLs are not told: $(cat err.txt)"
if command -v sqlite3 >/dev/null 2>&1; then
  n=$(sqlite3 big/t.sqlite "SELECT COUNT(*) FROM cswitch WHERE ts IS NULL AND ns IS NOT NULL")
  m=$(($(wc -l <clean/csv/cswitch.csv) - 1))
  [ "$n" = "$m" ] || fail "sqlite: $n cswitch rows with a NULL ts, not $m"
fi
"$etlkit" export -q big/t.etl --to parquet -o big/pq || fail "parquet: exit $?"
if [ -n "$moddir" ] && [ -f "$moddir/node_modules/@duckdb/node-api/package.json" ] && command -v node >/dev/null 2>&1; then
  cat >"$moddir/ts_u64_check.mjs" <<'JS'
import { DuckDBInstance } from '@duckdb/node-api';
const [pq, csvdir] = process.argv.slice(2);
const con = await (await DuckDBInstance.create(':memory:')).connect();
const one = async (sql) => (await con.runAndReadAll(sql)).getRows().map(r => r.map(String).join('|')).join(';');
const out = [];
for (const [t, c] of [['cswitch', 'ts'], ['slice', 'start_ts'], ['slice', 'end_ts'], ['thread', 'start_ts'],
                      ['ready', 'ts'], ['pmc', 'ts'], ['sample', 'ts'], ['spinlock', 'ts']]) {
  // The CSV's values read as UBIGINT: the same rows, the same min and max (the footer's statistics, unsigned).
  const want = await one(`SELECT COUNT(${c}), MIN(${c}), MAX(${c}) FROM read_csv('${csvdir}/${t}.csv', types={'${c}': 'UBIGINT'})`);
  const got = await one(`SELECT COUNT(${c}), MIN(${c}), MAX(${c}) FROM '${pq}/${t}.parquet'`);
  const type = await one(`SELECT typeof(${c}) FROM '${pq}/${t}.parquet' WHERE ${c} IS NOT NULL LIMIT 1`);
  const hit = await one(`SELECT COUNT(*) FROM '${pq}/${t}.parquet' WHERE ${c} = (SELECT MAX(${c}) FROM read_csv('${csvdir}/${t}.csv', types={'${c}': 'UBIGINT'}))`);
  if (got !== want || type !== 'UBIGINT' || hit === '0') out.push(`${t}.${c}: ${type} ${got} (csv ${want}), max found ${hit}`);
}
console.log(out.length ? out.join('; ') : 'ok');
JS
  got=$(cd "$moddir" && node ts_u64_check.mjs "$work/big/pq" "$work/big/csv" 2>&1)
  [ "$got" = "ok" ] || fail "parquet: $got"
else
  echo "the Parquet part skipped: no @duckdb/node-api under '$moddir' (the DuckDB tests install it)"
fi
[ $fails -eq 0 ] && echo "ts_u64: all checks passed"
[ $fails -eq 0 ]
