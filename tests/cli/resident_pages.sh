#!/bin/sh
# resident_pages.sh ETLKIT - the trace's pages a command keeps mapped stay few (README "Speed and memory": the
# pages of finished buffers are dropped), on two paths that kept the whole file (explore29 F1's RssFile, F3):
#  - switches --json of a stack trace: the model's walkers, opened first, waited at the file's start while the
#    stack table's passes read the whole file, and those passes' end read key definitions from all over it;
#  - info and cpu of a trace with every 10th buffer zeroed: the buffers around each gap, read at open for their
#    times, stayed mapped.
# The bound is generous (a quarter of the file); before the fixes both kept about all of it. Linux only (/proc).
set -eu
etlkit=$1
if [ "${ETLKIT_TARGET:-}" = windows ] || [ ! -r /proc/self/status ] || ! command -v python3 >/dev/null; then
  echo "resident_pages: skipped: needs Linux's /proc and python3"; exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "resident_pages: $*" >&2; exit 1; }

# peak FILE CMD...: the command's peak RssFile in KB, sampled as it runs (its exit status must be 0 or 3).
peak() {
  out=$1; shift
  "$@" >/dev/null 2>"$dir/err" & pid=$!
  top=0
  while kill -0 $pid 2>/dev/null; do
    f=$(awk '/^RssFile/{print $2}' /proc/$pid/status 2>/dev/null || true)
    [ -n "$f" ] && [ "$f" -gt $top ] && top=$f
    sleep 0.005
  done
  rc=0; wait $pid || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$dir/err" >&2; fail "$* exited $rc"; }
  echo $top > "$out"
}

"$etlkit" synth --quiet --preset large --stacks --size 200M --seed 3 -o "$dir/s.etl" || fail "synth"
kb=$(($(wc -c < "$dir/s.etl") / 1024))
bound=$((kb / 4))
peak "$dir/p" "$etlkit" switches --json "$dir/s.etl"
got=$(cat "$dir/p")
[ "$got" -lt $bound ] || fail "switches --json kept $got KB of the trace's pages mapped (file $kb KB, bound $bound)"
echo "resident_pages: switches --json: peak RssFile $got KB of a $kb KB file"

# Every 10th buffer zeroed: 10 % of the buffers damaged, each gap's neighbours read at open.
python3 - "$dir/s.etl" <<'PY'
import os, sys
f = open(sys.argv[1], 'r+b'); n = os.path.getsize(sys.argv[1]) // 65536
for i in range(5, n, 10):
    f.seek(i * 65536); f.write(b'\0' * 65536)
PY
for cmd in info cpu; do
  peak "$dir/p" "$etlkit" $cmd "$dir/s.etl"
  got=$(cat "$dir/p")
  [ "$got" -lt $bound ] || fail "$cmd of a trace with every 10th buffer zeroed kept $got KB mapped (file $kb KB, bound $bound)"
  echo "resident_pages: $cmd, every 10th buffer zeroed: peak RssFile $got KB"
done
