#!/bin/sh
# oom_answers.sh ETLKIT FAILALLOC_SO MODE - out of memory reaches the user (explore17): each allocation of a
# command's run is failed in turn (cli/failalloc.c, LD_PRELOAD); a run that exits 0 gives the normal run's answer,
# one that fails exits 1 and says why on stderr. convert keeps the session's group masks and base priorities (F1,
# F13), info prints no zeros and names the file (F10, F12), cpu loses no table (F5), profile --folded no line (F2),
# report's page keeps its data block and its anomalies list (F3) and says why it fails (F11), a SQLite export's out
# of memory is said as such (F12). MODE asan (ASan's allocator cannot be wrapped), windows and systems other than
# Linux: skipped, with one line.
set -u
etlkit=$1 shim=$2 mode=${3:-plain}
if [ "$mode" != plain ] || [ "${ETLKIT_TARGET:-}" = windows ] || [ "$(uname -s)" != Linux ]; then
  echo "oom_answers.sh: skipped: the allocation shim needs LD_PRELOAD on Linux, without ASan (mode $mode)"; exit 77
fi
tmp=${KEEP:-$(mktemp -d)}; [ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { fails=$((fails+1)); [ $fails -le 40 ] && echo "FAIL: $*" >&2; }
a=$tmp/a.etl
"$etlkit" synth --quiet --seed 3 --cpus 2 --threads 8 --processes 3 --duration 0.05 --stacks --pmc 2 \
  --cswitch both -o "$a" || { echo "FAIL: synth" >&2; exit 1; }

# calls ARGS...: the allocations of a normal run
calls() {
  rm -f "$tmp/count"
  FAILALLOC_COUNT=$tmp/count LD_PRELOAD=$shim "$etlkit" "$@" >/dev/null 2>&1
  sed -n 's/^calls=\([0-9]*\).*/\1/p' "$tmp/count"
}
# run N ARGS...: with allocation N failing; rc, stdout in $tmp/o, stderr in $tmp/e
run() {
  n=$1; shift
  FAILALLOC_N=$n LD_PRELOAD=$shim "$etlkit" "$@" >"$tmp/o" 2>"$tmp/e"
  rc=$?
}
# failed WHAT: exit 1 with a line on stderr
failed() {
  [ "$rc" = 1 ] || { fail "$1: exit $rc"; return; }
  [ -s "$tmp/e" ] || fail "$1: exit 1, nothing on stderr"
}
# sweep LABEL ARGS...: stdout of every run that exits 0 is the normal run's; with names=1, a failed run's stderr
# names the input
names=0
sweep() {
  label=$1; shift
  "$etlkit" "$@" >"$tmp/ref" 2>/dev/null || { fail "$label: the normal run"; return; }
  c=$(calls "$@"); [ "${c:-0}" -gt 0 ] || { fail "$label: no allocation counted"; return; }
  n=1
  while [ $n -le $c ]; do
    run $n "$@"
    if [ $rc = 0 ]; then cmp -s "$tmp/ref" "$tmp/o" || fail "$label: allocation $n: another output, exit 0"
    else
      failed "$label: allocation $n"
      [ $names = 0 ] || grep -qF "$a: " "$tmp/e" || fail "$label: allocation $n: not said of $a: $(cat "$tmp/e")"
    fi
    n=$((n+1))
  done
  echo "$label: $c allocations"
}

names=1
sweep "info" info "$a" --threads 1
sweep "info --json" info "$a" --threads 1 --json
names=0
sweep "cpu" cpu "$a" --threads 1
sweep "profile --folded" profile "$a" --threads 1 --folded

# convert: the output of a run that exits 0 is the normal one, byte for byte; a failed run leaves none
for form in compact full; do
  "$etlkit" convert "$a" -o "$tmp/x.etl" --cswitch $form -q && mv "$tmp/x.etl" "$tmp/ref.etl" ||
    { fail "convert $form: the normal run"; continue; }
  c=$(calls convert "$a" -o "$tmp/x.etl" --cswitch $form -q --force)
  n=1
  while [ $n -le "${c:-0}" ]; do
    rm -f "$tmp/x.etl"
    run $n convert "$a" -o "$tmp/x.etl" --cswitch $form -q
    if [ $rc = 0 ]; then cmp -s "$tmp/ref.etl" "$tmp/x.etl" || fail "convert $form: allocation $n: another output, exit 0"
    else
      failed "convert $form: allocation $n"
      [ ! -e "$tmp/x.etl" ] || fail "convert $form: allocation $n: an output after exit $rc"
    fi
    n=$((n+1))
  done
  echo "convert --cswitch $form: $c allocations"
done

# report: a page written has its data block and the anomalies list (a memstream whose close lost its buffer:
# glibc's fclose says 0); a page not written is said why
"$etlkit" report "$a" -o "$tmp/ref.html" --threads 1 || fail "report: the normal run"
grep -q 'id="etlkit-data">{' "$tmp/ref.html" && grep -q 'Anomalies the scheduler model counted' "$tmp/ref.html" ||
  fail "report: the normal page lacks its data block or its anomalies"
c=$(calls report "$a" -o "$tmp/r.html" --threads 1 --force)
n=1
while [ $n -le "${c:-0}" ]; do
  rm -f "$tmp/r.html"
  run $n report "$a" -o "$tmp/r.html" --threads 1
  if [ $rc = 0 ]; then
    grep -q 'id="etlkit-data">{' "$tmp/r.html" || fail "report: allocation $n: the data block empty, exit 0"
    grep -q 'Anomalies the scheduler model counted' "$tmp/r.html" || fail "report: allocation $n: no anomalies, exit 0"
  else
    failed "report: allocation $n"
    [ ! -e "$tmp/r.html" ] || fail "report: allocation $n: a page after exit $rc"
  fi
  n=$((n+1))
done
echo "report: $c allocations"

# export --to sqlite: its out of memory says so (not an empty reason, not "cannot open"). SQLite's own allocations
# are many: the first 200 (the sink's open among them).
if "$etlkit" export "$a" --to sqlite -o "$tmp/x.db" --threads 1 2>/dev/null; then
  n=1
  while [ $n -le 200 ]; do
    rm -f "$tmp/x.db"
    run $n export "$a" --to sqlite -o "$tmp/x.db" --threads 1
    if [ $rc != 0 ]; then
      failed "export sqlite: allocation $n"
      last=$(tail -n 1 "$tmp/e")
      case "$last" in
        *": "|*"cannot open"*) fail "export sqlite: allocation $n: $last" ;;
      esac
    fi
    n=$((n+1))
  done
  echo "export --to sqlite: 200 allocations"
else
  echo "export --to sqlite: not in this build"
fi

[ $fails = 0 ] || { echo "$fails failures" >&2; exit 1; }
echo "oom_answers.sh: ok"
