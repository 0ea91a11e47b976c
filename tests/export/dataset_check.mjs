// dataset_check.mjs MODDIR DS SQL ID... - a CSV or Parquet dataset (FORMAT=csv|parquet in the
// environment, csv by default; dataset.sh wrote it, with single-$ID/ the single export of each trace
// with --trace-id ID and cpu-$ID.json its `etlkit cpu --json`) read as it is: the files and the
// manifest directly, then DuckDB over the partitions with hive_partitioning.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, existsSync } from 'node:fs';

const [moddir, ds, sqlfile, ...ids] = process.argv.slice(2);
const format = process.env.FORMAT || 'csv', ext = '.' + format, pq = format === 'parquet';
const single = (id) => pq ? `single-pq-${id}` : `single-${id}`;
const require = createRequire(moddir + '/package.json');
const duck = await import(pathToFileURL(require.resolve('@duckdb/node-api')).href);
const con = await (await duck.DuckDBInstance.create(':memory:')).connect();

let passed = 0, failed = 0;
const check = (ok, what) => { if (ok) passed++; else { failed++; console.log('FAIL: ' + what); } };
const rows = async (sql) => (await con.runAndReadAll(sql)).getRows().map(r => r.map(v => v === null ? '' : String(v)).join('|'));
const part = (t) => pq
  ? `read_parquet('${ds}/${t}/*/*.parquet', hive_partitioning = true, hive_types = {'trace_id': VARCHAR})`
  : `read_csv('${ds}/${t}/*/*.csv', hive_partitioning = true, hive_types = {'trace_id': VARCHAR}, header = true, quote = '"', escape = '"', sample_size = -1)`;

// The files: each partition is the single export without its first column.
const tables = readdirSync(single(ids[0])).filter(f => f.endsWith(ext)).map(f => f.slice(0, -ext.length)).sort();
const mtables = readdirSync(ds).filter(f => !f.startsWith('_')).sort();
check(JSON.stringify(tables) === JSON.stringify(mtables), `tables: ${mtables} vs ${tables}`);
const manifest = JSON.parse(readFileSync(`${ds}/_manifest.json`, 'utf8'));
check(manifest.format === format && manifest.failed.length === 0, 'manifest format and failures');
check(JSON.stringify(manifest.traces.map(t => t.id)) === JSON.stringify([...ids].sort()), 'manifest traces, by ID');
for (const id of ids) {
  const rec = manifest.traces.find(t => t.id === id);
  const bytes = readFileSync(`${id}.etl`);
  check(rec && rec.source === `${id}.etl` && rec.size === bytes.length, `${id}: source and size`);
  check(rec && rec.sha256 === createHash('sha256').update(bytes).digest('hex'), `${id}: sha256`);
  check(rec && rec.format === format && rec.damaged === false && typeof rec.anomalies.events_lost === 'number' &&
        typeof rec.etlkit_version === 'string', `${id}: format, damage, anomalies, version`);
  for (const t of tables) {
    const file = `${ds}/${t}/trace_id=${id}/part-0${ext}`;
    if (!existsSync(file)) { check(false, `${file} missing`); continue; }
    if (pq) {
      // The same rows as the single export's, its trace_id column aside, types and all.
      const one = `read_parquet('${single(id)}/${t}.parquet')`;
      const [n] = await rows(`SELECT COUNT(*) FROM ${one}`);
      const [diff] = await rows(`SELECT (SELECT COUNT(*) FROM (SELECT * FROM read_parquet('${file}', hive_partitioning = false) EXCEPT ALL
          SELECT * EXCLUDE (trace_id) FROM ${one})) + (SELECT COUNT(*) FROM (SELECT * EXCLUDE (trace_id) FROM ${one}
          EXCEPT ALL SELECT * FROM read_parquet('${file}', hive_partitioning = false)))`);
      const [pcols] = await rows(`SELECT string_agg(column_name || ' ' || column_type, ',') FROM (DESCRIBE SELECT * FROM read_parquet('${file}', hive_partitioning = false))`);
      const [scols] = await rows(`SELECT string_agg(column_name || ' ' || column_type, ',') FROM (DESCRIBE SELECT * EXCLUDE (trace_id) FROM ${one})`);
      check(diff === '0' && pcols === scols, `${file}: not the single export without its trace_id column (${diff} rows differ; ${pcols} vs ${scols})`);
      check(rec && rec.rows[t] === Number(n), `${id}: manifest rows of ${t}: ${rec && rec.rows[t]} vs ${n}`);
      continue;
    }
    const got = readFileSync(file, 'latin1');
    const lines = readFileSync(`single-${id}/${t}.csv`, 'latin1').split('\r\n');
    const head = lines[0].startsWith('trace_id,'), body = lines.slice(1, -1).every(l => l.startsWith(`${id},`));
    const want = [lines[0].slice(9), ...lines.slice(1, -1).map(l => l.slice(id.length + 1)), ''].join('\r\n');
    check(head && body && got === want, `${file}: not the single export without its trace_id column`);
    check(rec && rec.rows[t] === lines.length - 2, `${id}: manifest rows of ${t}: ${rec && rec.rows[t]} vs ${lines.length - 2}`);
  }
}

// DuckDB: every table's rows per trace and columns; the partition column last.
for (const t of tables) {
  const counts = await rows(`SELECT trace_id, COUNT(*) FROM ${part(t)} GROUP BY trace_id ORDER BY trace_id`);
  const want = [...ids].sort().map(id => `${id}|${manifest.traces.find(x => x.id === id).rows[t]}`)
    .filter(l => !l.endsWith('|0'));
  check(JSON.stringify(counts) === JSON.stringify(want), `${t}: DuckDB rows per trace ${counts} vs ${want}`);
  if (want.length) {
    const cols = (await rows(`SELECT column_name FROM (DESCRIBE SELECT * FROM ${part(t)})`)).join(',');
    const first = pq ? (await rows(`SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet('${single(ids[0])}/${t}.parquet'))`))
                     : readFileSync(`${single(ids[0])}/${t}.csv`, 'latin1').split('\r\n')[0].split(',');
    check(cols === [...first.slice(1), 'trace_id'].join(','), `${t}: columns ${cols}`);
  }
}
// CPU time per thread and per process, per trace, as `etlkit cpu --json` of each trace.
for (const id of ids) {
  const cpu = JSON.parse(readFileSync(`cpu-${id}.json`, 'utf8'));
  const want = cpu.threads.filter(t => t.cpu_ns > 0 || t.switches > 0).map(t => `${t.tid}|${t.pid}|${t.cpu_ns}|${t.switches}`).sort();
  const got = (await rows(`SELECT t.tid, t.pid, SUM(s.end_ns - s.start_ns), SUM(CAST(s.head = 0 AS INTEGER))
      FROM ${part('slice')} s JOIN ${part('thread')} t ON t.trace_id = s.trace_id AND t.utid = s.utid
      WHERE s.trace_id = '${id}' GROUP BY s.utid, t.tid, t.pid`)).filter(r => !r.endsWith('|0|0')).sort();
  check(want.length > 0 && JSON.stringify(got) === JSON.stringify(want),
        `${id}: CPU per thread: DuckDB ${got.slice(0, 5)} vs cpu --json ${want.slice(0, 5)} (${got.length} vs ${want.length})`);
}

// The fleet queries (README, "Fleets"): each runs and answers; CPU by process equals `etlkit cpu`.
let sql = readFileSync(sqlfile, 'utf8');
if (!pq) sql = sql.replace(/read_parquet\('DS\/(\w+)\/\*\/\*\.parquet', hive_partitioning = true,\s*hive_types = \{'trace_id': VARCHAR\}\)/g,
  `read_csv('DS/$1/*/*.csv', hive_partitioning = true, hive_types = {'trace_id': VARCHAR}, quote = '"', escape = '"')`);
sql = sql.replaceAll("'DS/", `'${ds}/`);
const answers = {};
for (const st of sql.split(/;\s*$/m).map(s => s.trim()).filter(s => s.replace(/^--.*$/mg, '').trim())) {
  const name = (st.match(/^-- name: (\w+)/m) || [])[1];
  try {
    const r = await rows(st);
    if (name) answers[name] = r;
  } catch (e) { check(false, `fleet query ${name || st.slice(0, 60)}: ${e.message}`); }
}
check(['cpu_by_process', 'ready_p99', 'slower_than_median'].every(n => n in answers), 'the three fleet queries ran');
for (const id of ids) {
  const cpu = JSON.parse(readFileSync(`cpu-${id}.json`, 'utf8'));
  const want = cpu.processes.filter(p => p.cpu_ns > 0).map(p => `${p.pid}|${p.cpu_ns}`).sort();
  const got = (answers.cpu_by_process || []).filter(r => r.startsWith(`${id}|`)).map(r => r.split('|'))
    .filter(r => r[3] !== '0').map(r => `${r[1]}|${r[3]}`).sort();
  check(want.length > 0 && JSON.stringify(got) === JSON.stringify(want), `${id}: CPU by process: ${got.slice(0, 4)} vs ${want.slice(0, 4)}`);
}
check((answers.ready_p99 || []).length === ids.length && answers.ready_p99.every(r => Number(r.split('|')[3]) > 0),
      `p99 ready latency per trace: ${answers.ready_p99}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
