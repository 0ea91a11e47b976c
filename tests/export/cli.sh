#!/bin/sh
# cli.sh ETLKIT DATA SAMPLES WORK - etlkit export's output rules (temporary name renamed into
# place, --force, nothing left behind, nothing of others removed), damaged and truncated inputs
# (exported, exit 3, the damage in `trace`), --range against `etlkit cpu --range`, standard output.
set -u
etlkit=$1; data=$2; samples=$3; work=$4
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
passes=0; fails=0
ok() { passes=$((passes+1)); }
bad() { echo "FAIL: $*"; fails=$((fails+1)); }
check() { # check NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then ok; else bad "$1: got '$3', expected '$2'"; fi
}
q() { sqlite3 -batch -noheader "$@"; }
t=$data/synth-64-qpc-full.etl
k=$samples/kernel-shutdown-x64.etl

# An existing output is refused without --force and left as it was.
for to in sqlite perfetto ftrace; do
  echo keep > "out.$to"
  "$etlkit" export "$t" --to $to -o "out.$to" --quiet 2>err; check "$to over a file, no --force" 1 $?
  check "$to: the file kept" keep "$(cat "out.$to")"
  grep -q -- '--force' err && ok || bad "$to: the refusal names --force"
  "$etlkit" export "$t" --to $to -o "out.$to" --force --quiet; check "$to --force" 0 $?
  [ "$(cat "out.$to" 2>/dev/null | head -c 4)" != keep ] && ok || bad "$to: --force replaced the file"
done
check "sqlite --force gives a database" 13 "$(q out.sqlite "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")"
# Not a regular file, the input itself (a symbolic link to it too): refused, untouched. (Other links:
# replaced with --force, never written through: tests/cli/outputs.sh.)
mkdir adir
"$etlkit" export "$t" --to sqlite -o adir --force --quiet 2>/dev/null; check "sqlite over a directory" 1 $?
cp "$t" in.etl; ln -s in.etl link.db
"$etlkit" export in.etl --to sqlite -o link.db --force --quiet 2>/dev/null; check "sqlite over a symlink to its input" 64 $?
"$etlkit" export in.etl --to sqlite -o in.etl --force --quiet 2>/dev/null; check "sqlite over its input" 64 $?
cmp -s in.etl "$t" && ok || bad "the input survived"
# A folder whose name begins with "file:": SQLite (built with URIs on, as Debian's is) read "file:d/x.db" as the URI
# of d/x.db: the rows went there, beside it a stray temporary database, and OUT was left empty with exit 0.
mkdir -p "file:d" d
"$etlkit" export "$t" --to sqlite -o "file:d/x.db" --quiet; check "sqlite into a folder named file:d" 0 $?
check "file:d/x.db holds the export" 13 "$(q "./file:d/x.db" "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'" 2>&1)"
check "nothing written in d" "" "$(ls -A d)"
# The summary with --tables leaving the scheduler's tables out names the tables asked for: it said "no context
# switch, ReadyThread, spin lock or PMC rows" of a trace full of them.
"$etlkit" export "$t" --to sqlite -o tables.db --tables process,thread 2>err; check "--tables process,thread" 0 $?
grep -q 'no context switch' err && bad "--tables process,thread: the summary says the trace has no switches: $(cat err)" || ok
grep -q ' rows (process [0-9]*, thread [0-9]*)$' err && ok || bad "--tables process,thread: the summary: $(cat err)"
# A failed export leaves nothing: not an ETL file, an unwritable directory.
printf 'not a trace\n' > text.etl
mkdir empty
for to in sqlite csv perfetto ftrace; do
  "$etlkit" export text.etl --to $to -o empty/x --quiet 2>/dev/null; check "$to of a text file" 2 $?
done
"$etlkit" export text.etl --to parquet -o empty/x --quiet 2>/dev/null; check "parquet of a text file" 2 $?
check "nothing left in empty/" "" "$(ls -A empty)"
# Parquet: a directory, the CSV sink's rules (refused without --force; with it, our tables replaced,
# other files kept); damaged and truncated inputs exported (exit 3).
mkdir pq; echo keep > pq/other.txt; echo old > pq/slice.parquet
"$etlkit" export "$t" --to parquet -o pq --quiet 2>/dev/null; check "parquet over a directory, no --force" 1 $?
check "parquet: the directory kept" old "$(cat pq/slice.parquet)"
"$etlkit" export "$t" --to parquet -o pq --force --quiet; check "parquet --force" 0 $?
check "parquet --force: other files kept" keep "$(cat pq/other.txt)"
check "parquet --force: slice replaced" PAR1 "$(head -c 4 pq/slice.parquet)"
check "parquet: one file per table and other.txt" 14 "$(ls pq | wc -l)"
"$etlkit" export "$t" --to parquet -o - --quiet 2>/dev/null; check "parquet to standard output" 64 $?
if [ "$(id -u)" != 0 ]; then
  mkdir ro; chmod 555 ro
  "$etlkit" export "$t" --to sqlite -o ro/x.db --quiet 2>/dev/null; check "unwritable directory" 1 $?
  check "nothing in ro/" "" "$(ls -A ro)"
fi
# Usage errors.
"$etlkit" export "$t" -o x.db --quiet 2>/dev/null; check "no --to" 64 $?
"$etlkit" export "$t" --to sqlite --quiet 2>/dev/null; check "no -o" 64 $?
"$etlkit" export "$t" --to orc -o x --quiet 2>/dev/null; check "bad --to" 64 $?
"$etlkit" export "$t" --to sqlite -o x.db --tables slice,nope 2>/dev/null; check "bad --tables" 64 $?
"$etlkit" export "$t" --to perfetto -o x.pf --tables slice 2>/dev/null; check "--tables with perfetto" 64 $?
"$etlkit" export "$t" --to sqlite -o - 2>/dev/null; check "sqlite to stdout" 64 $?
"$etlkit" export --help | grep -q 'Usage: etlkit export' && ok || bad "--help"
check "nothing made by usage errors" "" "$(ls x.db x x.pf 2>/dev/null)"

# CSV: a new directory of OUT/<table>.csv; --force replaces our tables and keeps other files.
"$etlkit" export "$t" --to csv -o csv --quiet; check "csv" 0 $?
check "csv tables" "cswitch.csv enum_name.csv image.csv pmc.csv process.csv ready.csv sample.csv slice.csv spinlock.csv stack.csv thread.csv thread_state.csv trace.csv" "$(ls csv | tr '\n' ' ' | sed 's/ $//')"
check "csv header" "trace_id,cpu,utid,tid,start_ts" "$(head -1 csv/slice.csv | cut -d, -f1-5)"
check "csv CRLF" 1 "$(head -1 csv/slice.csv | od -c | grep -c '\\r')"
echo mine > csv/notes.txt
"$etlkit" export "$t" --to csv -o csv --quiet 2>/dev/null; check "csv over a directory, no --force" 1 $?
"$etlkit" export "$t" --to csv -o csv --force --tables slice --trace-id T2 --quiet; check "csv --force" 0 $?
check "csv --force kept other files" mine "$(cat csv/notes.txt)"
check "csv --force replaced slice.csv" T2 "$(sed -n 2p csv/slice.csv | cut -d, -f1)"
check "no temporary directory left" "" "$(ls -A | grep tmp)"
"$etlkit" export "$t" --to csv -o tcsv --tables slice,thread --quiet
check "csv --tables" "enum_name.csv slice.csv thread.csv trace.csv" "$(ls tcsv | tr '\n' ' ' | sed 's/ $//')"

# Standard output for the timelines.
"$etlkit" export "$t" --to ftrace -o - --quiet > s.ftrace; check "ftrace to stdout" 0 $?
cmp -s s.ftrace out.ftrace && ok || bad "ftrace to stdout = to a file"

# --range: the views equal etlkit cpu --range.
"$etlkit" export "$t" --to sqlite -o r.db --range 100ms 300ms --quiet; check "--range" 0 $?
"$etlkit" cpu "$t" --range 100ms 300ms --json > r.json
check "--range busy" "$(q :memory: "SELECT json_extract(readfile('r.json'), '\$.busy_ns')")" "$(q r.db 'SELECT SUM(busy_ns) FROM cpu_by_cpu')"
check "--range idle" "$(q :memory: "SELECT json_extract(readfile('r.json'), '\$.idle_ns')")" "$(q r.db 'SELECT SUM(idle_ns) FROM cpu_by_cpu')"
"$etlkit" waits "$t" --range 100ms 300ms --json > w.json
check "--range waits" "$(q :memory: "SELECT SUM(json_extract(value, '\$.wait_ns')) FROM json_each(json_extract(readfile('w.json'), '\$.by_reason'))")" "$(q r.db 'SELECT SUM(wait_ns) FROM waits_by_reason')"
check "--range cswitch rows in the window" 0 "$(q r.db 'SELECT COUNT(*) FROM cswitch WHERE ns < 100000000 OR ns >= 300000000')"

# Damaged and truncated inputs: exported anyway, exit 3, the damage recorded in `trace`.
head -c 150000 "$t" > trunc.etl
cp "$k" damaged.etl
# The header of the fourth buffer overwritten: its sizes become nonsense.
bs=$("$etlkit" info --json "$k" | sed 's/.*"buffer_size":\([0-9]*\).*/\1/')
printf '\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377' | dd of=damaged.etl bs=1 seek=$((bs * 3)) conv=notrunc 2>/dev/null
for f in trunc damaged; do
  for to in sqlite csv perfetto ftrace; do
    "$etlkit" export $f.etl --to $to -o $f.$to --quiet 2>/dev/null; check "$f --to $to" 3 $?
  done
  d=$(q $f.sqlite "SELECT SUM(int_value) FROM trace WHERE key IN ('bad_buffers', 'bad_records', 'truncated_buffers', 'decompress_errors')")
  [ "${d:-0}" -gt 0 ] && ok || bad "$f: damage in trace ($d)"
  check "$f: csv trace has the damage" "$d" "$(awk -F, '$2 ~ /^(bad_buffers|bad_records|truncated_buffers|decompress_errors)$/ { s += $4 } END { print s }' $f.csv/trace.csv)"
done
check "truncated: slices exported" 1 "$(q trunc.sqlite 'SELECT COUNT(*) > 0 FROM slice')"
for f in trunc damaged; do
  "$etlkit" export $f.etl --to parquet -o $f.parquet --quiet 2>/dev/null; check "$f --to parquet" 3 $?
  check "$f --to parquet: the tables" 13 "$(ls $f.parquet | wc -l)"
done

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
