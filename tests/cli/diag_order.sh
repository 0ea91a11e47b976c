#!/bin/sh
# diag_order.sh ETLKIT - what a command tells of a damaged trace does not depend on how it reads it
# (explore13): the first problem is the lowest file offset in info, export and report for every --threads;
# each warning is printed once, in file order, the same for every --threads (waits --process, cpu on a cut
# file); a directory is an I/O error (exit 1) for waitchain too; switches --json/--csv tell the switches
# dropped on stderr as the text form does.
set -u
etlkit=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
bad() { echo "diag_order: $*" >&2; fails=$((fails + 1)); }

"$etlkit" synth -q -o "$dir/full.etl" --seed 1 --duration 1 --pmc 4 || { echo "synth failed" >&2; exit 1; }
# 40 seeded bit flips past the first buffer: problems in several buffers, met out of file order by the
# time-ordered readers.
python3 - "$dir/full.etl" "$dir/flip.etl" <<'PY' || { echo "flip failed" >&2; exit 1; }
import random, sys
d = bytearray(open(sys.argv[1], 'rb').read()); r = random.Random(7)
for i in range(40):
    p = r.randrange(65536, len(d)); d[p] ^= 1 << r.randrange(8)
open(sys.argv[2], 'wb').write(d)
PY
head -c 70000 "$dir/full.etl" > "$dir/cut70k.etl"
head -c 1300000 "$dir/full.etl" > "$dir/cut.etl"

# in_order NAME FILE: the warnings of the reader in FILE ("etlkit: PATH: warning: ...") name offsets in
# ascending order, and none is printed twice.
in_order() {
  msg=$(python3 - "$2" <<'PY'
import re, sys
lines = [l for l in open(sys.argv[1]) if re.match(r'etlkit: [^ ]*: warning: ', l) and 'more problems not shown' not in l]
offs = []
for l in lines:
    m = (re.search(r'file offset 0x([0-9a-f]+)', l) or re.search(r'buffer \d+ at offset 0x([0-9a-f]+): record at \+0x([0-9a-f]+)', l)
         or re.search(r'at offset 0x([0-9a-f]+)', l))
    if not m: print('a warning without an offset: ' + l.strip()); sys.exit(0)
    offs.append(sum(int(g, 16) for g in m.groups()))
if not offs: print('no warning')
elif offs != sorted(offs): print('warnings not in file order: ' + ' '.join(hex(o) for o in offs))
elif len(set(lines)) != len(lines): print('%d warnings, %d different' % (len(lines), len(set(lines))))
PY
)
  [ -z "$msg" ] || bad "$1: $msg"
}

# 1. The first problem: the lowest offset, as info says, in export's trace table for every --threads.
first=$("$etlkit" info --json "$dir/flip.etl" 2>/dev/null | python3 -c 'import json,sys; print("%x" % json.load(sys.stdin)["recovery"]["first_problem_offset"])')
[ "$first" = 29630 ] || bad "info: first problem at 0x$first, expected 0x29630"
for n in 1 2 3 8; do
  "$etlkit" export "$dir/flip.etl" --to csv -o "$dir/x$n" --threads $n 2>/dev/null
  got=$(sed -n 's/.*,first_problem,"offset 0x\([0-9a-f]*\):.*/\1/p' "$dir/x$n/trace.csv")
  [ "$got" = "$first" ] || bad "export --threads $n: first_problem at 0x$got, info says 0x$first"
  rm -rf "$dir/x$n"
done

# 2. waits --thread/--process on a damaged trace: each warning once, in file order, the same for every --threads
# (an abandoned first source that had read ahead printed what it met, then the run printed it all again).
for f in flip cut; do
  for sel in "--process svchost" "--thread 720" "--process svchost --json" "--by stack --process svchost"; do
    for n in 1 2 3 8; do
      "$etlkit" waits "$dir/$f.etl" $sel --threads $n > /dev/null 2> "$dir/err$n"
      in_order "waits $f $sel --threads $n" "$dir/err$n"
      [ $n -eq 1 ] || cmp -s "$dir/err1" "$dir/err$n" || bad "waits $f $sel: warnings with --threads $n differ from 1's"
    done
  done
done

# 3. A directory is an I/O error (exit 1, "is a directory") for waitchain as for every command; a pipe is still
# refused (exit 64): waitchain reads FILE several times.
mkdir "$dir/folder.etl"
for c in "waitchain --thread 4" "waitchain --process svchost --json" cpu waits; do
  "$etlkit" $c "$dir/folder.etl" > "$dir/out" 2> "$dir/err"; rc=$?
  [ $rc -eq 1 ] || bad "$c on a directory: exit $rc, expected 1"
  grep -q "folder.etl: is a directory" "$dir/err" || bad "$c on a directory: said $(head -1 "$dir/err")"
  [ -s "$dir/out" ] && bad "$c on a directory: wrote to stdout"
done
"$etlkit" waitchain --thread 4 - < "$dir/full.etl" > /dev/null 2>&1; rc=$?
[ $rc -eq 64 ] || bad "waitchain on standard input: exit $rc, expected 64"

# 5. Every report prints the open's warnings and the run's together, sorted by file offset (cpu and pmc
# printed the open's first: 0x10000, 0x11170, then 0x11148).
for f in cut70k cut flip; do
  for c in cpu "cpu --interval 100ms" waits spinlocks pmc wakeups switches info profile; do
    "$etlkit" $c "$dir/$f.etl" > /dev/null 2> "$dir/err"
    in_order "$c $f" "$dir/err"
  done
done

# 6. switches tells the anomalies on stderr in every form (--json and --csv said nothing of the switches dropped
# of a trace whose CPUs logged both forms); the count is cpu's.
"$etlkit" synth -q -o "$dir/both.etl" --seed 3 --duration 1 --cswitch both --cpus 5 || bad "synth both"
dup=$("$etlkit" cpu --json "$dir/both.etl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["anomalies"]["duplicates_dropped"])')
[ "${dup:-0}" -gt 0 ] || bad "cpu: no duplicates dropped in a --cswitch both trace ($dup)"
for form in "" --json --csv; do
  "$etlkit" switches "$dir/both.etl" $form > /dev/null 2> "$dir/err"
  grep -q "^etlkit switches: note: $dup switches dropped: a CPU logged both forms" "$dir/err" ||
    bad "switches $form: no note of the $dup switches dropped on stderr"
done

if [ $fails -ne 0 ]; then echo "diag_order: $fails failures" >&2; exit 1; fi
echo "diag_order: ok"
