#!/bin/sh
# compact_gap.sh ETLKIT - a compact trace (switches in 0x0525 batches) missing a buffer: the batch that buffer held
# carried the CPU's switches from its last batch's last switch on, some before the last record of the CPU's buffer
# before the gap (a batch is logged after its switches). Those switches are lost, so the thread running there is
# not known: a ReadyThread there has no known readier. Every value switches --json gives for such a trace is the
# whole trace's (an unknown one is left out, or named Unknown); and so for one cut short.
set -u
etlkit=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
expect() { # expect NAME CONDITION...
  name=$1; shift
  if "$@"; then passes=$((passes+1)); else echo "FAIL: $name" >&2; fails=$((fails+1)); fi
}
command -v python3 >/dev/null 2>&1 || { echo "compact_gap.sh: skipped: no python3"; exit 77; }
# wrong WHOLE DAMAGED: how many values of switches --json rows found in both differ (readier, ready time, waits).
wrong() {
  "$etlkit" switches --json "$1" >"$tmp/w.json" 2>/dev/null
  "$etlkit" switches --json "$2" >"$tmp/d.json" 2>/dev/null
  python3 - "$tmp/w.json" "$tmp/d.json" <<'PY'
import json, sys
def rows(p):
    m = {}
    for l in open(p):
        d = json.loads(l)
        m[(d["cpu"], d["switch_in_ts"], d.get("new_tid"))] = d
    return m
w, d = rows(sys.argv[1]), rows(sys.argv[2])
fields = ("readying_tid", "readying_process", "ready_time_ns", "ready_ns", "waits_ns", "old_tid")
# "Unknown": a name the damaged trace does not know (the thread's process start was lost), said so.
bad = [(k, f, v[f], w[k].get(f)) for k, v in d.items() if k in w for f in fields
       if f in v and v[f] != "Unknown" and v[f] != w[k].get(f)]
for b in bad[:5]:
    print(b, file=sys.stderr)
print(len(bad) if len(d) > 1000 else "few rows")
PY
}
# zero FILE BUFFER: the buffer (4 KiB) zeroed whole, its SequenceNumber missing.
zero() { dd if=/dev/zero of="$1" bs=4096 seek="$2" count=1 conv=notrunc 2>/dev/null; }

for seed in 7 11; do
  "$etlkit" synth --quiet --force --seed $seed --duration 1 --cswitch compact --buffer-size 4K -o "$tmp/c.etl" || exit 1
  for b in 30 60; do
    cp "$tmp/c.etl" "$tmp/z.etl"
    zero "$tmp/z.etl" $b
    n=$(wrong "$tmp/c.etl" "$tmp/z.etl")
    expect "seed $seed, buffer $b zeroed: no switch row's value differs from the whole trace's ($n)" [ "$n" = 0 ]
  done
  # Cut short at a buffer boundary: each CPU's switches after its last batch's last switch went with the cut
  # (etl_reader_cpu_known_until), though records of its last buffer follow.
  for b in 30 31 60 63; do
    head -c $((b * 4096)) "$tmp/c.etl" >"$tmp/cut.etl"
    n=$(wrong "$tmp/c.etl" "$tmp/cut.etl")
    expect "seed $seed, cut after $b buffers: no switch row's value differs from the whole trace's ($n)" [ "$n" = 0 ]
  done
done

echo "compact_gap.sh: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
