// duckdb_check.mjs MODDIR CSVDIR DB - loads every OUT/<table>.csv with DuckDB and compares
// row counts and the report totals (CPU time per thread and per CPU, waits per reason) with
// what the sqlite3 shell computes over the SQLite export of the same trace.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const [moddir, csvdir, db] = process.argv.slice(2);
const require = createRequire(moddir + '/package.json');
const duck = await import(pathToFileURL(require.resolve('@duckdb/node-api')).href);
const instance = await duck.DuckDBInstance.create(':memory:');
const con = await instance.connect();

let passed = 0, failed = 0;
const check = (ok, what) => { if (ok) passed++; else { failed++; console.log('FAIL: ' + what); } };
const rows = async (sql) => (await con.runAndReadAll(sql)).getRows().map(r => r.map(v => v === null ? '' : String(v)).join('|')).join('\n');
const lite = (sql) => execFileSync('sqlite3', ['-batch', '-noheader', '-separator', '|', db, sql]).toString().trim();
const csv = (t) => `read_csv('${csvdir}/${t}.csv', header = true, all_varchar = false, sample_size = -1)`;

const tables = readdirSync(csvdir).filter(f => f.endsWith('.csv')).map(f => f.slice(0, -4)).sort();
check(tables.includes('slice') && tables.includes('trace') && tables.length >= 10, 'tables: ' + tables.join(' '));
for (const t of tables) {
  const a = await rows(`SELECT COUNT(*) FROM ${csv(t)}`), b = lite(`SELECT COUNT(*) FROM ${t}`);
  check(a === b, `${t}: DuckDB reads ${a} rows, SQLite has ${b}`);
}
const id = lite(`SELECT value FROM trace WHERE key = 'trace_id'`);
check(await rows(`SELECT DISTINCT trace_id FROM ${csv('slice')}`) === id, `trace_id is ${id} in every row`);

const same = async (what, dsql, ssql) => {
  const a = await rows(dsql), b = lite(ssql);
  check(a === b && a.length > 0, `${what}: DuckDB\n${a.slice(0, 300)}\nSQLite\n${b.slice(0, 300)}`);
};
await same('CPU time per thread',
  `SELECT utid, SUM(end_ns - start_ns), SUM(CAST(head = 0 AS INTEGER)) FROM ${csv('slice')} WHERE utid IS NOT NULL GROUP BY utid ORDER BY utid`,
  `SELECT utid, cpu_ns, switches FROM cpu_by_thread ORDER BY utid`);
await same('busy time per CPU',
  `SELECT cpu, SUM(CASE WHEN tid != 0 THEN end_ns - start_ns ELSE 0 END), SUM(CASE WHEN tid = 0 THEN end_ns - start_ns ELSE 0 END) FROM ${csv('slice')} GROUP BY cpu ORDER BY cpu`,
  `SELECT cpu, busy_ns, idle_ns FROM cpu_by_cpu ORDER BY cpu`);
await same('waits per reason',
  `SELECT prev_wait_reason & 63 AS code, COUNT(*), SUM(ready_time_ns - last_switch_out_ns), MAX(ready_time_ns - last_switch_out_ns)
     FROM ${csv('slice')} WHERE utid IS NOT NULL AND head = 0 AND waited = 1 AND ready_time_ns IS NOT NULL
     AND last_switch_out_ns IS NOT NULL GROUP BY code ORDER BY code`,
  `SELECT code, count, wait_ns, max_ns FROM waits_by_reason ORDER BY code`);
await same('switches per CPU',
  `SELECT cpu, COUNT(*), COUNT(new_tid), SUM(CASE WHEN source = 'compact' THEN 1 ELSE 0 END) FROM ${csv('cswitch')} GROUP BY cpu ORDER BY cpu`,
  `SELECT cpu, COUNT(*), COUNT(new_tid), SUM(source = 'compact') FROM cswitch GROUP BY cpu ORDER BY cpu`);
await same('thread names',
  `SELECT utid, tid, coalesce(name, '') FROM ${csv('thread')} ORDER BY utid`,
  `SELECT utid, tid, coalesce(name, '') FROM thread ORDER BY utid`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
