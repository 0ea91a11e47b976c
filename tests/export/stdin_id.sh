#!/bin/sh
# stdin_id.sh ETLKIT WORK - `etlkit export - --to csv|sqlite` (a trace on standard input): the rows'
# trace_id is "sha256-" and the first 16 hex digits of the bytes' SHA-256, told on stderr, so a fleet of
# stdin exports loaded with one glob keeps its traces apart (every one was "-"); the same bytes give the
# same ID, --trace-id still names it, a named file keeps its base name, and an existing OUT is still
# refused before standard input is read.
set -u
etlkit=$1; work=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
command -v sha256sum >/dev/null || { echo "skipped: no sha256sum"; exit 77; }
"$etlkit" synth -o a.etl --seed 5 --duration 100ms --quiet || exit 1
"$etlkit" synth -o b.etl --seed 6 --duration 100ms --quiet || exit 1
ida=sha256-$(sha256sum a.etl | cut -c1-16); idb=sha256-$(sha256sum b.etl | cut -c1-16)
# the first column of every data row of a CSV file, once each
ids() { tail -n +2 "$1" | cut -d, -f1 | sort -u | tr -d '\r'; }

cat a.etl | "$etlkit" export - --to csv -o ca 2>err.txt || { cat err.txt; fail "csv from a pipe"; }
cat b.etl | "$etlkit" export - --to csv -o cb 2>/dev/null || fail "csv from a pipe (b)"
[ "$(ids ca/slice.csv)" = "$ida" ] || fail "a's trace_id is '$(ids ca/slice.csv)', not $ida"
[ "$(ids cb/slice.csv)" = "$idb" ] || fail "b's trace_id is '$(ids cb/slice.csv)', not $idb"
grep -q "^$ida,trace_id,$ida," ca/trace.csv || fail "the trace table's trace_id key"
grep -q "standard input: trace_id $ida" err.txt || { cat err.txt; fail "the ID is not told"; }
"$etlkit" export - --to csv -o ca2 --quiet <a.etl 2>err.txt || fail "csv from a redirect"
[ -s err.txt ] && { cat err.txt; fail "--quiet told something"; }
[ "$(ids ca2/slice.csv)" = "$ida" ] || fail "the same bytes gave another ID"
"$etlkit" export - --to csv -o cn --trace-id lab-7 --quiet <a.etl || fail "--trace-id"
[ "$(ids cn/slice.csv)" = lab-7 ] || fail "--trace-id is not the rows' ID"
"$etlkit" export a.etl --to csv -o cf --quiet || fail "a named file"
[ "$(ids cf/slice.csv)" = a.etl ] || fail "a named file's ID is not its base name"
# An existing OUT: refused, and standard input left unread (the next reader gets all of it).
{ "$etlkit" export - --to csv -o ca --quiet 2>/dev/null; echo "rc=$?" >rc.txt; cat >rest.etl; } <a.etl
grep -q rc=1 rc.txt || fail "an existing OUT: $(cat rc.txt), not 1"
cmp -s rest.etl a.etl || fail "standard input was read before OUT was refused"
if command -v sqlite3 >/dev/null; then
  "$etlkit" export - --to sqlite -o a.db --quiet <a.etl || fail "sqlite from standard input"
  [ "$(sqlite3 a.db "SELECT value FROM trace WHERE key = 'trace_id'")" = "$ida" ] || fail "sqlite: the trace_id"
  [ "$(sqlite3 a.db "SELECT value FROM trace WHERE key = 'file'")" = "-" ] || fail "sqlite: the file as given"
else
  echo "no sqlite3 shell: the SQLite check skipped"
fi
[ $fails -eq 0 ] && echo "stdin_id: all checks passed"
[ $fails -eq 0 ]
