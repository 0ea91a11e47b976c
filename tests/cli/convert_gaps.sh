#!/bin/sh
# convert_gaps.sh ETLKIT SAMPLES - convert of a file that misses buffers misses them at the same places.
# The input's reader finds each CPU's span where a missing buffer may have held its records (etl_reader_cpu_gaps);
# the output misses the same SequenceNumbers around the same records of each CPU, so that cpu reads the same
# unknown time there (it once read a CPU idle on both sides of the lost buffer as idle throughout, exit 0). A file
# that misses nothing converts byte for byte as before (the SHA-256 of the output of the commit before this test).
set -u
etlkit=$1; samples=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails+1)); }
sha() { python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$1"; }
cd "$tmp" || exit 1

# --- a whole file: the output as before (LogFileName is the -o given: the same relative name each time) -------
"$etlkit" synth --quiet --seed 7 --duration 2 --cpus 4 -o whole.etl || bad "synth"
"$etlkit" synth --quiet --seed 7 --duration 2 --cpus 4 --cswitch compact -o wholec.etl || bad "synth compact"
# same NAME IN SHA256 OPTIONS...
same() {
  name=$1; in=$2; want=$3; shift 3
  rm -f o.etl
  "$etlkit" convert -q "$@" "$in" -o o.etl || bad "$name: convert exit $?"
  got=$(sha o.etl)
  [ "$got" = "$want" ] || bad "$name: the output changed (sha256 $got)"
}
same "whole" whole.etl dce8ee5a1d1db2b6ccf1377cda178bf7a820f8a12503f9927ea14d9cfe751074
same "whole to compact" whole.etl 639f347bd920e90095eb17ba88936d6204e25eaa01db2f241902fe522729d7bc --cswitch compact
same "whole compressed" whole.etl 23c3e5bd4f7ec5a4c7ff8dea8513b1486f9ea7cd9edbaa0f54216713e8c72012 --compress
same "whole compact to full" wholec.etl 45125323695ce2ac41f92e9b72c9f42b40818a6e11a637c8bed828fc6f5cd9a1 --cswitch full
# compact -> full -> compact: every CPU's last switch has no known new thread (a batch pairs it with the next), and
# no hole follows it: its batch goes on to the end as before (it was once ended at the CPU's next record).
"$etlkit" convert -q --cswitch full wholec.etl -o wholecf.etl || bad "compact to full"
same "whole compact to full to compact" wholecf.etl dc390f8e52f7e01083f811b6527049020db29e84e8a00a963481cad92bca912b \
  --cswitch compact
same "kernel sample" "$samples/kernel-shutdown-x64.etl" 9cd987654c64175fd956549adc0edc5c2395a9d113a4740412da286d08068db4
same "kernel sample compressed" "$samples/kernel-shutdown-x64.etl" \
  383bfae2b56f4fec0f022dcbe956cfbb8b0a2fbd3d3269932bc856c3b27502dc --compress

# --- files that miss buffers (hostile.sh's recipe: 64 KiB buffers) ----------------------------------------------
nb=$(( $(wc -c < whole.etl) / 65536 )); g=$(( nb / 3 ))
# buffer g removed (CPU 1 idle on both sides of it: 0.27 s unknown)
{ head -c $(( g * 65536 )) whole.etl; tail -c +$(( (g + 1) * 65536 + 1 )) whole.etl; } > gap.etl
# two gaps: buffers 5 and 6, and 17
{ head -c $(( 5 * 65536 )) whole.etl; tail -c +$(( 7 * 65536 + 1 )) whole.etl | head -c $(( 10 * 65536 ));
  tail -c +$(( 18 * 65536 + 1 )) whole.etl; } > gap2.etl
# cut short: BuffersWritten tells
head -c $(( nb / 2 * 65536 )) whole.etl > cut.etl

# cpus FILE: each CPU's unknown, busy and idle ns from cpu --json
cpus() {
  "$etlkit" cpu --json "$1" 2>/dev/null |
    python3 -c 'import json,sys; [print(c["cpu"], c["unknown_ns"], c["busy_ns"], c["idle_ns"]) for c in json.load(sys.stdin)["cpus"]]'
}
for f in gap gap2 cut; do
  cpus $f.etl > $f.want
  grep -q ' [1-9][0-9]* ' $f.want || bad "$f: no unknown time in the input (the recipe changed?)"
  for opt in "" "--compress" "--buffer-size 8192" "--cswitch full"; do
    rm -f out.etl
    "$etlkit" convert -q $opt $f.etl -o out.etl; rc=$?
    [ "$rc" = 3 ] || bad "$f [$opt]: convert exit $rc, expected 3 (the input is damaged)"
    cpus out.etl > out.got
    cmp -s $f.want out.got || bad "$f [$opt]: the output's CPUs differ: $(diff $f.want out.got | tr '\n' ' ')"
    "$etlkit" info out.etl >/dev/null 2>info.err; rc=$?
    [ "$rc" = 3 ] || bad "$f [$opt]: info of the output exit $rc, expected 3"
  done
  # To compact, a CSwitch becomes a batch logged later: a CPU's spans can only grow (never an idle or busy more).
  rm -f out.etl
  "$etlkit" convert -q --cswitch compact $f.etl -o out.etl
  cpus out.etl > out.got
  python3 - $f.want out.got <<'PY' || bad "$f [--cswitch compact]: less unknown than the input: $(paste $f.want out.got | tr '\n' ' ')"
import sys
a, b = ([list(map(int, l.split())) for l in open(p)] for p in sys.argv[1:3])
sys.exit(any(y[1] < x[1] or y[2] > x[2] or y[3] > x[3] for x, y in zip(a, b)) or len(a) != len(b))
PY
done

# --- compact inputs that miss buffers -----------------------------------------------------------------------------
# A batch is logged after its switches: the one in a lost buffer held the CPU's switches from its last batch before
# the hole on, and the batch after the hole knows them only from its first switch. Expanded (--cswitch full), the
# last switch before the hole (its new thread read across the hole) and the records after it must stay before the
# hole, so that the CPU's span covers the switches lost: it once went after, the span vanished, and CPU 0 read 1,141
# ms busy where the whole trace has 747 ms (reviewer65). The batch after the hole knows its switches earlier than
# the CPU's first record after the hole, which the input's reader counts unknown: the output's reader knows them,
# so each CPU reads between the input and the whole trace (never a busy or idle the whole trace has not), with the
# same total. The default and --cswitch keep read exactly as the input does.
# between TRUTH IN OUT NAME: each CPU's busy and idle in the output between the input's and the whole trace's.
between() {
  python3 - "$1" "$2" "$3" <<'PY' || bad "$4 [--cswitch full]: cpu/unknown/busy/idle truth in out: $(paste "$1" "$2" "$3" | tr '\n' ' ')"
import sys
t, a, b = ([list(map(int, l.split())) for l in open(p)] for p in sys.argv[1:4])
ok = len(t) == len(a) == len(b) and all(
    x[2] <= y[2] <= T[2] and x[3] <= y[3] <= T[3] and y[2] <= x[2] + x[1] and y[3] <= x[3] + x[1]
    and sum(x[1:]) == sum(y[1:]) for T, x, y in zip(t, a, b))
sys.exit(not ok)
PY
}
# compact_gaps NAME WHOLE IN: the input's CPUs read back from each conversion as above (exit 3 each time).
compact_gaps() {
  cpus "$3" > c.want
  for opt in "" "--cswitch keep" "--cswitch full"; do
    rm -f out.etl
    "$etlkit" convert -q $opt "$3" -o out.etl; rc=$?
    [ "$rc" = 3 ] || bad "$1 [$opt]: convert exit $rc, expected 3"
    cpus out.etl > c.got
    if [ "$opt" = "--cswitch full" ]; then between "$2.cpus" c.want c.got "$1"
    else cmp -s c.want c.got || bad "$1 [$opt]: the output's CPUs differ: $(diff c.want c.got | tr '\n' ' ')"; fi
  done
}
for seed in 7 3; do
  w=wc$seed.etl
  "$etlkit" synth --quiet --seed $seed --duration 2 --cpus 4 --cswitch compact -o $w || bad "synth compact $seed"
  cpus $w > $w.cpus
  n=$(( $(wc -c < $w) / 65536 ))
  for g in $(seq 2 $(( n - 2 ))); do
    { head -c $(( g * 65536 )) $w; tail -c +$(( (g + 1) * 65536 + 1 )) $w; } > cg.etl
    compact_gaps "compact seed $seed, buffer $g missing" $w cg.etl
  done
  # two gaps (buffers 3, and 7 and 8), and a file cut short
  { head -c $(( 3 * 65536 )) $w; tail -c +$(( 4 * 65536 + 1 )) $w | head -c $(( 3 * 65536 ));
    tail -c +$(( 9 * 65536 + 1 )) $w; } > cg.etl
  compact_gaps "compact seed $seed, buffers 3, 7 and 8 missing" $w cg.etl
  head -c $(( n / 2 * 65536 )) $w > cg.etl
  compact_gaps "compact seed $seed, cut short" $w cg.etl
done

# --- buffers in the file that cannot be read whole ------------------------------------------------------------------
# Their records are lost from a known place of their CPU (etl_reader_cpu_skipped): the output is written again with
# a SequenceNumber missing after each (explore21 F4: it once read clean, cpu exit 0 with CPU 3's lost time given to a
# thread). The output's reader cannot know the CPU: the damaged CPU reads as the input, the others as much or more
# unknown (a missing buffer's rule), never busy or idle the input has not; convert, info and cpu exit 3.
# unread IN OUT marker|offset|time: CPU 1's middle buffer: its 3rd record's marker zeroed (the rest cannot be framed),
# its Offset past what its compressed payload expands to (it cannot be loaded), or its 3rd record's time outside the
# session (passed over: no gap in the input, one after its buffer in the output).
unread() {
  python3 - "$@" <<'PY'
import struct, sys
src, dst, op = sys.argv[1:4]
d = bytearray(open(src, 'rb').read())
bufs, off = [], 0
while off + 0x48 <= len(d):
    size, = struct.unpack_from('<I', d, off)
    if struct.unpack_from('<H', d, off + 0x28)[0] & 0x7FF == 1 and off:
        bufs.append(off)
    if size < 0x48:
        break
    off += size
off = bufs[len(bufs) // 2]
if op != 'offset':
    o = off + 0x48
    for _ in range(2):
        o += (struct.unpack_from('<H', d, o + 4)[0] + 7) & ~7
    if op == 'marker':
        d[o:o + 4] = bytes(4)
    else:
        struct.pack_into('<Q', d, o + 8, 0x7000000000000000)
else:
    struct.pack_into('<I', d, off + 0x30, struct.unpack_from('<I', d, off + 0x30)[0] + 64)
open(dst, 'wb').write(d)
PY
}
"$etlkit" synth --quiet --seed 7 --duration 2 --cpus 4 --compress -o wholez.etl || bad "synth compressed"
unread whole.etl um.etl marker
unread wholez.etl uo.etl offset
unread whole.etl ut.etl time
for f in um uo ut; do
  cpus $f.etl > $f.want
  [ $f = ut ] || grep -q '^1 [1-9]' $f.want || bad "$f: CPU 1 has no unknown time in the input (the recipe changed?)"
  for opt in "" "--cswitch full" "--cswitch compact"; do
    rm -f out.etl
    "$etlkit" convert -q $opt $f.etl -o out.etl; rc=$?
    [ "$rc" = 3 ] || bad "$f [$opt]: convert exit $rc, expected 3"
    "$etlkit" info out.etl >/dev/null 2>&1; rc=$?
    [ "$rc" = 3 ] || bad "$f [$opt]: info of the output exit $rc, expected 3 (the loss is not in it)"
    "$etlkit" cpu out.etl >/dev/null 2>&1; rc=$?
    [ "$rc" = 3 ] || bad "$f [$opt]: cpu of the output exit $rc, expected 3"
    cpus out.etl > out.got
    python3 - $f.want out.got "$f$opt" <<'PY' || bad "$f [$opt]: cpu/unknown/busy/idle in out: $(paste $f.want out.got | tr '\n' ' ')"
import sys
a, b = ([list(map(int, l.split())) for l in open(p)] for p in sys.argv[1:3])
# a batch is logged after its switches, a record passed over is a gap after its buffer: spans only grow
loose = sys.argv[3].endswith('--cswitch compact') or sys.argv[3].startswith('ut')
ok = len(a) == len(b) and all(
    (x == y if x[0] == 1 and not loose else y[1] >= x[1] and y[2] <= x[2] and y[3] <= x[3]) and sum(x[1:]) == sum(y[1:])
    for x, y in zip(a, b))
sys.exit(not ok)
PY
  done
done
rm -f out.etl; "$etlkit" convert um.etl -o out.etl 2>err.txt
grep -q "1 loss of records (told above: buffers not read whole or out of place, switches with no known new thread): the output is written again, missing a SequenceNumber after it" err.txt ||
  bad "the second writing not told: $(cat err.txt)"

# A buffer whose header names another CPU (explore26 F4): its records are merged at that CPU's time, which the output
# holds as if it were so: a SequenceNumber after it says the loss (info and cpu on the output exited 0 with 1,264
# switches more on CPU 1). A full input's switch whose new thread is unknown (a broken chain expanded) cannot be said
# in a batch (explore26 F6): to compact, its buffer's loss is told alike (the compact output read clean).
python3 "$(dirname "$0")/damage.py" whole.etl relabel.etl proc c3 1 >/dev/null || bad "damage.py relabel"
rm -f out.etl; "$etlkit" convert -q relabel.etl -o out.etl; rc=$?
[ "$rc" = 3 ] || bad "relabel: convert exit $rc, expected 3"
"$etlkit" info out.etl >/dev/null 2>&1; rc=$?
[ "$rc" = 3 ] || bad "relabel: info of the output exit $rc, expected 3"
python3 - whole.etl f.etl <<'PY' || bad "unknown new thread: recipe"
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
# The buffer with the most CSwitch events: its 5th one's NewThreadId all ones, as convert writes a lost one (the
# switch after it in the same buffer: a hole after the buffer would not cover the span).
best = (0, 0)
for b in range(1, len(d) // 65536):
    off, n, first = b * 65536 + 0x48, 0, []
    while off + 16 <= (b + 1) * 65536:
        size, hook = struct.unpack_from('<HH', d, off + 4)
        if size < 16: break
        if hook == 0x0524:
            n += 1
            if n == 5: first = off
        off += (size + 7) & ~7
    if n > best[0]: best = (n, first)
d[best[1] + 16:best[1] + 20] = b'\xff' * 4
open(sys.argv[2], 'wb').write(d)
PY
"$etlkit" info f.etl >/dev/null 2>&1 || bad "unknown new thread: the input reads damaged (the recipe changed?)"
rm -f out.etl; "$etlkit" convert -q --cswitch compact f.etl -o out.etl; rc=$?
[ "$rc" = 3 ] || bad "full with an unknown new thread to compact: convert exit $rc, expected 3"
"$etlkit" cpu out.etl >/dev/null 2>&1; rc=$?
[ "$rc" = 3 ] || bad "full with an unknown new thread to compact: cpu of the output exit $rc, expected 3"
# ... and the span after that switch stays unknown (the hole right after it, its batch ended there): no CPU busy
# or idle more than in the input, no thread running more (reviewer69 R1: the batch gave it to the next switch's old
# thread).
"$etlkit" cpu --json f.etl 2>/dev/null >f.json; "$etlkit" cpu --json out.etl 2>/dev/null >out.json
python3 - f.json out.json <<'PY' || bad "full with an unknown new thread to compact: a thread runs more in the output"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ta = {t['tid']: t['cpu_ns'] for t in a['threads']}
sys.exit(any(t['cpu_ns'] > ta.get(t['tid'], 0) for t in b['threads']))
PY
cpus f.etl > f.want; cpus out.etl > out.got
python3 - f.want out.got <<'PY' || bad "full with an unknown new thread to compact: cpu/unknown/busy/idle in out: $(paste f.want out.got | tr '\n' ' ')"
import sys
a, b = ([list(map(int, l.split())) for l in open(p)] for p in sys.argv[1:3])
ok = len(a) == len(b) and any(x[1] > 0 for x in a) and all(
    y[1] >= x[1] and y[2] <= x[2] and y[3] <= x[3] and sum(x[1:]) == sum(y[1:]) for x, y in zip(a, b))
sys.exit(not ok)
PY

# The writer holds every CPU's buffer until full: more than 256 MiB of them is refused, naming the most (it once
# wrote nearly a 16 MiB buffer a record: 64 CPUs filled the disk); by default convert takes the most that fits.
"$etlkit" synth -q --cpus 64 --duration 0.05 --seed 3 -o c64.etl || bad "synth 64 CPUs"
"$etlkit" synth -q --cpus 64 --duration 0.05 --buffer-size 16M -o big.etl 2>err.txt; rc=$?
[ "$rc" = 64 ] && grep -q "a buffer size of at most 4194304" err.txt || bad "synth 64 CPUs of 16 MiB: exit $rc: $(cat err.txt)"
rm -f out.etl; "$etlkit" convert -q --buffer-size 16777216 c64.etl -o out.etl 2>err.txt; rc=$?
[ "$rc" = 64 ] && grep -q "a buffer size of at most 4194304" err.txt || bad "convert 64 CPUs of 16 MiB: exit $rc: $(cat err.txt)"
# A record larger than the buffer asked for: which, and the size that holds it.
rm -f out.etl; "$etlkit" convert -q --buffer-size 8192 "$samples/amsi-user-x64.etl" -o out.etl 2>err.txt; rc=$?
[ "$rc" = 1 ] && grep -q "a record of 10220 bytes (the input's largest) does not fit a buffer of 8192 bytes: a buffer size of at least 10296" err.txt ||
  bad "convert --buffer-size 8192 of amsi-user-x64: exit $rc: $(cat err.txt)"
# The size named is enough: the input's largest record, not the first too large (50,900 bytes, then 65,370 once).
rm -f out.etl; "$etlkit" convert -q --buffer-size 16384 "$samples/perfview-x64-compressed.etl" -o out.etl 2>err.txt; rc=$?
[ "$rc" = 1 ] && grep -q "a record of 65370 bytes (the input's largest) does not fit a buffer of 16384 bytes: a buffer size of at least 65448" err.txt ||
  bad "convert --buffer-size 16384 of perfview-x64-compressed: exit $rc: $(cat err.txt)"
rm -f out.etl; "$etlkit" convert -q --buffer-size 65448 "$samples/perfview-x64-compressed.etl" -o out.etl 2>err.txt ||
  bad "convert --buffer-size 65448 (the size advised) of perfview-x64-compressed: exit $?: $(cat err.txt)"

# The gap is told where it is, the session's BuffersLost stays its own (0), and a second conversion changes nothing.
"$etlkit" convert -q gap.etl -o c1.etl
"$etlkit" info c1.etl >/dev/null 2>info.err
grep -q "1 buffer the session wrote (SequenceNumber $g, .*) not in the file" info.err ||
  bad "the output's missing buffer not told: $(cat info.err)"
lost=$("$etlkit" info --json c1.etl 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["buffers_lost"])')
[ "$lost" = 0 ] || bad "the output's BuffersLost is $lost, expected the input's 0 (the gap is in the numbering)"
"$etlkit" convert -q c1.etl -o c2.etl
cpus c2.etl > c2.got
cmp -s gap.want c2.got || bad "converted twice: the CPUs differ"
lost=$("$etlkit" info --json c2.etl 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["buffers_lost"])')
[ "$lost" = 0 ] || bad "converted twice: BuffersLost $lost"

[ "$fails" = 0 ] || { echo "$fails failures" >&2; exit 1; }
echo "convert_gaps: ok"
