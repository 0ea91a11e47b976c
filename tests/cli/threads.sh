#!/bin/sh
# threads.sh ETLKIT - every command that takes --threads prints the same bytes and exits
# with the same status whatever the number of threads: synthesized traces with full
# CSwitch events, compact batches, both, compressed, another clock, and damaged copies
# (their warnings on stderr too: they are printed in file order).
set -eu
etlkit=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "threads: $*" >&2; exit 1; }

synth() { name=$1; shift; "$etlkit" synth --quiet --cpus 8 --duration 1 -o "$dir/$name.etl" "$@" || fail "synth $name"; }
synth full
synth compact --cswitch compact
synth both --cswitch both
synth packed --cswitch compact --compress --buffer-size 16K
synth cycles --clock cycles --cpus 5 --seed 3
synth stacks --stacks
synth stacks-cached --stacks --stack-form cached --cswitch compact --compress --buffer-size 16K --seed 5
# Damaged copies: 16 bytes of another trace written at 160 places past buffer 0 (the same
# bytes and places every run): records cut, sizes and times gone wrong; more problems than
# the 20 warnings printed, so the count of the others is compared too.
other=$(stat -c %s "$dir/full.etl")
for src in full compact packed stacks; do
  size=$(stat -c %s "$dir/$src.etl")
  cp "$dir/$src.etl" "$dir/$src-damaged.etl"
  i=0
  while [ $i -lt 160 ]; do
    off=$((65536 + (i * 7919 * 4096 + 12345) % (size - 65600)))
    dd if="$dir/full.etl" of="$dir/$src-damaged.etl" bs=1 skip=$((off * 31 % (other - 16))) seek=$off count=16 \
      conv=notrunc 2>/dev/null
    i=$((i + 1))
  done
done

# same NAME CMD...: stdout, stderr and status of CMD with --threads 1, 2 and 7 agree.
same() {
  name=$1; shift
  set +e
  "$@" --threads 1 > "$dir/out1" 2>"$dir/err1"; s1=$?
  for t in 2 7; do
    "$@" --threads $t > "$dir/out$t" 2>"$dir/err$t"; st=$?
    [ "$st" -eq "$s1" ] || fail "$name: exit status $s1 with 1 thread, $st with $t"
    cmp -s "$dir/out1" "$dir/out$t" || fail "$name: output with $t threads differs from 1 thread's"
    cmp -s "$dir/err1" "$dir/err$t" || fail "$name: warnings with $t threads differ from 1 thread's"
  done
  set -e
  [ -s "$dir/out1" ] || fail "$name: no output"
  checks=$((checks + 1))
}

checks=0
for f in "$dir"/*.etl; do
  n=$(basename "$f" .etl)
  same "$n info" "$etlkit" info "$f"
  same "$n info --json" "$etlkit" info --json "$f"
  for c in cpu waits spinlocks pmc wakeups; do
    same "$n $c --json" "$etlkit" $c --json "$f"
  done
  same "$n cpu" "$etlkit" cpu --interval 100ms "$f"
  same "$n switches" "$etlkit" switches "$f"
  same "$n export ftrace" "$etlkit" export "$f" --to ftrace -o - --quiet
  same "$n export perfetto" "$etlkit" export "$f" --to perfetto -o - --quiet
  case $n in
  stacks*)
    # profile: pass 1's walk and pass 2's reading on a second thread, the counting on the caller's
    same "$n profile --json" "$etlkit" profile --json "$f"
    same "$n profile --folded" "$etlkit" profile --folded "$f"
    same "$n profile --by" "$etlkit" profile --by thread,module,function --range 100ms 700ms "$f"
    # the scheduler's stacks: pass 1 on the threads, pass 2's reading on a second, the interning on the caller's
    same "$n waits --by stack" "$etlkit" waits --by stack "$f"
    same "$n switches --json" "$etlkit" switches --json "$f"
    # the export's tables of the profile (sample, stack, image) and its Perfetto samples
    set +e
    for t in 1 2; do
      "$etlkit" export "$f" --to csv -o "$dir/csv$t" --quiet --threads $t --tables sample,stack,image
      eval "st$t=\$?"
    done
    set -e
    [ "$st1" = "$st2" ] && [ "$st1" -le 3 ] || fail "$n export csv: exit status $st1 with 1 thread, $st2 with 2"
    diff -r "$dir/csv1" "$dir/csv2" >/dev/null || fail "$n export csv: the tables with 2 threads differ from 1 thread's"
    rm -rf "$dir/csv1" "$dir/csv2"
    checks=$((checks + 1)) ;;
  esac
done
echo "threads: $checks outputs the same with 1, 2 and 7 threads"
