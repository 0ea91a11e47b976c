#!/bin/sh
# long.sh BUILD SECONDS SAMPLES - `make fuzz-long` (not in CI): every libFuzzer target in BUILD for
# SECONDS each, two at a time. Corpora are kept in BUILD/fuzz-corpus/NAME and grow from run to run
# (seeded on first use as run.sh seeds); a crashing input goes to BUILD/fuzz-artifacts. Prints one line
# per target: runs, corpus size, coverage, crash or clean. Fails if any target found a crash.
set -eu
build=$1; secs=$2; samples=$3
here=$(cd "$(dirname "$0")" && pwd)
keep="$build/fuzz-corpus"; art="$build/fuzz-artifacts"; logs="$build/fuzz-long-logs"
mkdir -p "$keep" "$art" "$logs"
pids=""; names=""; fail=0
for bin in "$build"/tests/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin"); corpus="$keep/$name"
  if [ ! -d "$corpus" ]; then
    mkdir -p "$corpus"
    [ -d "$here/seeds/$name" ] && cp "$here/seeds/$name"/* "$corpus"/ 2>/dev/null || true
    cp "$here"/../data/regressions/*.etl "$corpus"/ 2>/dev/null || true
    for s in "$samples"/*.etl "$here"/../data/*.etl; do
      [ -f "$s" ] && head -c 65536 "$s" > "$corpus/$(basename "$s")"
    done
  fi
  echo "fuzz-long: $name for ${secs}s, corpus $corpus" >&2
  "$bin" "$corpus" -max_total_time="$secs" -rss_limit_mb=2048 -max_len=131072 -timeout=20 \
      -artifact_prefix="$art/$name-" -print_final_stats=1 > "$logs/$name.log" 2>&1 &
  pids="$pids $!"; names="$names $name"
  if [ "$(echo $pids | wc -w)" -ge 2 ]; then
    for p in $pids; do wait "$p" || fail=1; done
    pids=""
  fi
done
for p in $pids; do wait "$p" || fail=1; done
for n in $names; do
  log="$logs/$n.log"
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')
  files=$(ls "$keep/$n" | wc -l)
  if grep -q -E "ERROR|deadly signal|runtime error|Test unit written" "$log"; then verdict="CRASH (see $log, $art)"; fail=1
  else verdict=clean; fi
  echo "fuzz-long: $n: $runs runs, corpus $files files, cov $cov, $verdict"
done
[ "$fail" -eq 0 ]
