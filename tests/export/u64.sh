#!/bin/sh
# u64.sh ETLKIT WORK MODDIR - unsigned 64-bit columns (pmc.value, spinlock.acquire_time and release_time)
# with values past 2^63 - 1 (a synthesized trace patched): CSV and Parquet hold them exactly (Parquet as
# UINT64, which DuckDB reads as UBIGINT), SQLite, whose INTEGER is signed, stores NULL and `etlkit export`
# says how many on stderr, even with --quiet (schema.md). They were NULL in every format, silently.
# The Parquet part runs when MODDIR holds @duckdb/node-api (duckdb_setup.sh, the fixture, installs it), else says so.
set -u
etlkit=$1; work=$2; moddir=${3:-}
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
"$etlkit" synth -q --stacks --pmc 2 --duration 0.3 -o clean.etl || exit 1
"$etlkit" export -q clean.etl --to csv -o clean.csv || exit 1
# One PMC value and one SpinLock's AcquireTime and ReleaseTime, each 8-byte pattern found once in the file.
python3 - <<'PY' || exit 1
import csv, struct
b = bytearray(open('clean.etl', 'rb').read())
def first(table, cols):
    for row in csv.DictReader(open('clean.csv/%s.csv' % table, newline='')):
        vals = [int(row[c]) for c in cols]
        if all(b.count(struct.pack('<Q', v)) == 1 for v in vals): return vals
    raise SystemExit('no %s row with unique values' % table)
(pmc,) = first('pmc', ['value'])
acq, rel = first('spinlock', ['acquire_time', 'release_time'])
for old, new in [(pmc, 0xFFFFFFFFFFFFFFFE), (acq, 0x9000000000000000), (rel, 0x8000000000000000)]:
    i = b.find(struct.pack('<Q', old)); b[i:i + 8] = struct.pack('<Q', new)
open('big.etl', 'wb').write(b)
PY
"$etlkit" export -q big.etl --to csv -o big.csv; rc=$?
[ $rc -eq 0 ] || fail "csv: exit $rc"
grep -q ',18446744073709551614' big.csv/pmc.csv || fail "csv: pmc.value 18446744073709551614 not written"
grep -q ',10376293541461622784,9223372036854775808,' big.csv/spinlock.csv || fail "csv: acquire_time/release_time not written"
"$etlkit" export -q big.etl --to sqlite -o big.sqlite 2>err.txt; rc=$?
[ $rc -eq 0 ] || fail "sqlite: exit $rc"
grep -q '3 values past 9223372036854775807 (the first in [a-z]*\.[a-z_]*) stored as NULL' err.txt ||
  fail "sqlite: the NULLs are not told: $(cat err.txt)"
if command -v sqlite3 >/dev/null 2>&1; then
  n=$(sqlite3 big.sqlite "SELECT (SELECT COUNT(*) FROM pmc WHERE value IS NULL) || ' ' || (SELECT COUNT(*) FROM spinlock WHERE acquire_time IS NULL AND release_time IS NULL)")
  [ "$n" = "1 1" ] || fail "sqlite: NULLs (pmc, spinlock) $n, not 1 1"
fi
"$etlkit" export -q clean.etl --to sqlite -o clean.sqlite 2>err.txt || fail "sqlite of the clean trace"
[ -s err.txt ] && fail "a clean trace's export warns: $(cat err.txt)"
"$etlkit" export -q big.etl --to parquet -o big.pq || fail "parquet: exit $?"
if [ -n "$moddir" ] && [ -f "$moddir/node_modules/@duckdb/node-api/package.json" ] && command -v node >/dev/null 2>&1; then
  cat >"$moddir/u64_check.mjs" <<'JS'
import { DuckDBInstance } from '@duckdb/node-api';
const [dir] = process.argv.slice(2);
const con = await (await DuckDBInstance.create(':memory:')).connect();
const one = async (sql) => (await con.runAndReadAll(sql)).getRows().map(r => r.map(String).join('|')).join(';');
const got = [await one(`SELECT typeof(value), COUNT(*) FROM '${dir}/pmc.parquet' WHERE value = 18446744073709551614 GROUP BY 1`),
  await one(`SELECT typeof(acquire_time), COUNT(*) FROM '${dir}/spinlock.parquet' WHERE acquire_time = 10376293541461622784 AND release_time = 9223372036854775808 GROUP BY 1`),
  await one(`SELECT COUNT(*) FROM '${dir}/pmc.parquet' WHERE value IS NULL`)];
console.log(got.join(' / '));
JS
  got=$(cd "$moddir" && node u64_check.mjs "$work/big.pq")
  [ "$got" = "UBIGINT|1 / UBIGINT|1 / 0" ] || fail "parquet: $got"
else
  echo "the Parquet part skipped: no @duckdb/node-api under '$moddir' (the DuckDB tests install it)"
fi
[ $fails -eq 0 ] && echo "u64: all checks passed"
[ $fails -eq 0 ]
