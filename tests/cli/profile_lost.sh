#!/bin/sh
# profile_lost.sh ETLKIT SAMPLES - stacks resolved across lost records (explore23 F2 b): a stack-key reference takes
# its key's next definition of its part; when a buffer between the two was lost, its own may have been there and the
# one taken another sample's. Such references are counted (key_refs_uncertain) in every form profile's other
# anomalies are told (--json, the note, the report's flame text; switches' note), and 0 when nothing was lost.
set -u
etlkit=$1; samples=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
expect() { # expect NAME CONDITION...
  name=$1; shift
  if "$@"; then passes=$((passes+1)); else echo "FAIL: $name" >&2; fails=$((fails+1)); fi
}
command -v python3 >/dev/null 2>&1 || { echo "profile_lost.sh: skipped: no python3 to read the JSON"; exit 77; }
# uncertain FILE: profile --json's anomalies.key_refs_uncertain ("none" when the key is missing).
uncertain() {
  "$etlkit" profile --json "$1" 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["anomalies"].get("key_refs_uncertain", "none"))'
}
positive() { case $1 in '' | *[!0-9]*) return 1 ;; esac; [ "$1" -gt 0 ]; }

"$etlkit" synth --quiet --seed 5 --duration 1 --stacks --stack-form both -o "$tmp/b.etl" || exit 1
"$etlkit" synth --quiet --seed 7 --duration 1 --stacks --cswitch compact -o "$tmp/cc.etl" || exit 1
for t in "$tmp/b.etl" "$tmp/cc.etl" "$samples/perfview-x64-compressed.etl" "$samples/perfview-small-32bit.etl"; do
  b=$(basename "$t")
  expect "$b: nothing lost, nothing uncertain" [ "$(uncertain "$t")" = 0 ]
  "$etlkit" profile "$t" >/dev/null 2>"$tmp/err"
  expect "$b: no note" [ "$(grep -c 'lost records between' "$tmp/err")" = 0 ]
done

# One buffer zeroed whole (header too: a SequenceNumber missing), in the middle of each trace.
zero() { # zero IN OUT BUFFER
  cp "$1" "$2"
  bs=$("$etlkit" info --json "$2" | sed 's/.*"buffer_size":\([0-9]*\).*/\1/')
  dd if=/dev/zero of="$2" bs="$bs" seek="$3" count=1 conv=notrunc 2>/dev/null
}
zero "$tmp/b.etl" "$tmp/bz.etl" 20
zero "$tmp/cc.etl" "$tmp/ccz.etl" 15
for t in "$tmp/bz.etl" "$tmp/ccz.etl"; do
  b=$(basename "$t")
  n=$(uncertain "$t")
  expect "$b: references resolved across the lost buffer counted ($n)" positive "$n"
  "$etlkit" profile "$t" >/dev/null 2>"$tmp/err"
  expect "$b: the note says how many" grep -q "note: .*: $n stack references took their key's next definition of their part while the trace lost records between the two" "$tmp/err"
  "$etlkit" report "$t" -o "$tmp/$b.html" >/dev/null 2>&1
  expect "$b: the report's flame text says it" grep -q "$n stack references took their key[^ ]*s next definition" "$tmp/$b.html"
  "$etlkit" switches --json "$t" >/dev/null 2>"$tmp/err"
  expect "$b: switches' note" grep -q "stack references took their key's next definition .* those rows' stacks may be another event's" "$tmp/err"
done
# A file cut short: each CPU's time after its last record is lost.
bs=$("$etlkit" info --json "$tmp/b.etl" | sed 's/.*"buffer_size":\([0-9]*\).*/\1/')
head -c $((bs * 30 + bs / 2)) "$tmp/b.etl" >"$tmp/cut.etl"
n=$(uncertain "$tmp/cut.etl")
expect "cut.etl: references resolved across the cut counted ($n)" positive "$n"

echo "profile_lost.sh: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
