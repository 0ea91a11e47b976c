#!/bin/sh
# timerule.sh ETLKIT - one damaged timestamp (issue 18): the top byte of ONE CSwitch timestamp (or of one
# compact batch's FirstTimeStamp) set to 0xFF or 0x7F in a 1 s synth trace. Every report exits 3 with a
# warning naming the record's file offset, keeps the session's window (the undamaged trace's), prints no
# negative duration; the per-CPU and time-ordered runs and 1 or 2 threads agree; dump still prints the
# record. A damaged EndTime likewise. Before: "window 0 s .. -7205759402 s" or a 292-year window, exit 0, no
# warning.
set -u
etlkit=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
ok() { passes=$((passes+1)); }
bad() { echo "FAIL: $*" >&2; fails=$((fails+1)); }
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$3', expected '$2'"; fi; }
run() { timeout -k 5 120 "$@"; }

"$etlkit" synth -o "$tmp/clean.etl" --duration 1 --seed 7 --quiet || { echo "FAIL: synth" >&2; exit 1; }
"$etlkit" convert "$tmp/clean.etl" -o "$tmp/clean-c.etl" --cswitch compact --quiet || { echo "FAIL: convert" >&2; exit 1; }
bs=$("$etlkit" info --json "$tmp/clean.etl" | sed 's/.*"buffer_size":\([0-9]*\).*/\1/')

# offset FILE HOOK N: the file offset of the Nth record with that hook (uncompressed buffers of bs bytes).
offset() {
  "$etlkit" dump --order file --format jsonl --filter "$2" "$1" | sed -n "${3}p" |
    sed 's/.*"buf":\([0-9]*\),"off":\([0-9]*\),.*/\1 \2/' | { read b o; echo $((b * bs + o)); }
}
# poke FILE OFFSET BYTE(octal): one byte changed in place.
poke() { printf "\\$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null; }
hex() { printf '0x%x' "$1"; }

window() { sed -n '1s/.*window \(.*\), [0-9]* CPUs$/\1/p' "$1"; }
no_negative() { ! grep -q -e ' -[0-9]' -e '(-[0-9]' "$1"; }
json_ok() { # no negative *_ns, and the window's end is the clean trace's
  ! grep -q -e '_ns":-' "$1" && grep -q "\"end_ns\":$2[,}]" "$1"
}

for form in full compact; do
  if [ $form = full ]; then clean=$tmp/clean.etl; hook=CSwitch; tsoff=8
  else clean=$tmp/clean-c.etl; hook=0x0525; tsoff=16; fi # a batch's FirstTimeStamp: payload +0, after the 16-byte header
  at=$(offset "$clean" $hook 57)
  for cmd in cpu waits switches; do
    run "$etlkit" $cmd "$clean" > "$tmp/$cmd.clean" 2>/dev/null
  done
  run "$etlkit" cpu --json "$clean" > "$tmp/cpu.json.clean"
  end_ns=$(sed 's/.*"end_ns":\([0-9]*\).*/\1/' "$tmp/cpu.json.clean")
  run "$etlkit" info "$clean" | grep '^Duration' > "$tmp/dur.clean"
  lines=$(run "$etlkit" dump "$clean" | wc -l)
  for top in 377 177; do
    f=$tmp/$form-$top.etl
    cp "$clean" "$f"
    poke "$f" $((at + tsoff + 7)) $top
    n="$form, top byte $(printf '%o' 0$top | sed 's/377/0xff/; s/177/0x7f/')"
    for cmd in cpu waits switches; do
      run "$etlkit" $cmd "$f" > "$tmp/out" 2> "$tmp/err"; rc=$?
      check "$n: $cmd exit" 3 $rc
      expect_at=$(hex $at)
      grep -q "file offset $expect_at.*outside the session" "$tmp/err" && ok ||
        bad "$n: $cmd warns at $expect_at: $(head -c 300 "$tmp/err")"
      [ $cmd = switches ] || check "$n: $cmd window" "$(window "$tmp/$cmd.clean")" "$(window "$tmp/out")"
      no_negative "$tmp/out" && ok || bad "$n: $cmd prints a negative number: $(grep -m1 -e ' -[0-9]' -e '(-[0-9]' "$tmp/out")"
    done
    run "$etlkit" cpu --json "$f" > "$tmp/json" 2>/dev/null
    json_ok "$tmp/json" "$end_ns" && ok || bad "$n: cpu --json window or a negative duration"
    grep -q '"bad_buffers":1[,}]' "$tmp/json" && ok || bad "$n: cpu --json anomalies count the buffer"
    # One thread or two, CPU by CPU or in time order (waits): the same answers.
    run "$etlkit" cpu --threads 1 "$f" > "$tmp/t1" 2>/dev/null
    run "$etlkit" cpu --threads 2 "$f" > "$tmp/t2" 2>/dev/null
    cmp -s "$tmp/t1" "$tmp/t2" && ok || bad "$n: cpu with 1 and 2 threads differ"
    run "$etlkit" info "$f" > "$tmp/out" 2>/dev/null; rc=$?
    check "$n: info duration" "$(cat "$tmp/dur.clean")" "$(grep '^Duration' "$tmp/out")"
    run "$etlkit" compare "$clean" "$f" > "$tmp/out" 2>/dev/null; check "$n: compare exit" 3 $?
    grep -q -e '-100' -e 'e+' "$tmp/out" && bad "$n: compare: $(grep -m1 -e '-100' -e 'e+' "$tmp/out")" || ok
    if [ $form = full ]; then
      check "$n: info exit" 3 $rc
      # dump still prints the record (flagged in the warning).
      check "$n: dump lines" "$lines" "$(run "$etlkit" dump "$f" 2>/dev/null | wc -l)"
      run "$etlkit" dump "$f" >/dev/null 2>"$tmp/err"; check "$n: dump exit" 3 $?
    else
      # info and dump print batches as they are; dump --expand finds the damage expanding them.
      run "$etlkit" dump --expand "$f" >/dev/null 2>"$tmp/err"; check "$n: dump --expand exit" 3 $?
    fi
    grep -q "file offset $(hex $at)" "$tmp/err" && ok || bad "$n: dump warns"
  done
done

# A damaged EndTime (TRACE_LOGFILE_HEADER +0x10, at 0x78): 292 years on, far after the last buffer flush.
f=$tmp/endtime.etl
cp "$tmp/clean.etl" "$f"
poke "$f" $((0x78 + 7)) 177
run "$etlkit" cpu "$f" > "$tmp/out" 2> "$tmp/err"; check "EndTime: cpu exit" 3 $?
grep -q "EndTime .* far after the last buffer flush" "$tmp/err" && ok || bad "EndTime: cpu warns: $(head -c 300 "$tmp/err")"
run "$etlkit" cpu "$tmp/clean.etl" > "$tmp/cpu.clean" 2>/dev/null
check "EndTime: cpu window" "$(window "$tmp/cpu.clean")" "$(window "$tmp/out")"

# Windows near the limits of int64 (a --range across it): report sizes its columns without overflowing
# (UBSan: "9223372036854775807 + 500"), exit 0, nothing from the sanitizers.
run "$etlkit" report "$tmp/clean.etl" --range 0 9223372036.854775807 -o "$tmp/r.html" --force >/dev/null 2>"$tmp/err"
check "report --range 0 INT64_MAX exit" 0 $?
grep -q "runtime error" "$tmp/err" && bad "report --range: $(grep -m1 'runtime error' "$tmp/err")" || ok

# A time only 50 s past the end of the 1 s session (not near 2^63): damage too, the window stays the session's
# (before the tighter rule: "window 0 s .. 50.259 s", a CPU 99 % busy, exit 0).
cp "$tmp/clean.etl" "$tmp/p50.etl"
o=$(( $(offset "$tmp/clean.etl" CSwitch 57) + 8 ))
v=$(od -An -tu8 -j "$o" -N8 "$tmp/p50.etl" | tr -d ' ')
v=$((v + 50 * 10000000)) # the qpc clock's 10 MHz
for i in 0 1 2 3 4 5 6 7; do poke "$tmp/p50.etl" $((o + i)) "$(printf '%03o' $(( (v >> (8 * i)) & 255 )))"; done
run "$etlkit" cpu "$tmp/p50.etl" > "$tmp/out" 2> "$tmp/err"; check "+50 s: cpu exit" 3 $?
check "+50 s: cpu window" "$(window "$tmp/cpu.clean")" "$(window "$tmp/out")"
grep -q "$(hex "$((o - 8))")" "$tmp/err" && ok || bad "+50 s: the warning names the record's offset: $(head -c 300 "$tmp/err")"

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
