#!/bin/sh
# dir_formats.sh ETLKIT DATA WORK - `export --to csv|parquet --force` over a folder that holds the other
# format's export: the folder holds one export, never a mix (README), so the tables of every format
# etlkit writes there (<table>.csv, <table>.parquet) are replaced as one; the user's other files,
# notes.csv or a.parquet among them, stay.
set -u
etlkit=$1; data=$2; work=$3
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
passes=0; fails=0
ok() { passes=$((passes+1)); }
bad() { echo "FAIL: $*"; fails=$((fails+1)); }
check() { # check NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then ok; else bad "$1: got '$3', expected '$2'"; fi
}
a=$data/synth-64-qpc-full.etl; c=$data/synth-32-qpc-compact-z.etl
tables="cswitch enum_name image pmc process ready sample slice spinlock stack thread thread_state trace"
files() { for t in $tables; do printf '%s.%s ' "$t" "$1"; done; }
ls1() { ls "$1" | LC_ALL=C sort | tr '\n' ' '; }
sorted() { echo $* | tr ' ' '\n' | LC_ALL=C sort | tr '\n' ' '; }

"$etlkit" export "$a" --to csv -o out --quiet; check "csv" 0 $?
echo mine > out/notes.csv; echo mine > out/a.parquet; echo mine > out/notes.txt
"$etlkit" export "$c" --to parquet -o out --force --quiet; check "parquet --force over a csv export" 0 $?
check "only the parquet tables, and the user's files" "$(sorted a.parquet $(files parquet) notes.csv notes.txt)" "$(ls1 out)"
check "the user's files kept" "mine mine mine" "$(cat out/notes.csv out/a.parquet out/notes.txt | tr '\n' ' ' | sed 's/ $//')"
check "slice.parquet written" PAR1 "$(head -c 4 out/slice.parquet)"
"$etlkit" export "$a" --to csv -o out --force --tables slice,thread --quiet; check "csv --force --tables over a parquet export" 0 $?
check "only the csv tables written" "a.parquet enum_name.csv notes.csv notes.txt slice.csv thread.csv trace.csv " "$(ls1 out)"
"$etlkit" export "$c" --to parquet -o out --force --tables ready --quiet; check "parquet --force --tables" 0 $?
check "only the parquet tables written" "a.parquet enum_name.parquet notes.csv notes.txt ready.parquet trace.parquet " "$(ls1 out)"
# Without --force an existing folder is refused, whatever it holds; a table of the other format that is not
# a regular file (a directory in the way) is refused before anything is read, the folder as it was.
"$etlkit" export "$a" --to csv -o out --quiet 2>/dev/null; check "no --force" 1 $?
mkdir out/slice.csv
"$etlkit" export "$a" --to parquet -o out --force --quiet 2>err; check "a directory slice.csv, --force" 1 $?
grep -q 'slice.csv' err && ok || bad "the refusal names slice.csv: $(cat err)"
check "the folder as it was" "a.parquet enum_name.parquet notes.csv notes.txt ready.parquet slice.csv trace.parquet " "$(ls1 out)"
# The input among the other format's files: refused (64), kept.
rmdir out/slice.csv; cp "$a" out/stack.csv
"$etlkit" export out/stack.csv --to parquet -o out --force --quiet 2>/dev/null; check "the input as stack.csv" 64 $?
cmp -s out/stack.csv "$a" && ok || bad "the input kept"

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
