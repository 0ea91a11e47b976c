#!/bin/sh
# duckdb.sh ETLKIT TRACE MODDIR WORK SCRIPT - `etlkit export --to csv` loaded by a real engine:
# DuckDB (@duckdb/node-api from the npm registry, installed once under the build folder in
# MODDIR) reads OUT/<table>.csv and must find what the sqlite3 shell finds in the SQLite export.
# Exit 77 (ctest: skipped) with one line when node, npm or the registry is not there.
set -u
etlkit=$1; trace=$2; moddir=$3; work=$4; script=$5
. "$(dirname "$0")/duckdb_have.sh"
rm -rf "$work"; mkdir -p "$work"
"$etlkit" export "$trace" --to csv -o "$work/csv" --quiet || { echo "FAIL: export --to csv"; exit 1; }
"$etlkit" export "$trace" --to sqlite -o "$work/x.db" --quiet || { echo "FAIL: export --to sqlite"; exit 1; }
node "$script" "$moddir" "$work/csv" "$work/x.db"
