#!/bin/sh
# run.sh BUILD SECONDS SAMPLES - runs every libFuzzer target for SECONDS, two at a time,
# seeded with tests/fuzz/seeds/NAME and, for the reader, the head of every real sample.
# Fails if any target finds a crash; the input is kept in BUILD/fuzz-artifacts.
set -eu
build=$1; secs=$2; samples=$3
here=$(cd "$(dirname "$0")" && pwd)
work="$build/fuzz-work"; art="$build/fuzz-artifacts"
rm -rf "$work"; mkdir -p "$work" "$art"
pids=""; names=""
fail=0
for bin in "$build"/tests/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  corpus="$work/$name"; mkdir -p "$corpus"
  [ -d "$here/seeds/$name" ] && cp "$here/seeds/$name"/* "$corpus"/ 2>/dev/null || true
  if [ "$name" = fuzz_sched ]; then
    # An ETL file behind a 0 byte: the synthesized fixtures, whose switches the model reads;
    # behind 0x34 too: ReadyThread skipped and the source on 5 threads, compared with 1.
    for s in "$here"/../data/synth-*.etl; do
      [ -f "$s" ] && { printf '\000'; head -c 131000 "$s"; } > "$corpus/$(basename "$s")"
      [ -f "$s" ] && { printf '\064'; head -c 131000 "$s"; } > "$corpus/t5-$(basename "$s")"
    done
  fi
  if [ "$name" = fuzz_reports ]; then
    # The synthesized fixtures behind a selector byte: each fixture once for every command (one command an
    # input runs fast; all of them at once is slow), the options (range, two threads, top, interval) varied.
    i=0
    for s in "$here"/../data/synth-*.etl; do
      [ -f "$s" ] || continue
      for c in 0 1 2 3 4 5 6; do
        sel=$(( c * 32 + (i * 7 + c * 3) % 32 ))
        { printf "\\$(printf '%03o' "$sel")"; head -c 131000 "$s"; } > "$corpus/c$c-$(basename "$s")"
      done
      i=$((i + 1))
    done
  fi
  if [ "$name" = fuzz_reader ] || [ "$name" = fuzz_convert ]; then
    cp "$here"/../data/regressions/*.etl "$corpus"/ 2>/dev/null || true
    for s in "$samples"/*.etl "$here"/../data/*.etl; do
      [ -f "$s" ] && head -c 65536 "$s" > "$corpus/$(basename "$s")"
    done
  fi
  if [ "$name" = fuzz_profile ]; then
    # The samples' heads: perfview-x64-compressed's holds SampledProfile, StackWalk (plain and by key) and Image
    # events; its first 128 KiB too (the longest input the runs take).
    for s in "$samples"/*.etl; do
      [ -f "$s" ] && head -c 65536 "$s" > "$corpus/$(basename "$s")"
    done
    [ -f "$samples/perfview-x64-compressed.etl" ] && head -c 131072 "$samples/perfview-x64-compressed.etl" > "$corpus/perfview-128k.etl"
  fi
  echo "fuzz: $name for ${secs}s" >&2
  "$bin" "$corpus" -max_total_time="$secs" -rss_limit_mb=2048 -max_len=131072 -timeout=20 \
      -artifact_prefix="$art/$name-" -print_final_stats=1 > "$work/$name.log" 2>&1 &
  pids="$pids $!"; names="$names $name"
  # Two cores: keep at most two fuzzers running.
  if [ "$(echo $pids | wc -w)" -ge 2 ]; then
    for p in $pids; do wait "$p" || fail=1; done
    pids=""
  fi
done
for p in $pids; do wait "$p" || fail=1; done
for n in $names; do
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$n.log" | grep -o '[0-9]*$' || echo '?')
  echo "fuzz: $n: $runs runs" >&2
done
if [ "$fail" -ne 0 ]; then
  echo "fuzz: a target failed; logs in $work, inputs in $art" >&2
  for n in $names; do grep -l -E "ERROR|deadly signal|runtime error" "$work/$n.log" >/dev/null 2>&1 && tail -40 "$work/$n.log" >&2; done
  exit 1
fi
echo "fuzz: all targets clean" >&2
