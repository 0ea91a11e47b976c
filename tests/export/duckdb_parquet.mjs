// duckdb_parquet.mjs MODDIR fixture FILE | MODDIR export PQDIR DB [PQDIR DB ...]
// Reads etlkit's Parquet files with DuckDB (@duckdb/node-api):
//   fixture: test_export_parquet --fixture's file: every value equals the rows the C test made
//            (recomputed here), types and nullability, 3 row groups sorted by (cpu, t), pages,
//            a dictionary that fell back to PLAIN, statistics.
//   export:  `etlkit export --to parquet` against `--to sqlite` of the same trace: the same tables,
//            columns and rows, every value equal (booleans as 0/1); the declared types; REQUIRED
//            columns without NULL; each row group's statistics (min, max, null count) equal to its
//            values'; the per-CPU tables sorted by (cpu, time) in each row group; zstd everywhere.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const [moddir, mode, ...args] = process.argv.slice(2);
const require = createRequire(moddir + '/package.json');
const duck = await import(pathToFileURL(require.resolve('@duckdb/node-api')).href);
const instance = await duck.DuckDBInstance.create(':memory:');
const con = await instance.connect();
await con.run(`SET default_null_order = 'nulls_first'`);

let passed = 0, failed = 0;
const check = (ok, what) => { if (ok) passed++; else { failed++; if (failed < 40) console.log('FAIL: ' + what); } };
const US = '\x1f', RS = '\x1e';
const cell = (v) => v === null ? '' : typeof v === 'boolean' ? (v ? '1' : '0') : String(v);
const rowsOf = async (sql) => (await con.runAndReadAll(sql)).getRows();
const text = async (sql) => (await rowsOf(sql)).map(r => r.map(cell).join(US)).join(RS);
const lite = (db, sql) => {
  const out = execFileSync('sqlite3', ['-batch', '-noheader', '-separator', US, '-newline', RS, db, sql],
                           { maxBuffer: 1 << 30 }).toString();
  return out.endsWith(RS) ? out.slice(0, -RS.length) : out;
};
const q = (s) => `'${s.replace(/'/g, "''")}'`;
const ident = (s) => `"${s}"`;

// Each row group's statistics against its values; the row order inside each row group.
async function checkRowGroups(file, what, order) {
  const meta = await rowsOf(`SELECT row_group_id, row_group_num_rows, path_in_schema, type, stats_min_value,
      stats_max_value, stats_null_count, compression, encodings FROM parquet_metadata(${q(file)}) ORDER BY row_group_id, column_id`);
  const groups = new Map();
  for (const [g, n, col, type, min, max, nulls, comp, enc] of meta) {
    if (!groups.has(g)) groups.set(g, { n: Number(n), cols: [] });
    groups.get(g).cols.push({ col, type, min, max, nulls: Number(nulls), comp, enc });
  }
  let start = 0;
  for (const [g, { n, cols }] of groups) {
    const where = `file_row_number >= ${start} AND file_row_number < ${start + n}`;
    const src = `read_parquet(${q(file)}, file_row_number = true)`;
    const agg = cols.map(c => {
      const x = c.type === 'BOOLEAN' ? `CAST(${ident(c.col)} AS INTEGER)` : ident(c.col);
      return `CAST(MIN(${x}) AS VARCHAR), CAST(MAX(${x}) AS VARCHAR), COUNT(*) - COUNT(${ident(c.col)})`;
    }).join(', ');
    const [got] = await rowsOf(`SELECT ${agg} FROM ${src} WHERE ${where}`);
    cols.forEach((c, i) => {
      const [mn, mx, nl] = got.slice(3 * i, 3 * i + 3);
      const b = (v) => v === null ? null : c.type === 'BOOLEAN' ? (v === 'true' || v === '1' ? '1' : '0') : v;
      check(c.nulls === Number(nl), `${what} rg ${g} ${c.col}: null_count ${c.nulls}, the values have ${nl}`);
      check(b(c.min) === mn && b(c.max) === mx, `${what} rg ${g} ${c.col}: statistics [${c.min}, ${c.max}], values [${mn}, ${mx}]`);
      check(c.comp === 'ZSTD', `${what} ${c.col}: compression ${c.comp}`);
    });
    if (order && n > 1) {
      const [a, b] = order.map(ident);
      const bad = await text(`SELECT COUNT(*) FROM (SELECT ${a} AS a, ${b} AS b, LAG(${a}) OVER w AS pa, LAG(${b}) OVER w AS pb
          FROM ${src} WHERE ${where} WINDOW w AS (ORDER BY file_row_number)) WHERE pa IS NOT NULL AND
          (a < pa OR (a = pa AND b < pb) OR (a = pa AND b IS NULL AND pb IS NOT NULL))`);
      check(bad === '0', `${what} rg ${g}: ${bad} rows out of (${order}) order`);
    }
    start += n;
  }
  return groups;
}

if (mode === 'fixture') {
  const [file] = args;
  // The rows of test_export_parquet.c's fixture_row, recomputed. DuckDB reads a TIMESTAMP(NANOS, UTC) as
  // TIMESTAMP WITH TIME ZONE, in microseconds.
  const U64 = (1n << 64n) - 1n, U32 = 4294967295n, I32MIN = -2147483648n, I32MAX = 2147483647n, I64MIN = -(1n << 63n), I64MAX = (1n << 63n) - 1n;
  const want = [];
  for (let r = 0; r < 2500; r++) {
    const R = BigInt(r);
    want.push([r, 3 - r % 4, r % 7 ? R * 1000n - 5000n : null, r % 5 ? (r % 256) - 128 : null,
      r % 3 ? U32 - R : R, r % 2 ? I32MIN + R : I32MAX - R, r % 11 ? (r % 3 === 0 ? 1 : 0) : null,
      r % 13 ? 'n' + (r % 40 === 0 ? r : r % 9) : null, 'w' + r + 'é',
      (1700000000000000000n + R * 1000003n) / 1000n, r % 17 ? (r % 2 ? I64MIN + R : I64MAX - R) : null,
      r % 19 ? (r % 3 ? U64 - R : R) : null].map(cell).join(US));
  }
  want.sort();
  const got = (await text(`SELECT id, cpu, t, i8, u32, i32, flag, name, word, epoch_us("when"), big, u64 FROM ${q(file)}`)).split(RS).sort();
  check(got.length === 2500, `fixture: ${got.length} rows`);
  const diff = got.findIndex((r, i) => r !== want[i]);
  check(diff < 0, `fixture: row ${diff}: ${JSON.stringify(got[diff])} != ${JSON.stringify(want[diff])}`);
  const types = await text(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ${q(file)})`);
  check(types === ['id|BIGINT', 'cpu|USMALLINT', 't|BIGINT', 'i8|TINYINT', 'u32|UINTEGER', 'i32|INTEGER', 'flag|BOOLEAN',
    'name|VARCHAR', 'word|VARCHAR', 'when|TIMESTAMP WITH TIME ZONE', 'big|BIGINT', 'u64|UBIGINT'].join(RS).replace(/\|/g, US), `fixture types: ${types}`);
  const rep = await text(`SELECT name, repetition_type FROM parquet_schema(${q(file)}) WHERE name IN ('id', 'cpu', 'word', 't', 'name') ORDER BY name`);
  check(rep === ['cpu|REQUIRED', 'id|REQUIRED', 'name|OPTIONAL', 't|OPTIONAL', 'word|REQUIRED'].join(RS).replace(/\|/g, US), `fixture repetition: ${rep}`);
  const groups = await checkRowGroups(file, 'fixture', ['cpu', 't']);
  check(groups.size === 3, `fixture: ${groups.size} row groups, 3 expected (1000 rows each)`);
  const enc = (c) => groups.get(0n).cols.find(x => x.col === c).enc;
  check(enc('name').includes('RLE_DICTIONARY'), `fixture name: ${enc('name')}`);
  check(!enc('word').includes('DICTIONARY') && enc('word').includes('PLAIN'), `fixture word (past dict_max): ${enc('word')}`);
  check(enc('t').includes('DELTA_BINARY_PACKED'), `fixture t: ${enc('t')}`);
  check(!enc('i32').includes('DICTIONARY'), `fixture i32 (PLAIN): ${enc('i32')}`);
} else {
  const order = { cswitch: ['cpu', 'ns'], slice: ['cpu', 'start_ns'], thread_state: ['utid', 'start_ns'], ready: ['cpu', 'ns'],
                  spinlock: ['cpu', 'ns'], pmc: ['cpu', 'ns'], sample: ['cpu', 'ns'] };
  for (let k = 0; k < args.length; k += 2) {
    const [dir, db] = [args[k], args[k + 1]];
    const tables = readdirSync(dir).filter(f => f.endsWith('.parquet')).map(f => f.slice(0, -8)).sort();
    const ltables = lite(db, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY name`).split(RS);
    check(tables.join(' ') === ltables.join(' '), `${dir}: tables ${tables} != SQLite's ${ltables}`);
    const id = lite(db, `SELECT value FROM trace WHERE key = 'trace_id'`);
    for (const t of tables) {
      const file = `${dir}/${t}.parquet`, what = `${dir}/${t}`;
      const schema = await rowsOf(`SELECT name, type, repetition_type FROM parquet_schema(${q(file)}) WHERE name != 'schema'`);
      const duckTypes = new Map((await rowsOf(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ${q(file)})`)));
      const cols = lite(db, `SELECT name || '${US}' || type FROM pragma_table_info('${t}') ORDER BY cid`).split(RS).map(l => l.split(US));
      check(schema[0][0] === 'trace_id' && schema[0][2] === 'REQUIRED', `${what}: trace_id first`);
      check(schema.slice(1).map(s => s[0]).join(',') === cols.map(c => c[0]).join(','), `${what}: columns ${schema.map(s => s[0])}`);
      for (const [name, type, rep] of schema.slice(1)) {
        const ltype = cols.find(c => c[0] === name)?.[1];
        const dt = duckTypes.get(name);
        check(ltype === 'TEXT' ? dt === 'VARCHAR' : /^(U?(TINY|SMALL|BIG)?INT(EGER)?|BOOLEAN)$/.test(dt), `${what}.${name}: ${dt} for SQLite ${ltype}`);
        if (dt === 'BOOLEAN')
          check(lite(db, `SELECT COUNT(*) FROM "${t}" WHERE "${name}" NOT IN (0, 1)`) === '0', `${what}.${name}: BOOLEAN, SQLite has other values`);
        if (rep === 'REQUIRED')
          check(lite(db, `SELECT COUNT(*) FROM "${t}" WHERE "${name}" IS NULL`) === '0', `${what}.${name}: REQUIRED, SQLite has NULLs`);
      }
      check(await text(`SELECT COUNT(*) FROM ${q(file)} WHERE trace_id IS DISTINCT FROM ${q(id)}`) === '0', `${what}: trace_id ${id}`);
      const list = cols.map(c => ident(c[0])).join(', ');
      // A UINT64 value past 2^63 - 1 is NULL in SQLite, whose INTEGER is signed (schema.md): compared as that.
      const sel = cols.map(c => duckTypes.get(c[0]) === 'BOOLEAN' ? `CAST(${ident(c[0])} AS INTEGER)`
        : duckTypes.get(c[0]) === 'UBIGINT' ? `CASE WHEN ${ident(c[0])} <= 9223372036854775807 THEN ${ident(c[0])} END`
        : ident(c[0])).join(', ');
      const by = cols.map((c, i) => i + 1).join(', ');
      // The trace table says which export made it: parquet here, sqlite there.
      const but = t === 'trace' ? ` WHERE key != 'export_target'` : '';
      if (t === 'trace')
        check(await text(`SELECT value FROM ${q(file)} WHERE key = 'export_target'`) === 'parquet', `${what}: export_target`);
      const a = await text(`SELECT ${sel} FROM ${q(file)}${but} ORDER BY ${by}`);
      const b = lite(db, `SELECT ${list} FROM "${t}"${but} ORDER BY ${by}`);
      if (a !== b) {
        const x = a.split(RS), y = b.split(RS), i = x.findIndex((r, j) => r !== y[j]);
        check(false, `${what}: ${x.length} rows vs SQLite's ${y.length}; first difference at ${i}: ${JSON.stringify(x[i])} != ${JSON.stringify(y[i])}`);
      } else {
        check(true, '');
      }
      await checkRowGroups(file, what, order[t]);
    }
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
