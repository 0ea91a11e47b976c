#!/bin/sh
# convert_compact_gap.sh ETLKIT - convert --cswitch full of a compact trace (switches in 0x0525 batches) missing a
# buffer: a ReadyThread's readier is the whole trace's or unknown. The batch the lost buffer held carried its CPU's
# switches from its last batch's last switch on (a batch is logged after its switches), so that switch's new thread
# is not known and the CPU's switches after it, up to the next batch found, are lost, though its buffer before the gap
# goes on with records (ReadyThreads) after it. The input's reader begins the CPU's span at that switch (307f5b9);
# CSwitch events are read up to the CPU's last record, so the expanded switch was written with the new thread the
# batch after the gap pairs it with, taken as running through those ReadyThreads: their readier was that thread (16 to
# 123 readier values of switches --json differed from the whole trace's with its ready time). It is now written with its new thread not known (all
# ones). Every readier switches --json gives for the output, with the whole trace's ready time, is the whole trace's,
# and every value it gives for the damaged input it gives for the output too.
# Not checked, left: ready times and waits that a ReadyThread or switch-out lost there would change (1 to 17 values
# per trace; the same before): the output's span on that CPU still begins at its last record, and switches of any
# thread lost after the batch's last switch are not seen by the CPU's other slices.
set -u
etlkit=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
expect() { # expect NAME CONDITION...
  name=$1; shift
  if "$@"; then passes=$((passes+1)); else echo "FAIL: $name" >&2; fails=$((fails+1)); fi
}
command -v python3 >/dev/null 2>&1 || { echo "convert_compact_gap.sh: skipped: no python3"; exit 77; }
# check WHOLE DAMAGED OUTPUT: "WRONG LESS": readiers of switches --json rows of OUTPUT with WHOLE's ready time that
# differ from WHOLE's, and values DAMAGED gives (readier, ready time, waits) that OUTPUT does not (a row or a value).
check() {
  "$etlkit" switches --json "$1" >"$tmp/w.json" 2>/dev/null
  "$etlkit" switches --json "$2" >"$tmp/d.json" 2>/dev/null
  "$etlkit" switches --json "$3" >"$tmp/o.json" 2>/dev/null
  python3 - "$tmp/w.json" "$tmp/d.json" "$tmp/o.json" <<'PY'
import json, sys
def rows(p):
    m = {}
    for l in open(p):
        d = json.loads(l)
        m[(d["cpu"], d["switch_in_ts"], d.get("new_tid"))] = d
    return m
w, d, o = (rows(p) for p in sys.argv[1:4])
fields = ("readying_tid", "readying_process", "ready_time_ns", "ready_ns", "waits_ns", "old_tid")
known = lambda r, f: f in r and r[f] != "Unknown"
# "Unknown": a name the damaged trace does not know (the thread's process start was lost), said so.
wrong = [(k, f, v[f], w[k].get(f)) for k, v in o.items() if k in w and v.get("ready_time_ns") == w[k].get("ready_time_ns")
         for f in ("readying_tid", "readying_process") if known(v, f) and v[f] != w[k].get(f)]
# A row whose new thread the input does not know (its slice across the loss) may be known in the output: the same
# switch-in (CPU, time).
at = {(k[0], k[1]): v for k, v in o.items()}
same = lambda k: o.get(k) or (at.get((k[0], k[1]), {}) if k[2] is None else {})
less = [(k, f) for k, v in d.items() for f in fields if known(v, f) and not known(same(k), f)]
for b in (wrong + less)[:5]:
    print(b, file=sys.stderr)
print(f"{len(wrong)} {len(less)}" if len(o) > 1000 else "few rows")
PY
}
# zero FILE BUFFER: the buffer (4 KiB) zeroed whole, its SequenceNumber missing.
zero() { dd if=/dev/zero of="$1" bs=4096 seek="$2" count=1 conv=notrunc 2>/dev/null; }

for seed in 7 11; do
  "$etlkit" synth --quiet --force --seed $seed --duration 1 --cswitch compact --buffer-size 4K -o "$tmp/c.etl" || exit 1
  for b in 30 45 60; do
    cp "$tmp/c.etl" "$tmp/z.etl"
    zero "$tmp/z.etl" $b
    rm -f "$tmp/f.etl"
    "$etlkit" convert -q --cswitch full "$tmp/z.etl" -o "$tmp/f.etl"; rc=$?
    expect "seed $seed, buffer $b zeroed: convert exit $rc, expected 3 (the input is damaged)" [ "$rc" = 3 ]
    n=$(check "$tmp/c.etl" "$tmp/z.etl" "$tmp/f.etl")
    expect "seed $seed, buffer $b zeroed, --cswitch full: no readier differs from the whole trace's, no value the input gives is left out (wrong, left out: $n)" [ "$n" = "0 0" ]
  done
  # Cut short at a buffer boundary: each CPU's last switch has no known new thread (its next batch went with the cut;
  # these pass before the change too).
  for b in 31 63; do
    head -c $((b * 4096)) "$tmp/c.etl" >"$tmp/cut.etl"
    rm -f "$tmp/f.etl"
    "$etlkit" convert -q --cswitch full "$tmp/cut.etl" -o "$tmp/f.etl"
    n=$(check "$tmp/c.etl" "$tmp/cut.etl" "$tmp/f.etl")
    expect "seed $seed, cut after $b buffers, --cswitch full: no value differs, none left out (wrong, left out: $n)" [ "$n" = "0 0" ]
  done
done

echo "convert_compact_gap.sh: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
