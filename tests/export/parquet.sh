#!/bin/sh
# parquet.sh ETLKIT TEST_EXPORT_PARQUET MODDIR WORK SCRIPT DATA SAMPLES - `etlkit export --to parquet`
# read by a real engine: DuckDB (@duckdb/node-api, installed once under the build folder in MODDIR, as
# duckdb.sh does) reads the writer's fixture and the Parquet export of synthesized traces, of every real
# sample and of damaged copies, and finds every value of the SQLite export of the same trace
# (duckdb_parquet.mjs). A hostile copy (blocks of bytes overwritten all over) must export or fail
# cleanly, never crash. Exit 77 (ctest: skipped) with one line when node, npm or the registry is not there.
set -u
etlkit=$1; unit=$2; moddir=$3; work=$4; script=$5; data=$6; samples=$7
. "$(dirname "$0")/duckdb_have.sh"
rm -rf "$work"; mkdir -p "$work"
fail=0
"$unit" --fixture "$work" || { echo "FAIL: test_export_parquet --fixture"; exit 1; }
node "$script" "$moddir" fixture "$work/fixture.parquet" || fail=1

# Damaged copies of a synthesized trace: truncated, a buffer header overwritten (cli.sh's), and hostile.
t=$data/synth-64-qpc-both-z.etl
head -c 150000 "$t" > "$work/trunc.etl"
cp "$t" "$work/damaged.etl"
bs=$("$etlkit" info --json "$t" | sed 's/.*"buffer_size":\([0-9]*\).*/\1/')
printf '\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377' |
  dd of="$work/damaged.etl" bs=1 seek=$((bs * 3)) conv=notrunc 2>/dev/null
cp "$data/synth-64-qpc-full.etl" "$work/hostile.etl"
size=$(wc -c < "$work/hostile.etl")
off=1000
while [ $off -lt "$size" ]; do # 48 bytes of 0xFF or 0x00 every 7 KiB or so, headers and payloads alike
  head -c 48 /dev/zero | { [ $((off % 2)) -eq 0 ] && tr '\000' '\377' || cat; } |
    dd of="$work/hostile.etl" bs=1 seek=$off conv=notrunc 2>/dev/null
  off=$((off + 7177))
done

pairs=""
for f in "$data/synth-64-qpc-both-z.etl" "$data/synth-32-cycles-full-z.etl" "$data/synth-64-system-both.etl" \
         "$data/synth-32-qpc-compact-z.etl" "$samples"/*.etl "$work/trunc.etl" "$work/damaged.etl" "$work/hostile.etl"; do
  [ -f "$f" ] || continue
  n=$(basename "$f" .etl)
  "$etlkit" export "$f" --to parquet -o "$work/$n.pq" --quiet 2>"$work/$n.err"; rc=$?
  "$etlkit" export "$f" --to sqlite -o "$work/$n.db" --quiet 2>/dev/null; lrc=$?
  if [ $rc -ne $lrc ] || { [ $rc -ne 0 ] && [ $rc -ne 3 ]; }; then
    echo "FAIL: $n: export --to parquet exit $rc, --to sqlite $lrc: $(cat "$work/$n.err")"; fail=1; continue
  fi
  case $n in trunc|damaged) [ $rc -eq 3 ] || { echo "FAIL: $n: exit $rc, 3 expected"; fail=1; } ;; esac
  pairs="$pairs $work/$n.pq $work/$n.db"
done
# shellcheck disable=SC2086
node "$script" "$moddir" export $pairs || fail=1
[ $fail -eq 0 ] && echo "parquet.sh: every file read back by DuckDB equals the SQLite export"
exit $fail
