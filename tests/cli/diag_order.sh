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

# offsets FILE: the file offsets the warnings in FILE name, one a line, in their order.
offsets() { sed -n 's/.*file offset 0x\([0-9a-f]*\).*/\1/p; t; s/.*the file ends at offset 0x\([0-9a-f]*\).*/\1/p; t; s/.*etlkit: [^ ]*: warning: [^(]* at offset 0x\([0-9a-f]*\).*/\1/p' "$1" | while read -r h; do printf '%d\n' "0x$h"; done; }
# in_order NAME FILE: the warnings in FILE are sorted by file offset and none is printed twice.
in_order() {
  offsets "$2" > "$dir/offs"
  [ -s "$dir/offs" ] || { bad "$1: no warning with an offset"; return; }
  sort -n "$dir/offs" | cmp -s - "$dir/offs" || bad "$1: warnings not in file order: $(tr '\n' ' ' < "$dir/offs")"
  n=$(grep -c 'warning:' "$2"); u=$(grep 'warning:' "$2" | sort -u | wc -l)
  [ "$n" -eq "$u" ] || bad "$1: $n warnings, $u different"
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

if [ $fails -ne 0 ]; then echo "diag_order: $fails failures" >&2; exit 1; fi
echo "diag_order: ok"
