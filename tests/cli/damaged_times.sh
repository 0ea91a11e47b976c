#!/bin/sh
# damaged_times.sh ETLKIT - one damaged record time must not move other records' answers (explore6 F1, F2, F8).
# A CPU's buffer is in time order and none of its records is later than the buffer's flush (container.md §7):
# a record after its flush, or one below the record ahead of it that the record after confirms, is passed over,
# told with its file offset, and the run exits 3; the window and every other CPU's numbers are the undamaged
# trace's. A compact batch's switches after the flush are dropped from there on, alike. A CSwitch whose Size goes
# past its layout (one bit: 56 -> 4152) is told and read at its layout's size, with the records its Size covered:
# every CPU's numbers are the undamaged trace's (explore6 F3).
set -u
etlkit=$1
here=$(dirname "$0")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails+1)); }

# same_but CPU A.json B.json: window, CPU count and every CPU but CPU equal (-1: every CPU)
same_but() {
  python3 - "$@" <<'PY' || return 1
import json, sys
cpu, a, b = int(sys.argv[1]), json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
if a['window'] != b['window']: sys.exit('window %s != %s' % (a['window'], b['window']))
if a['num_cpus'] != b['num_cpus']: sys.exit('cpus %s != %s' % (a['num_cpus'], b['num_cpus']))
for x, y in zip(a['cpus'], b['cpus']):
    if x['cpu'] != cpu and x != y: sys.exit('cpu %d: %s != %s' % (x['cpu'], x, y))
PY
}

# case NAME BASE CPU EXPECT_TEXT DAMAGE...
case_() {
  name=$1; base=$2; cpu=$3; text=$4; shift 4
  off=$(python3 "$here/damage.py" "$tmp/$base.etl" "$tmp/$name.etl" "$@") || { bad "$name: damage.py"; return; }
  "$etlkit" cpu --json "$tmp/$name.etl" >"$tmp/$name.json" 2>"$tmp/$name.err"; rc=$?
  [ "$rc" = 3 ] || bad "$name: cpu exit $rc, expected 3"
  grep -q "file offset $off.*$text" "$tmp/$name.err" || bad "$name: no warning '$text' at $off: $(head -c 300 "$tmp/$name.err")"
  msg=$(same_but "$cpu" "$tmp/$base.json" "$tmp/$name.json" 2>&1) || bad "$name: $msg"
  # The other readers agree: the per-CPU run and the time-ordered one (waits) exit 3 as well.
  "$etlkit" waits --json "$tmp/$name.etl" >/dev/null 2>&1; rc=$?
  [ "$rc" = 3 ] || bad "$name: waits exit $rc, expected 3"
}

"$etlkit" synth --seed 7 --pmc 2 -o "$tmp/full.etl" 2>/dev/null || bad "synth full"
"$etlkit" synth --seed 7 --pmc 2 --cswitch compact -o "$tmp/compact.etl" 2>/dev/null || bad "synth compact"
for b in full compact; do
  "$etlkit" cpu --json "$tmp/$b.etl" >"$tmp/$b.json" 2>"$tmp/$b.err"; rc=$?
  [ "$rc" = 0 ] || bad "$b: cpu exit $rc on the undamaged trace"
done

# A CSwitch of CPU 3 1.68 s late (one bit of its time): once it stretched the window and every CPU's idle time.
case_ late full 3 "after its buffer was flushed" ts c3 0524 40 16777216
# The same 419 ms late, mid-trace: once it dropped 2035 of the CPU's switches.
case_ mid full 3 "after its buffer was flushed" ts c3 0524 40 4194304
# A ReadyThread 50 ms early: passed over, not merged at its CPU's time.
case_ early full 3 "before the record ahead of it" ts c3 0532 20 -500000
# A compact batch whose switches start 1.68 s late.
case_ batch compact 0 "after its buffer was flushed" first c0 1 16777216
# A CSwitch's Size 56 -> 4152 where that ends on a record: it once swallowed the records after it, exit 0.
case_ size full -1 "more than its layout's 56 bytes" size c3 0524 0 4152
# The same where it ends inside a record: once the rest of the buffer was skipped.
case_ sizemid full -1 "more than its layout's 56 bytes" size c3 0524 1 4152

# What convert writes of a damaged input: a record taken at its layout's size is written with that size and reads back
# clean, as the input read; a record passed over is lost from its buffer, which the output tells as a missing buffer
# after that buffer's records (exit 3): it once read clean, exit 0, with CPU 3 missing the switch.
for name in mid early size sizemid; do
  "$etlkit" convert "$tmp/$name.etl" -o "$tmp/$name.out.etl" >/dev/null 2>&1; rc=$?
  [ "$rc" = 3 ] || bad "convert $name: exit $rc, expected 3 (its input is damaged)"
  "$etlkit" cpu --json "$tmp/$name.out.etl" >"$tmp/$name.out.json" 2>"$tmp/$name.out.err"; rc=$?
  case $name in mid|early) want=3 ;; *) want=0 ;; esac
  [ "$rc" = $want ] || bad "convert $name: its output reads with exit $rc, expected $want: $(head -c 300 "$tmp/$name.out.err")"
done

[ $fails -eq 0 ] && echo "damaged_times: all passed" && exit 0
echo "damaged_times: $fails failed" >&2; exit 1
