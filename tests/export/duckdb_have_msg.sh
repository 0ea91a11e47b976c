#!/bin/sh
# duckdb_have_msg.sh WORK - duckdb_have.sh's skip line is true in every case: it named "$moddir/npm.log",
# which exists only when the fixture ran and npm failed, also when the fixture was excluded (ctest -FS duckdb)
# and nothing was there at all.
set -u
here=$(cd "$(dirname "$0")" && pwd); work=$1
rm -rf "$work"; mkdir -p "$work/failed"; echo "npm ERR! network" >"$work/failed/npm.log"
fails=0
bad() { echo "duckdb_have_msg: $*" >&2; fails=$((fails + 1)); }
# say MODDIR: duckdb_have.sh's line and status for it.
say() { out=$(moddir=$1; . "$here/duckdb_have.sh"; echo "no skip"); rc=$?; }
for m in "$work/none" "$work/failed"; do
  say "$m"
  [ $rc -eq 77 ] || bad "$m: exit $rc, not 77: $out"
  # A file it sends the reader to is there.
  p=$(printf '%s\n' "$out" | sed -n 's/.*see \([^ ]*\).*/\1/p')
  [ -z "$p" ] || [ -f "$p" ] || bad "$m: sends to $p, which is not there: $out"
done
say "$work/failed"
case $out in *"node or npm is not installed"*) ;; *"see $work/failed/npm.log"*) ;; *) bad "npm failed: $out" ;; esac
say "$work/none"
case $out in *"node or npm is not installed"*) ;; *"did not run"*) ;; *) bad "no fixture: $out" ;; esac
[ $fails -eq 0 ] && echo "duckdb_have_msg: all checks passed"
[ $fails -eq 0 ]
