#!/bin/sh
# oom.sh ETLKIT FAILALLOC_SO MODE CASE: every allocation of one command, failed in turn (explore17's sweep).
# Each run either gives the normal run's answer (the allocation had a way around it) or fails with exit 1 and a
# line on stderr, leaving no output behind (README: "1 | ... out of memory (one line naming the file and the
# system's reason)"; Limits: "never a report with what was left out"). Never exit 0 with another answer, never
# exit 3 (damage is the input's, not the machine's), never a silent failure.
# MODE plain; anything else (asan: ASan's allocator cannot be wrapped; windows) skips with one line, as off Linux.
# CASE names a command on the traces synth makes (a: stacks, PMC, both switch forms; c: compressed, cached stacks).
E=$1 SO=$2 MODE=$3 CASE=$4
if [ "$MODE" != plain ] || [ "$(uname -s)" != Linux ]; then
  echo "oom $CASE: skipped (an LD_PRELOAD allocation shim needs Linux without the sanitizers; mode $MODE)"; exit 77
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/etlkit-oom.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
"$E" synth -q --seed 3 --cpus 2 --threads 8 --processes 3 --duration 0.05 --stacks --pmc 2 --cswitch both -o a.etl || exit 1
"$E" synth -q --seed 5 --cpus 2 --threads 8 --processes 3 --duration 0.05 --cswitch compact -o b.etl || exit 1
"$E" synth -q --seed 7 --cpus 2 --threads 8 --processes 3 --duration 0.05 --stacks --stack-form cached --compress \
  -o c.etl || exit 1
case $CASE in
  compare) set -- compare a.etl b.etl --json ;;                          # per-process ready latencies (F4)
  report) set -- report a.etl -o OUT --threads 1 ;;                       # its charts, flame graph, chain (F4c, F9)
  report-parts) parts=1; set -- report a.etl -o OUT --threads 1 ;;        # the same, the charts' and flame's parts
  waits) set -- waits a.etl --json --threads 1 ;;                         # the readiers before the first switch (F6)
  waits-stack) set -- waits a.etl --by stack --json --threads 1 ;;        # "the trace walks no stack" (F7)
  cpu-compressed) set -- cpu c.etl --json --threads 1 ;;                  # a buffer not decompressed (F8)
  profile-compressed) set -- profile c.etl --json --threads 1 ;;          # the same in the stacks' pass (F8)
  waitchain) set -- waitchain c.etl --process System --json --threads 1 ;; # the chain's pieces (F9, F8)
  perfetto) set -- export a.etl --to perfetto -o OUT --threads 1 ;;       # the processes listed (F14)
  csv) set -- export c.etl --to csv -o OUT --threads 1 ;;                 # stack rows (F7, F8)
  *) echo "oom: no case $CASE"; exit 1 ;;
esac
# The output as one digest: stdout, stderr and OUT (a file or a directory's files, by name). report-parts: the page's
# stacked chart paths, flame graph nodes and per-process ready rows alone (the whole page also needs glibc's
# open_memstream to tell a failed growth, which it does not: a character lost is the JSON writer's to catch).
digest() {
  if [ -n "${parts:-}" ]; then
    [ -f OUT ] || { echo none; return; }
    echo "paths $(grep -o '<path class="c' OUT | wc -l) flame $(grep -c '"flame":null' OUT)" \
      "$(sed 's/.*"flame"://' OUT | grep -o '\[-\{0,1\}[0-9]*,[0-9]*,"' | wc -l)" \
      "ready $(grep -o '<td class="n" data-v="[0-9]*">' OUT | cksum)"
    return
  fi
  { cat out.txt err.txt; [ -e OUT ] && find OUT -type f | LC_ALL=C sort | while read -r f; do echo "$f"; cat "$f"; done; } |
    cksum
}
rm -rf OUT
FAILALLOC_COUNT=$W/count LD_PRELOAD=$SO "$E" "$@" >out.txt 2>err.txt
rc0=$?
ref=$(digest)
calls=$(sed -n 's/^calls=//p' count)
[ -n "$calls" ] && [ "$calls" -gt 0 ] || { echo "oom $CASE: the shim counted no allocation"; exit 1; }
bad=0 n=1
while [ "$n" -le "$calls" ]; do
  rm -rf OUT
  FAILALLOC_N=$n LD_PRELOAD=$SO "$E" "$@" >out.txt 2>err.txt
  rc=$?
  why=
  if [ "$rc" = "$rc0" ] && [ "$(digest)" = "$ref" ]; then
    : # the normal answer
  elif [ "$rc" = 0 ] || [ "$rc" = "$rc0" ]; then
    why="exit $rc with another answer than the normal run's"
  elif [ "$rc" != 1 ]; then
    why="exit $rc (want 1)"
  elif [ ! -s err.txt ]; then
    why="exit 1 with nothing on stderr"
  elif [ -e OUT ]; then
    why="exit 1 with OUT left behind"
  fi
  if [ -n "$why" ]; then
    bad=$((bad + 1))
    [ "$bad" -le 20 ] && echo "FAIL oom $CASE: allocation $n of $calls failed: $why: $(head -c 300 err.txt | tr '\n' '|')"
  fi
  n=$((n + 1))
done
echo "oom $CASE ($*): $calls allocations failed in turn, $bad wrong (normal exit $rc0)"
[ "$bad" = 0 ]
