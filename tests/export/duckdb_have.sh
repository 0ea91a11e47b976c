# . duckdb_have.sh, with moddir set: exits 77 (ctest: skipped) with one line saying why when DuckDB for node is
# not installed under moddir (duckdb_setup.sh, the fixture, could not, or did not run: ctest -FS/-FA, or the
# script run by hand).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "SKIP: node or npm is not installed: this test reads with DuckDB through them"; exit 77
fi
if [ ! -f "$moddir/node_modules/@duckdb/node-api/package.json" ]; then
  # npm.log is there only when the fixture ran and npm failed: name it only then.
  if [ -f "$moddir/npm.log" ]; then
    echo "SKIP: npm could not install @duckdb/node-api (registry unreachable?), see $moddir/npm.log"
  else
    echo "SKIP: @duckdb/node-api is not installed under $moddir: its fixture (export/duckdb_setup, duckdb_setup.sh) did not run"
  fi
  exit 77
fi
