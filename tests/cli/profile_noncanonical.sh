#!/bin/sh
# profile_noncanonical.sh ETLKIT SAMPLES - an address no x64 code can have (0x0100000000000000..0xfeffffffffffffff,
# non-canonical with 4- and 5-level paging) in a sample's InstructionPointer, a stack key's definition or a plain stack walk is damage
# (explore23 F3): told with the record's file offset, exit 3, counted (--json anomalies.addresses_noncanonical); the
# address is kept, in no image (Unknown+0x...). 0 on undamaged traces, 32-bit ones included.
set -u
etlkit=$1; samples=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
check() { # check NAME EXPECTED_STATUS ACTUAL_STATUS
  if [ "$2" = "$3" ]; then passes=$((passes+1)); else echo "FAIL: $1: exit $3, expected $2" >&2; fails=$((fails+1)); fi
}
expect() { # expect NAME CONDITION...
  name=$1; shift
  if "$@"; then passes=$((passes+1)); else echo "FAIL: $name" >&2; fails=$((fails+1)); fi
}
command -v python3 >/dev/null 2>&1 || { echo "profile_noncanonical.sh: skipped: no python3"; exit 77; }
count() { # count FILE: anomalies.addresses_noncanonical of profile --json ("none": no such key)
  "$etlkit" profile --json "$1" 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["anomalies"].get("addresses_noncanonical", "none"))'
}
# damage IN OUT HOOK NTH AT [VALUE]: the NTH record (0-based, file order) of HOOK gets VALUE (0x0900000000000000) at
# payload byte AT; prints the record's file offset.
damage() {
  "$etlkit" dump --order file --format jsonl --filter "$3" "$1" >"$tmp/recs" || return 1
  bs=$("$etlkit" info --json "$1" | sed 's/.*"buffer_size":\([0-9]*\).*/\1/')
  python3 - "$1" "$2" "$tmp/recs" "$bs" "$4" "$5" "${6:-0x0900000000000000}" <<'PY'
import json, struct, sys
src, dst, recs, bs, nth, at = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
r = [json.loads(l) for l in open(recs)][nth]
d = bytearray(open(src, 'rb').read())
rec = r['buf'] * bs + r['off']
struct.pack_into('<Q', d, rec + r['size'] - r['len'] + at, int(sys.argv[7], 16))
open(dst, 'wb').write(d)
print('0x%x' % rec)
PY
}

"$etlkit" synth --quiet --seed 4 --duration 0.3 --stacks --stack-form cached -o "$tmp/c.etl" || exit 1
"$etlkit" synth --quiet --seed 5 --duration 0.3 --stacks --stack-form plain -o "$tmp/p.etl" || exit 1
for t in "$tmp/c.etl" "$tmp/p.etl" "$samples/perfview-x64-compressed.etl" "$samples/perfview-small-32bit.etl"; do
  expect "$(basename "$t"): none" [ "$(count "$t")" = 0 ]
done

# A sample's InstructionPointer (its payload's first 8 bytes) and a key definition's first frame (after its key).
at_ip=$(damage "$tmp/c.etl" "$tmp/ip.etl" 0x0F2E 40 0)
at_def=$(damage "$tmp/ip.etl" "$tmp/cd.etl" 0x1823 7 8)
"$etlkit" profile --json "$tmp/cd.etl" >"$tmp/json" 2>"$tmp/err"; check "ip and definition: damage" 3 $?
expect "ip and definition: both counted" [ "$(count "$tmp/cd.etl")" = 2 ]
expect "ip: warning at its offset" grep -q "file offset $at_ip, hook 0x0f2e.*InstructionPointer holding 0x0900000000000000" "$tmp/err"
expect "definition: warning at its offset" grep -q "file offset $at_def, hook 0x1823.* holding 0x0900000000000000" "$tmp/err"
"$etlkit" profile --folded "$tmp/cd.etl" >"$tmp/folded" 2>/dev/null; check "ip and definition: --folded" 3 $?
expect "ip: kept in no image" grep -q '"function":"Unknown+0x900000000000000"' "$tmp/json"
expect "text: damage too" sh -c '"$1" profile "$2" >/dev/null 2>&1; [ $? = 3 ]' _ "$etlkit" "$tmp/cd.etl"

# An address canonical with 5-level paging alone (a kernel of a machine with LA57 may live there): not damage.
damage "$tmp/c.etl" "$tmp/la57.etl" 0x0F2E 40 0 0xff00001234560000 >/dev/null
"$etlkit" profile --json "$tmp/la57.etl" >/dev/null 2>&1; check "an LA57 kernel address: no damage" 0 $?
expect "an LA57 kernel address: not counted" [ "$(count "$tmp/la57.etl")" = 0 ]

# A plain walk's innermost frame (after its 16-byte head), a few of them: those of samples counted, kept.
cp "$tmp/p.etl" "$tmp/w0.etl"
for k in 0 1 2 3 4 5 6 7 8 9; do damage "$tmp/w$k.etl" "$tmp/w$((k + 1)).etl" 0x1820 $((k * 7)) 16 >/dev/null; done
n=$(count "$tmp/w10.etl")
expect "walks: counted ($n)" sh -c 'case $1 in "" | *[!0-9]*) exit 1 ;; esac; [ "$1" -ge 1 ] && [ "$1" -le 10 ]' _ "$n"
"$etlkit" profile --folded "$tmp/w10.etl" >"$tmp/folded" 2>"$tmp/err"; check "walks: damage" 3 $?
expect "walks: one warning each" [ "$(grep -c 'hook 0x1820, a stack walk holding 0x0900000000000000' "$tmp/err")" = "$n" ]
expect "walks: kept in no image" grep -q "Unknown+0x900000000000000" "$tmp/folded"

echo "profile_noncanonical.sh: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
