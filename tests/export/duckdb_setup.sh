#!/bin/sh
# duckdb_setup.sh MODDIR - installs @duckdb/node-api from the npm registry into MODDIR (the build folder's), once:
# ctest's fixture "duckdb", run before every test that reads with DuckDB, so that none of them sees an install
# half done. The install goes to a folder beside MODDIR, moved into place when complete. Exits 0 when it cannot
# install (no node or npm, registry unreachable): the tests then skip, saying so (duckdb_have.sh).
set -u
moddir=$1
[ -f "$moddir/node_modules/@duckdb/node-api/package.json" ] && exit 0
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "node or npm is not installed: the DuckDB tests will be skipped"; exit 0
fi
part="$moddir.part"
rm -rf "$part"; mkdir -p "$part"
if timeout 540 npm install --prefix "$part" --no-audit --no-fund --loglevel=error @duckdb/node-api \
     >"$part/npm.log" 2>&1 && [ -f "$part/node_modules/@duckdb/node-api/package.json" ]; then
  rm -rf "$moddir"; mv "$part" "$moddir"
else
  rm -rf "$moddir"; mkdir -p "$moddir"; mv "$part/npm.log" "$moddir/npm.log"; rm -rf "$part"
  echo "npm could not install @duckdb/node-api (registry unreachable?), see $moddir/npm.log"
fi
exit 0
