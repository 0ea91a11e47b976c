#!/bin/sh
# profile.sh ETLKIT GEN_PROFILE SAMPLES - `etlkit profile` from the command line (issue 20), on the real
# perfview-x64-compressed.etl and on the traces tests/unit/profbuild.h builds (gen_profile): the text,
# --json (its fixed keys, every list summing to samples), --folded (counts summing to samples, nothing that
# can drive a terminal), --csv (a header row), --by, --butterfly with a label from the functions, the
# filters, and the usage errors (exit 64, one line) and a file that is not an ETL (exit 2).
set -u
etlkit=$1; gen=$2; samples=$3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
check() { # check NAME EXPECTED_STATUS ACTUAL_STATUS
  if [ "$2" = "$3" ]; then passes=$((passes+1)); else echo "FAIL: $1: exit $3, expected $2" >&2; fails=$((fails+1)); fi
}
expect() { # expect NAME CONDITION...
  name=$1; shift
  if "$@"; then passes=$((passes+1)); else echo "FAIL: $name" >&2; fails=$((fails+1)); fi
}
command -v python3 >/dev/null 2>&1 || { echo "profile.sh: skipped: no python3 to read the JSON"; exit 77; }
"$gen" "$tmp" || { echo "FAIL: gen_profile" >&2; exit 1; }

# json_check NAME FILE PYTHON-EXPRESSION...: each expression true of the parsed document d.
json_check() {
  name=$1; file=$2; shift 2
  expect "$name" python3 - "$file" "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for e in sys.argv[2:]:
    if not eval(e):
        sys.stderr.write("not true: %s\n" % e)
        sys.exit(1)
PY
}
# folded_sum FILE: the counts after each line's last space, added.
folded_sum() { awk '{ n += $NF } END { print n + 0 }' "$1"; }

real=$samples/perfview-x64-compressed.etl
for t in "$real" "$tmp/p64.etl" "$tmp/p32.etl"; do
  b=$(basename "$t")
  "$etlkit" profile "$t" >"$tmp/out" 2>"$tmp/err"; check "$b: text" 0 $?
  expect "$b: text header" grep -q "samples, every" "$tmp/out"
  for s in Processes Threads Modules Functions; do expect "$b: text $s" grep -q "^$s\$" "$tmp/out"; done
  "$etlkit" profile --json "$t" >"$tmp/json" 2>"$tmp/err"; check "$b: --json" 0 $?
  json_check "$b: --json keys and sums" "$tmp/json" \
    'isinstance(d["samples"], int) and isinstance(d["interval_ns"], int) and isinstance(d["with_stack"], int)' \
    'all(set(["tid","pid","process","name","samples"]) <= set(t) for t in d["threads"])' \
    'all(set(["pid","name","samples"]) <= set(p) for p in d["processes"])' \
    'all(set(["module","samples"]) <= set(m) for m in d["modules"])' \
    'd["threads"] and d["processes"] and d["modules"]' \
    'sum(t["samples"] for t in d["threads"]) == d["samples"]' \
    'sum(p["samples"] for p in d["processes"]) == d["samples"]' \
    'sum(m["samples"] for m in d["modules"]) == d["samples"]' \
    'd["with_stack"] <= d["samples"]'
  n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"])' "$tmp/json")
  "$etlkit" profile --folded "$t" >"$tmp/folded" 2>"$tmp/err"; check "$b: --folded" 0 $?
  expect "$b: --folded sums to samples ($n)" [ "$(folded_sum "$tmp/folded")" = "$n" ]
  expect "$b: --folded lines" [ "$(grep -c -v -E '^[^;]+;[^;]+(;[^;]+)+ [0-9]+$' "$tmp/folded")" = 0 ]
  "$etlkit" profile --csv "$t" >"$tmp/csv" 2>"$tmp/err"; check "$b: --csv" 0 $?
  expect "$b: --csv header" [ "$(head -1 "$tmp/csv" | tr -d '\r')" = "$(printf '\357\273\277')depth,by,group,samples,percent" ]
  "$etlkit" profile --by process,module,function --json "$t" >"$tmp/by" 2>"$tmp/err"; check "$b: --by" 0 $?
  json_check "$b: --by rows" "$tmp/by" \
    'd["by"] == ["process", "module", "function"]' \
    'sum(r["samples"] for r in d["rows"] if r["depth"] == 0) == d["samples"]' \
    'sum(r["samples"] for r in d["rows"] if r["depth"] == 2) == d["samples"]'
  "$etlkit" profile --by process,module,function "$t" >"$tmp/out" 2>"$tmp/err"; check "$b: --by text" 0 $?
  # The busiest function of a stack walk: the butterfly finds it (self: the samples it is innermost in).
  f=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["functions"][0]["function"])' "$tmp/json")
  "$etlkit" profile --butterfly "$f" --json "$t" >"$tmp/bf" 2>"$tmp/err"; check "$b: --butterfly $f" 0 $?
  json_check "$b: --butterfly" "$tmp/bf" 'd["total"] >= d["self"] > 0' 'sum(c["samples"] for c in d["callers"]) <= d["total"]'
  "$etlkit" profile --butterfly "$f" "$t" >"$tmp/out" 2>"$tmp/err"; check "$b: --butterfly text" 0 $?
  expect "$b: --butterfly text" grep -q "^Callers" "$tmp/out"
done

# The built trace's numbers (test_profile.c checks every one of them in the library).
"$etlkit" profile --json "$tmp/p64.etl" >"$tmp/json"
json_check "p64: numbers" "$tmp/json" \
  'd["samples"] == 18 and d["with_stack"] == 11 and d["interval_ns"] == 500000' \
  '[(p["name"], p["samples"]) for p in d["processes"]] == [("app.exe", 13), ("Idle", 2), ("tool.exe", 2), ("System", 1)]' \
  '[(t["tid"], t["pid"], t["name"], t["samples"]) for t in d["threads"]][0] == (101, 100, "main", 8)' \
  '[m["module"] for m in d["modules"]] == ["ntoskrnl.exe", "Unknown", "plugin.dll", "ntdll.dll", "hal.dll", "app.exe"]'
"$etlkit" profile --folded "$tmp/p64.etl" >"$tmp/folded"
expect "p64: folded first line" [ "$(head -1 "$tmp/folded")" = \
  "app.exe (100);Thread (102);app.exe+0x500;ntdll.dll+0x4000;ntoskrnl.exe+0xa10;ntoskrnl.exe+0xa00 2" ]
"$etlkit" profile --butterfly ntdll.dll+0x4000 --json "$tmp/p64.etl" >"$tmp/bf"
json_check "p64: butterfly" "$tmp/bf" 'd["total"] == 3 and d["self"] == 0' \
  '[(c["function"], c["samples"]) for c in d["callers"]] == [("app.exe+0x500", 3)]' \
  '[(c["function"], c["samples"]) for c in d["callees"]] == [("ntoskrnl.exe+0xa10", 3)]'
"$etlkit" profile --butterfly nosuch.dll+0x10 "$tmp/p64.etl" >"$tmp/out" 2>&1; check "butterfly of nothing" 0 $?
expect "butterfly of nothing says so" grep -q "no sampled stack holds it" "$tmp/out"
# Filters: by PID, by name (.exe optional, case ignored), by thread, a window.
for sel in "--process 100" "--process app" "--process APP.EXE"; do
  # shellcheck disable=SC2086
  "$etlkit" profile $sel --json "$tmp/p64.etl" >"$tmp/json"; check "p64 $sel" 0 $?
  json_check "p64 $sel: 13 samples" "$tmp/json" 'd["samples"] == 13'
done
"$etlkit" profile --process -1 --json "$tmp/p64.etl" >"$tmp/json"; check "p64 --process -1" 0 $?
json_check "p64 --process -1: no process has that id" "$tmp/json" 'd["samples"] == 0'
"$etlkit" profile --thread 201 --json "$tmp/p64.etl" >"$tmp/json"; check "p64 --thread" 0 $?
json_check "p64 --thread 201" "$tmp/json" 'd["samples"] == 2 and d["threads"][0]["pid"] == 200'
"$etlkit" profile --range 115us 225us --json "$tmp/p64.etl" >"$tmp/json"; check "p64 --range" 0 $?
json_check "p64 --range" "$tmp/json" 'd["samples"] == 5 and d["with_stack"] == 5' \
  'd["window"] == {"start_ns": 115000, "end_ns": 225000}'

# Names that could drive a terminal: '_' in --folded, escaped in the text.
"$etlkit" profile --folded "$tmp/names.etl" >"$tmp/folded"; check "names --folded" 0 $?
expect "names: folded" [ "$(cat "$tmp/folded")" = "bad_.exe (7);a_b_[31m_z__ (70);x_y.dll+0x10 1" ]
"$etlkit" profile "$tmp/names.etl" >"$tmp/out"; check "names text" 0 $?
expect "names: no ESC in the text" [ "$(LC_ALL=C tr -d -c '\033\015' <"$tmp/out" | wc -c)" -eq 0 ]

# Usage errors: exit 64, nothing on stdout, one line saying what is wrong (and the line every usage error
# ends with: "Try 'etlkit profile --help'.").
p64=$tmp/p64.etl
while read -r what args; do
  # shellcheck disable=SC2086
  "$etlkit" profile $args >"$tmp/out" 2>"$tmp/err"; check "usage: $what" 64 $?
  expect "usage: $what: one line" [ "$(grep -c -v "^Try 'etlkit profile --help'" "$tmp/err")" -eq 1 ]
  expect "usage: $what: the Try line" [ "$(tail -1 "$tmp/err" | tr -d '\r')" = "Try 'etlkit profile --help'." ]
  expect "usage: $what: no output" [ ! -s "$tmp/out" ]
done <<EOF2
by-nonsense --by nonsense $p64
by-twice --by process,process $p64
by-empty --by , $p64
folded-json --folded --json $p64
folded-csv --folded --csv $p64
butterfly-nolabel --butterfly nolabel $p64
butterfly-csv --butterfly a.dll+0x1 --csv $p64
folded-butterfly --folded --butterfly a.dll+0x1 $p64
folded-by --folded --by module $p64
by-butterfly --by module --butterfly a.dll+0x1 $p64
no-file
EOF2
# One SampledProfile's timestamp damaged (its top byte 0x7F): passed over as damage, exit 3 with a warning at its
# offset; the others counted, the window the undamaged trace's.
cp "$tmp/p64.etl" "$tmp/dmg.etl"
bs=$("$etlkit" info --json "$tmp/dmg.etl" | sed 's/.*"buffer_size":\([0-9]*\).*/\1/')
at=$("$etlkit" dump --order file --format jsonl --filter 0x0F2E "$tmp/dmg.etl" | sed -n 5p |
  sed 's/.*"buf":\([0-9]*\),"off":\([0-9]*\),.*/\1 \2/' | { read -r b o; echo $((b * bs + o)); })
printf '\177' | dd of="$tmp/dmg.etl" bs=1 seek=$((at + 15)) conv=notrunc 2>/dev/null
"$etlkit" profile --json "$tmp/dmg.etl" >"$tmp/json" 2>"$tmp/err"; check "damaged timestamp" 3 $?
json_check "damaged timestamp: the rest" "$tmp/json" 'd["samples"] == 17' 'd["window"]["end_ns"] == 960400'
expect "damaged timestamp: warning" grep -q "file offset $(printf '0x%x' "$at")" "$tmp/err"

# A full device as standard output: exit 1 and a line saying so, --folded as the tables.
if [ -w /dev/full ] && [ "${ETLKIT_TARGET:-}" != windows ]; then
  for m in --folded --json ""; do
    # shellcheck disable=SC2086
    "$etlkit" profile $m "$tmp/p64.etl" >/dev/full 2>"$tmp/err"; check "/dev/full $m" 1 $?
    expect "/dev/full $m says so" grep -q "^etlkit profile: standard output: No space left on device$" "$tmp/err"
  done
else
  echo "skipped: /dev/full (none, or the Windows binary)"
fi

# The window is the scheduler reports': to the later of the last record and EndTime, --range clipped to it.
"$etlkit" synth --quiet --seed 5 --cpus 2 --duration 0.2 --stacks -o "$tmp/win.etl"
for r in "" "--range 0.05 0.1" "--range 0.15 9" "--range 0.6 0.7"; do
  # shellcheck disable=SC2086
  w1=$("$etlkit" cpu --json $r "$tmp/win.etl" 2>"$tmp/e1" | sed 's/.*"window":\({[^}]*}\).*/\1/')
  # shellcheck disable=SC2086
  w2=$("$etlkit" profile --json $r "$tmp/win.etl" 2>"$tmp/e2" | sed 's/.*"window":\({[^}]*}\).*/\1/')
  expect "profile's window is cpu's ($r)" [ -n "$w1" -a "$w1" = "$w2" ]
  expect "profile's clip note is cpu's ($r)" [ "$(sed 's/^etlkit cpu:/etlkit profile:/' "$tmp/e1")" = "$(cat "$tmp/e2")" ]
done

# Not an ETL file: exit 2.
printf 'this is not a trace\n' >"$tmp/not.etl"
"$etlkit" profile "$tmp/not.etl" >/dev/null 2>&1; check "not an ETL file" 2 $?

echo "profile.sh: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
