#!/bin/sh
# names.sh ETLKIT GEN_NAMES - names from the trace on every output (issue 18 #8, #9, #11, #14).
# gen_names writes a trace whose process and thread names hold ESC, BEL, CR, LF, a C1 control,
# U+202E, U+2028, a spreadsheet formula and an empty ImageFileName. Then:
#  1. no command's text output (nor its warnings) carries a raw control character, C1 control,
#     line separator, bidirectional override or byte that is not UTF-8; every --json is valid;
#  2. the spreadsheet CSVs (switches, cpu, waits, wakeups, pmc) neutralise formula cells, numbers
#     stay numbers, and the export CSVs keep every value exact;
#  3. the empty ImageFileName is "" (text `""`), never the unknown process's "Unknown": text, JSON,
#     CSV, SQLite, ftrace;
#  4. waitchain on a thread that is not in the trace says so, with close matches (JSON: an object),
#     exit 4; its anomaly notes are counted; compare --fail-if says a number is out of range.
set -u
etlkit=$1; gen=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
ok() { passes=$((passes+1)); }
bad() { echo "FAIL: $*" >&2; fails=$((fails+1)); }
expect() { # expect NAME CONDITION...
  name=$1; shift
  if "$@"; then ok; else bad "$name"; fi
}
has() { LC_ALL=C grep -q -e "$2" "$1"; }       # has FILE PATTERN (basic regex)
hasf() { LC_ALL=C grep -q -F -e "$2" "$1"; }   # hasf FILE STRING
t=$tmp/names.etl
"$gen" "$t" || { echo "FAIL: gen_names" >&2; exit 1; }
run() { timeout -k 5 120 "$etlkit" "$@"; }

# clean NAME FILE: nothing in FILE can drive a terminal. Byte patterns, read in the C locale.
c0=$(printf '[\001-\010\013-\037\177]')            # C0 but LF (and TAB, checked apart), DEL
c1=$(printf '\302[\200-\237]')                      # U+0080..U+009F
sep=$(printf '\342\200[\250-\256\216\217]')         # U+2028/9, U+202A..E, U+200E/F
iso=$(printf '\342\201[\246-\251]')                 # U+2066..9
alm=$(printf '\330\234')                            # U+061C
tab=$(printf '\t')
clean() {
  if [ "$(tr -cd '\000' <"$2" | wc -c)" -ne 0 ]; then bad "$1: a NUL byte"; return; fi
  for p in "$c0" "$c1" "$sep" "$iso" "$alm" "$tab"; do
    if LC_ALL=C grep -q -e "$p" "$2"; then
      bad "$1: a raw control character: $(LC_ALL=C grep -n -e "$p" "$2" | head -1 | od -c | head -3 | tr -s ' ')"
      return
    fi
  done
  if ! iconv -f UTF-8 -t UTF-8 "$2" >/dev/null 2>&1; then bad "$1: not UTF-8"; return; fi
  ok
}
# formula_free FILE: no CSV cell (at a line start or after a comma, quoted or not) starts with = + - @,
# but the number -5 (a thread's name) and "-" alone (the reports' "none").
formula_free() {
  ! LC_ALL=C sed -e 's/,-5,/,,/g' -e 's/,-5\r*$//' -e 's/^-,/,/' -e 's/,-,/,,/g' "$1" |
    LC_ALL=C grep -q -e '^"*[=+@-]' -e ',"*[=+@-]'
}
json_ok() { # json_ok NAME FILE
  if command -v jq >/dev/null 2>&1; then
    expect "$1: valid JSON" jq -e . "$2" >/dev/null 2>&1
  elif command -v python3 >/dev/null 2>&1; then
    expect "$1: valid JSON" python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1]) if l.strip()]' "$2"
  fi
}

# --- 1. text outputs: escaped; JSON outputs: valid -----------------------------------------------
while read -r what args; do
  # shellcheck disable=SC2086
  run $args >"$tmp/out" 2>"$tmp/err"; rc=$?
  expect "$what: exit $rc" [ "$rc" -eq 0 ]
  clean "$what (stdout)" "$tmp/out"
  clean "$what (stderr)" "$tmp/err"
done <<EOF
info info $t
dump dump $t
dump-expand dump --expand $t
dump-jsonl-text dump --format text $t
cpu cpu $t
cpu-interval cpu --interval 10ms $t
waits waits $t
switches switches $t
spinlocks spinlocks $t
pmc pmc $t
waitchain waitchain $t --thread 301
waitchain-process waitchain $t --process 300
wakeups wakeups $t
compare compare $t $t
EOF
run export "$t" --to ftrace -o "$tmp/ft.txt" --quiet; expect "export ftrace: exit $?" [ $? -eq 0 ]
clean "export ftrace" "$tmp/ft.txt"
run report "$t" -o "$tmp/r.html" --quiet; expect "report: exit $?" [ $? -eq 0 ]
clean "report page" "$tmp/r.html"
# The names are still there, escaped, in the text ones.
run cpu "$t" >"$tmp/out" 2>&1
expect "cpu shows the image name escaped" hasf "$tmp/out" 'e\x1b[31mv\x07i\x0dl\x0a\u009b'
run waitchain "$t" --thread 301 >"$tmp/out" 2>&1
expect "waitchain header shows the thread name escaped" \
  hasf "$tmp/out" 'tid 301 "x\x1b]0;pwn\x07\u202e\u2066y\x0d\x0a\u0085\u2028z"'
expect "waitchain summary shows the readier escaped" has "$tmp/out" '^Summary: .*e\\x1b\[31mv.* tid 30[12]'
for c in cpu waits switches pmc wakeups "waitchain --thread 301"; do
  # shellcheck disable=SC2086
  run $c --json "$t" >"$tmp/out" 2>/dev/null
  json_ok "$c --json" "$tmp/out"
  clean "$c --json" "$tmp/out"
done

# --- 2. CSV: spreadsheet cells neutralised, export cells exact ----------------------------------
for c in switches cpu waits wakeups pmc; do
  run $c --csv "$t" >"$tmp/csv" 2>/dev/null
  expect "$c --csv: formula cells start with '" hasf "$tmp/csv" "'=cmd|' /C calc'!A0"
  expect "$c --csv: no cell starts with = + - @" formula_free "$tmp/csv"
done
run cpu --csv "$t" >"$tmp/csv" 2>/dev/null
expect "cpu --csv: the thread named -5 stays a number" hasf "$tmp/csv" ",-5,"
expect "cpu --csv: no '-5" sh -c "! grep -q \"'-5\" \"\$1\"" _ "$tmp/csv"
run switches --csv "$t" >"$tmp/csv" 2>/dev/null
expect "switches --csv: the thread name neutralised" hasf "$tmp/csv" ",'@SUM(1+1)*cmd|' /C calc'!A0,"
run export "$t" --to csv -o "$tmp/x" --quiet; expect "export csv: exit $?" [ $? -eq 0 ]
expect "export csv: the image name exact" hasf "$tmp/x/process.csv" ",100,=cmd|' /C calc'!A0,"
expect "export csv: the thread name exact" hasf "$tmp/x/thread.csv" ",@SUM(1+1)*cmd|' /C calc'!A0,"
expect "export csv: no ' added" sh -c "! grep -q \"'=cmd\\|'@SUM\" \"\$1\"/*.csv" _ "$tmp/x"

# --- 3. the empty ImageFileName ------------------------------------------------------------------
run cpu "$t" >"$tmp/out" 2>&1
expect "cpu text: empty image is \"\"" has "$tmp/out" '^"" *200 '
expect "cpu text: its threads are \"\" (200)" hasf "$tmp/out" '"" (200)'
expect "cpu text: no Unknown process" sh -c "! grep -q \"^Unknown\\|Unknown (\" \"\$1\"" _ "$tmp/out"
run cpu --json "$t" >"$tmp/out" 2>&1
expect "cpu --json: empty image is \"\"" hasf "$tmp/out" '{"pid":200,"name":""'
run waits --json "$t" >"$tmp/out" 2>&1
expect "waits --json: process \"\"" hasf "$tmp/out" '"tid":201,"pid":200,"process":"","process_label":"\"\" (200)"'
run wakeups "$t" >"$tmp/out" 2>&1
expect "wakeups text: \"\" (200)" hasf "$tmp/out" '"" (200)'
run pmc "$t" >"$tmp/out" 2>&1
expect "pmc text: empty image is \"\"" has "$tmp/out" '^"" *200 '
expect "export csv: empty image is \"\", not NULL" hasf "$tmp/x/process.csv" ',200,"",'
run export "$t" --to ftrace -o "$tmp/ft.txt" --quiet --force
expect "ftrace: comm \"\"" hasf "$tmp/ft.txt" 'next_comm="" next_pid=201'
if command -v sqlite3 >/dev/null 2>&1; then
  run export "$t" --to sqlite -o "$tmp/x.db" --quiet
  expect "sqlite: empty image is ''" [ "$(sqlite3 "$tmp/x.db" "SELECT quote(name) FROM process WHERE pid = 200")" = "''" ]
  expect "sqlite: formula image exact" \
    [ "$(sqlite3 "$tmp/x.db" "SELECT name FROM process WHERE pid = 100")" = "=cmd|' /C calc'!A0" ]
fi

# --- 4. waitchain's answers, compare's numbers ---------------------------------------------------
run waitchain "$t" --thread 999999 >"$tmp/out" 2>"$tmp/err"; rc=$?
expect "waitchain absent thread: exit $rc" [ "$rc" -eq 4 ]
expect "waitchain absent thread: not in the trace ($(cat "$tmp/err"))" hasf "$tmp/err" "thread 999999 is not in this trace"
expect "waitchain absent thread: nearest ids" has "$tmp/err" '^  302  e\\x1b'
expect "waitchain absent thread: not 'no context switches'" sh -c "! grep -q 'no context switches' \"\$1\" \"\$2\"" _ "$tmp/out" "$tmp/err"
clean "waitchain absent thread (stderr)" "$tmp/err"
run waitchain "$t" --thread 999999 --json >"$tmp/out" 2>/dev/null; rc=$?
expect "waitchain --json absent thread: exit $rc" [ "$rc" -eq 4 ]
json_ok "waitchain --json absent thread" "$tmp/out"
expect "waitchain --json absent thread: says so" hasf "$tmp/out" '"error":"no_such_thread","message":"thread 999999 is not in this trace"'
expect "waitchain --json absent thread: close matches" hasf "$tmp/out" '"close_matches":[{"tid":302,'
# --thread 0 is the idle thread, and a number past 32 bits no thread: neither is a PID (h-explore18 M1: "no thread
# of process PID 0 ever switched in").
run waitchain "$t" --thread 0 --json >"$tmp/out" 2>"$tmp/err"; rc=$?
expect "waitchain --thread 0: exit $rc" [ "$rc" -eq 4 ]
expect "waitchain --thread 0: the idle thread ($(cat "$tmp/err"))" hasf "$tmp/out" '"error":"no_such_thread","message":"thread 0 is the idle thread'
run waitchain "$t" --thread 4294967296 >"$tmp/out" 2>"$tmp/err"; rc=$?
expect "waitchain --thread 2^32: exit $rc" [ "$rc" -eq 4 ]
expect "waitchain --thread 2^32: no such thread ($(cat "$tmp/err"))" hasf "$tmp/err" "thread 4294967296 is not in this trace"
run waitchain "$t" --thread calc --json >"$tmp/out" 2>"$tmp/err"; rc=$?
expect "waitchain absent process: exit $rc" [ "$rc" -eq 4 ]
expect "waitchain absent process: names the match" hasf "$tmp/out" '"close_matches":[{"pid":100,"process":"=cmd|'"'"' /C calc'"'"'!A0","pids":[100]}]'
run waitchain "$t" --thread 301 >"$tmp/out" 2>&1
expect "waitchain: readied-but-never-switched-in note counted" hasf "$tmp/out" "note: 1 thread readied but never switched in"
run waitchain "$t" --thread 301 --json >"$tmp/out" 2>&1
expect "waitchain --json: ready_unmatched counted" hasf "$tmp/out" '"ready_unmatched":1'
run compare "$t" "$t" --fail-if 'cpu(total) > 1e400%' >/dev/null 2>"$tmp/err"; rc=$?
expect "compare --fail-if 1e400%: exit $rc" [ "$rc" -eq 64 ]
expect "compare --fail-if 1e400%: out of range ($(cat "$tmp/err"))" hasf "$tmp/err" "number out of range"
run compare "$t" "$t" --fail-if 'cpu(total) > 1.5e3ms' >/dev/null 2>&1
expect "compare --fail-if 1.5e3ms: accepted" [ $? -eq 0 ]

echo "names: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
