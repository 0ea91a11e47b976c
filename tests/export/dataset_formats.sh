#!/bin/sh
# dataset_formats.sh ETLKIT WORK - a dataset holds one format (README, Fleets): a run in the other
# format into an existing dataset, --force or --resume, is refused (64) in one line that names the
# dataset's format and the way out, the dataset as it was; --force removes every partition file of
# a trace whatever its format (a dataset mixed by an etlkit before this check), and an input among
# those files is refused. Two inputs with one ID: each named with its own ID, or told they are one file.
# The single-file export refuses a dataset folder, --force too (its tables would land among the
# partitions), and says which command adds a trace to it.
set -u
etlkit=$1; work=$2
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
state() { (cd "$1" && find . | LC_ALL=C sort && cat _manifest.json _traces/*.json); }
# Standard input in a dataset: a usage error before anything is made (it said '-: No such file or directory',
# exit 1, leaving DS with empty table folders and a manifest).
"$etlkit" synth -q --seed 1 --duration 0.2 -o in.etl || exit 1
for args in "- --dataset" "in.etl -"; do
  # shellcheck disable=SC2086
  "$etlkit" export $args --to csv -o stdin-ds --quiet <in.etl 2>err.txt; rc=$?
  [ $rc -eq 64 ] || fail "a dataset of '$args': exit $rc, not 64"
  grep -q 'standard input' err.txt || fail "a dataset of '$args': the refusal: $(cat err.txt)"
  [ -e stdin-ds ] && fail "a dataset of '$args': stdin-ds made"
  rm -rf stdin-ds
done
for s in 1 2 3; do "$etlkit" synth -q --seed $s --duration 0.2 -o tr$s.etl || exit 1; done
"$etlkit" export tr1.etl tr2.etl --to parquet -o ds --quiet || fail "the parquet dataset"
state ds >before.txt

# --force in the other format: refused, nothing touched.
"$etlkit" export tr1.etl --dataset --to csv -o ds --force --quiet 2>err.txt; rc=$?
[ $rc -eq 64 ] || fail "--force --to csv into a parquet dataset: exit $rc, not 64"
head -1 err.txt | grep 'parquet dataset' | grep -q -- '--to parquet' ||
  fail "the refusal names neither the dataset's format nor --to parquet in one line: $(cat err.txt)"
state ds >after.txt; cmp -s before.txt after.txt || fail "a refused --force changed the dataset"
# --resume with a new trace in the other format: refused, nothing touched.
"$etlkit" export tr3.etl --dataset --to csv -o ds --resume --quiet 2>err.txt; rc=$?
[ $rc -eq 64 ] || fail "--resume --to csv with a new trace into a parquet dataset: exit $rc, not 64"
grep -q 'parquet dataset' err.txt || fail "the --resume refusal: $(cat err.txt)"
state ds >after.txt; cmp -s before.txt after.txt || fail "a refused --resume changed the dataset"
[ -e ds/slice/trace_id=tr3 ] && fail "a partition of the refused trace"
# The manifest alone says the format when no record is left (every record is a trace's own).
cp -r ds dsm; rm dsm/_traces/*.json
"$etlkit" export tr3.etl --dataset --to csv -o dsm --resume --quiet 2>err.txt; rc=$?
[ $rc -eq 64 ] || fail "a dataset whose manifest says parquet, no records, --to csv: exit $rc, not 64"
# The dataset's own format: accepted.
"$etlkit" export tr3.etl --dataset --to parquet -o ds --resume --quiet || fail "--resume --to parquet with a new trace"
[ -f ds/slice/trace_id=tr3/part-0.parquet ] || fail "tr3's partition"

# A dataset mixed by an earlier etlkit: --force removes the trace's partition files of every format.
cp ds/slice/trace_id=tr2/part-0.parquet ds/slice/trace_id=tr1/part-0.csv
echo mine >ds/slice/trace_id=tr1/notes.txt
"$etlkit" synth -q --seed 5 --duration 0.2 -o tr1.etl --force || exit 1   # tr1 recorded again
"$etlkit" export tr1.etl --dataset --to parquet -o ds --force --quiet || fail "--force --to parquet of tr1"
[ "$(ls ds/slice/trace_id=tr1 | LC_ALL=C sort | tr '\n' ' ')" = "notes.txt part-0.parquet " ] ||
  fail "tr1's partition after --force: $(ls ds/slice/trace_id=tr1 | tr '\n' ' ')"
# An input among those files (a hard link of it as another format's partition): refused, kept.
ln tr3.etl ds/cswitch/trace_id=tr3/part-0.csv
"$etlkit" export tr3.etl --dataset --to parquet -o ds --force --quiet 2>err.txt; rc=$?
[ $rc -eq 64 ] || fail "the input as another format's partition file: exit $rc, not 64 ($(cat err.txt))"
[ -f ds/cswitch/trace_id=tr3/part-0.csv ] || fail "the input's link removed"
rm ds/cswitch/trace_id=tr3/part-0.csv

# The single-file export into a dataset folder: refused with or without --force, the right command told.
state ds >before.txt
for force in "" --force; do
  "$etlkit" export tr3.etl --to parquet -o ds $force --quiet 2>err.txt; rc=$?
  [ $rc -eq 1 ] || fail "export FILE -o DS $force: exit $rc, not 1"
  grep -q -- '--dataset' err.txt && ! grep -q 'use --force' err.txt ||
    fail "export FILE -o DS $force: the message does not tell --dataset: $(cat err.txt)"
  "$etlkit" export tr3.etl --to csv -o ds/ $force --quiet 2>/dev/null; rc=$?
  [ $rc -eq 1 ] || fail "export FILE --to csv -o DS/ $force: exit $rc, not 1"
done
state ds >after.txt; cmp -s before.txt after.txt || fail "a refused single-file export changed the dataset"

# Two inputs with one ID: each file's own ID named; one file given twice is said so (renaming cannot help).
mkdir -p fl/a fl/c; cp tr2.etl fl/a/tr2.etl; cp tr3.etl fl/c/TR2.etl
"$etlkit" export fl/a/tr2.etl fl/c/TR2.etl --to parquet -o dup --quiet 2>err.txt; rc=$?
[ $rc -eq 64 ] || fail "two IDs differing in case: exit $rc, not 64"
grep -q "'tr2' and 'TR2'" err.txt && grep -q 'rename one' err.txt || fail "the IDs of both files: $(cat err.txt)"
for twice in "fl/a/tr2.etl fl/a/tr2.etl" "fl/a/tr2.etl ./fl/c/../a/tr2.etl"; do
  "$etlkit" export $twice --to parquet -o dup --quiet 2>err.txt; rc=$?
  [ $rc -eq 64 ] || fail "one file given twice ($twice): exit $rc, not 64"
  grep -q 'given twice' err.txt && ! grep -q 'rename' err.txt || fail "one file given twice ($twice): $(cat err.txt)"
done
[ -e dup ] && fail "a refused run made its dataset"

[ $fails -eq 0 ] && echo "dataset_formats: all checks passed"
[ $fails -eq 0 ]
