#!/bin/sh
# dataset_told.sh ETLKIT WORK - what `etlkit export A.etl B.etl ... -o DS` says about a dataset that
# holds more than this run's traces, or keeps an earlier export of a trace that now fails: the summary
# counts the traces given and says how many DS holds (a resumed run of one file said "1 of 1 traces in
# the dataset" of a dataset of three); a trace that fails while DS keeps its earlier export (another
# file under its name) says so on its line, in the summary and in the manifest's failed entry (it was
# listed among the traces and the failures with nothing to tell which); exit statuses.
set -u
etlkit=$1; work=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
for s in 1 2 3; do "$etlkit" synth -o t$s.etl --seed $s --duration 100ms --quiet || exit 1; done
head -c 5000 /dev/zero >bad.etl

"$etlkit" export t1.etl t2.etl --to csv -o DS 2>err.txt; rc=$?
[ $rc -eq 0 ] || { cat err.txt; fail "first run: exit $rc"; }
grep -q 'DS: 2 of 2 traces given in the dataset (2 exported, 0 kept from before, 0 failed); it holds 2 traces;' err.txt ||
  { cat err.txt; fail "first run: the summary"; }
# Resumed with one more trace and one that fails: 3 of 4 given, DS holds 3.
"$etlkit" export t1.etl t2.etl t3.etl bad.etl --to csv -o DS --resume 2>err.txt; rc=$?
[ $rc -eq 1 ] || fail "resume with a failure: exit $rc, not 1"
grep -q 'DS: 3 of 4 traces given in the dataset (1 exported, 2 kept from before, 1 failed); it holds 3 traces;' err.txt ||
  { cat err.txt; fail "resume with a failure: the summary"; }
grep 'bad\.etl' err.txt | grep -q 'earlier export' && fail "bad.etl has no earlier export, yet one is said"
# Resumed with one file: its count, and the dataset's three.
"$etlkit" export t3.etl --dataset --to csv -o DS --resume 2>err.txt; rc=$?
[ $rc -eq 0 ] || fail "resume of one: exit $rc"
grep -q 'DS: 1 of 1 trace given in the dataset (0 exported, 1 kept from before, 0 failed); it holds 3 traces;' err.txt ||
  { cat err.txt; fail "resume of one: the dataset's own count is not said"; }
# t2.etl now another file that fails: its earlier export stays, and is told so.
cp t2.etl t2.keep; head -c 3000 /dev/zero >t2.etl
"$etlkit" export t1.etl t2.etl t3.etl --to csv -o DS --resume 2>err.txt; rc=$?
[ $rc -eq 1 ] || fail "a changed trace that fails: exit $rc, not 1"
[ -f DS/slice/trace_id=t2/part-0.csv ] && [ -f DS/_traces/t2.json ] || fail "the earlier export of t2 was removed"
grep 't2\.etl' err.txt | grep -q "keeps trace t2's earlier export" || { cat err.txt; fail "t2's line does not say its earlier export stays"; }
grep -q '1 failed, 1 of them with an earlier export left in place); it holds 3 traces' err.txt ||
  { cat err.txt; fail "the summary does not count the earlier export kept"; }
tr -d '\n' <DS/_manifest.json | grep -q '"failed":\[{"id":"t2"[^}]*"earlier_export_kept":true}' ||
  { cat DS/_manifest.json | tail -3; fail "the manifest's failed entry does not say the earlier export stays"; }
# --quiet: the summary still comes with a failure.
"$etlkit" export t1.etl t2.etl --to csv -o DS --resume --quiet 2>err.txt
grep -q 'of 2 traces given' err.txt || fail "--quiet with a failure: no summary"
cp t2.keep t2.etl
[ $fails -eq 0 ] && echo "dataset_told: all checks passed"
[ $fails -eq 0 ]
