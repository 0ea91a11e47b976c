#!/bin/sh
# synth_stacks.sh ETLKIT - `etlkit synth --stacks` through the CLI: 64- and 32-bit traces in
# each stack form decode whole (`dump` prints no record with an "error", every profile, stack
# and image hook is there), `info` finds no damage, the truth file has the new line types,
# the same seed writes the same bytes, and without --stacks none of those events is written.
set -eu
etlkit=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "synth_stacks: $*" >&2; exit 1; }

for flavour in "64 both" "32 both" "64 plain" "32 cached"; do
  set -- $flavour
  name="s$1-$2"
  "$etlkit" synth --quiet --stacks --pointer-size "$1" --stack-form "$2" --cswitch both --churn 60 \
    --duration 0.5 --seed 5 -o "$dir/$name.etl" --truth "$dir/$name.jsonl" || fail "synth $name"
  "$etlkit" dump "$dir/$name.etl" --format jsonl > "$dir/$name.dump" || fail "dump $name"
  if grep -q '"error"' "$dir/$name.dump"; then grep -m3 '"error"' "$dir/$name.dump" >&2; fail "$name: undecodable records"; fi
  "$etlkit" info "$dir/$name.etl" > "$dir/$name.info" || fail "info $name"
  for k in "bad buffers" "bad records" "skipped bytes" "truncated buffers" "decompress errors" "unsupported buffers"; do
    grep -Eq "^  $k +0\$" "$dir/$name.info" || fail "$name: info reports $k"
  done
  hooks="3886 3913 3914 5123 5124 778 5122"
  case $2 in
    plain) hooks="$hooks 6176" ;;
    cached) hooks="$hooks 6179 6180 6181 6182" ;;
    both) hooks="$hooks 6176 6179 6180 6181 6182" ;;
  esac
  for h in $hooks; do
    grep -q "\"hook\":$h," "$dir/$name.dump" || fail "$name: no record with hook $h"
  done
  for t in image sample stack; do
    grep -q "^{\"type\":\"$t\"" "$dir/$name.jsonl" || fail "$name: no $t line in the truth"
  done
  head -1 "$dir/$name.jsonl" | grep -q '"profile_interval":10000,"stacks":true}$' || fail "$name: meta line"
done

"$etlkit" synth --quiet --stacks --pointer-size 32 --stack-form both --cswitch both --churn 60 \
  --duration 0.5 --seed 5 -o "$dir/again.etl" || fail "synth again"
cmp -s "$dir/s32-both.etl" "$dir/again.etl" || fail "the same seed wrote other bytes"

"$etlkit" synth --quiet --duration 0.5 -o "$dir/off.etl" --truth "$dir/off.jsonl" || fail "synth off"
"$etlkit" dump "$dir/off.etl" --format jsonl > "$dir/off.dump" || fail "dump off"
for h in 3886 3913 6176 6181 5123 778; do
  if grep -q "\"hook\":$h," "$dir/off.dump"; then fail "without --stacks: a record with hook $h"; fi
done
if grep -Eq '"type":"(image|sample|stack)"|"stacks"' "$dir/off.jsonl"; then fail "without --stacks: stack truth lines"; fi
echo "synth_stacks: ok"
