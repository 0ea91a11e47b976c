#!/bin/sh
# large.sh ETLKIT WORK [BOUND_MIB] - a 1 GiB synthesized trace (synth --preset large) exported to
# SQLite, CSV, Perfetto and ftrace, each within a memory bound (peak resident set, VmHWM, default
# 512 MiB: the live threads, SQLite's 64 MiB page cache and its index sorts, the reader's window).
# Not in the default run (minutes): cmake -DETLKIT_EXPORT_LARGE_TEST=ON, then ctest -L export-large.
set -u
etlkit=$(cd "$(dirname "$1")" && pwd)/$(basename "$1"); work=$2; bound=${3:-512}
mkdir -p "$work"; cd "$work" || exit 1
[ -f large.etl ] || "$etlkit" synth --preset large -o large.etl --quiet || { echo "FAIL: synth"; exit 1; }
fails=0; passes=0
for to in sqlite csv perfetto ftrace; do
  rm -rf "out.$to"
  start=$(date +%s)
  "$etlkit" export large.etl --to $to -o "out.$to" --quiet &
  pid=$!; peak=0
  while kill -0 $pid 2>/dev/null; do
    hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$pid/status 2>/dev/null)
    [ -n "$hwm" ] && [ "$hwm" -gt "$peak" ] && peak=$hwm
    sleep 0.2
  done
  wait $pid; rc=$?
  echo "$to: exit $rc, $(( $(date +%s) - start )) s, peak RSS $((peak / 1024)) MiB"
  if [ $rc -eq 0 ] && [ $((peak / 1024)) -le "$bound" ]; then passes=$((passes+1)); else fails=$((fails+1)); echo "FAIL: $to"; fi
  rm -rf "out.$to"
done
echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
