#!/bin/sh
# diag_more.sh ETLKIT - "N more problems not shown" counts each problem once: a trace with one broken
# record in each of its 28 buffers after the first has 28 problems, so every command prints 20 and says
# "8 more". `waits --process` holds what was told before its first pass while that pass's walkers
# (--threads 2) already tell, then its second pass tells them again: the held count was added to the
# run's, "10 more" in about half the runs (final33, noticed and left).
set -u
etlkit=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
bad() { echo "diag_more: $*" >&2; fails=$((fails + 1)); }

"$etlkit" synth -q -o "$dir/full.etl" --seed 3 --duration 2 || { echo "synth failed" >&2; exit 1; }
"$etlkit" dump --format jsonl --order file "$dir/full.etl" >"$dir/full.jsonl" || { echo "dump failed" >&2; exit 1; }
# The 6th record of each buffer but the first: its marker broken, the rest of its buffer skipped.
n=$(python3 - "$dir/full.etl" "$dir/full.jsonl" "$dir/dmg.etl" <<'PY'
import json, struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
size = struct.unpack_from('<I', d, 0)[0]  # BufferSize: synth writes every buffer whole
k = {}
for line in open(sys.argv[2]):
    r = json.loads(line)
    k[r['buf']] = k.get(r['buf'], 0) + 1
    if r['buf'] and k[r['buf']] == 6: d[r['buf'] * size + r['off'] + 2] ^= 0xff
open(sys.argv[3], 'wb').write(d)
print(sum(1 for b in k if b and k[b] >= 6))
PY
) || { echo "damage failed" >&2; exit 1; }
[ "$n" -gt 20 ] || { echo "only $n buffers damaged" >&2; exit 1; }
more=$((n - 20))

# told CMD...: 20 warnings and "$more more problems not shown".
told() {
  "$etlkit" "$@" "$dir/dmg.etl" >/dev/null 2>"$dir/err"
  shown=$(grep -c ': warning: buffer' "$dir/err")
  got=$(sed -n 's/.*: warning: \([0-9]*\) more problems not shown$/\1/p' "$dir/err")
  [ "$shown" = 20 ] && [ "$got" = "$more" ] || bad "$*: $shown shown and '$got' more, not 20 and $more"
}
told cpu
told waits
told report --force -o "$dir/r.html"
i=0
while [ $i -lt 10 ]; do
  told waits --process 4 --threads 2
  i=$((i + 1))
done
told waits --process 4 --threads 3
[ $fails -eq 0 ] && echo "diag_more: all checks passed"
[ $fails -eq 0 ]
