# . duckdb_have.sh, with moddir set: exits 77 (ctest: skipped) with one line saying why when DuckDB for node is
# not installed under moddir (duckdb_setup.sh, the fixture, could not).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "SKIP: node or npm is not installed: this test reads with DuckDB through them"; exit 77
fi
if [ ! -f "$moddir/node_modules/@duckdb/node-api/package.json" ]; then
  echo "SKIP: npm could not install @duckdb/node-api (registry unreachable?), see $moddir/npm.log"; exit 77
fi
