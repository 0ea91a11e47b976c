#!/bin/sh
# outputs.sh ETLKIT - the output rules of every command that writes a file (export, report,
# convert, synth; src/base/outfile.h):
#  1. A run ended by SIGINT, SIGTERM, SIGHUP or SIGXFSZ leaves nothing behind (no hidden
#     temporary file or directory) and still ends by its signal (exit status 128+n); a signal
#     the run was started with ignored stays ignored.
#  2. A write that fails (a file size limit, a full device) exits 1 naming the file and the
#     system's reason, and leaves nothing behind.
#  3. `-o -` is standard output for report, as for export --to perfetto|ftrace; convert and
#     synth, which write their header last, refuse it (64) instead of creating a file named -.
#  4. One rule for an existing -o: refused without --force; with --force a regular file is
#     replaced (keeping its mode) and a symbolic link is replaced itself, never written through;
#     an output that is the input, by any name, is refused (64).
#  5. --force over a CSV or Parquet directory replaces its table files as one (those not written
#     removed, other files kept) and never the input among them; a dataset never removes its input.
set -u
etlkit=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
passes=0; fails=0
ok() { passes=$((passes+1)); }
bad() { echo "FAIL: $*"; fails=$((fails+1)); }
check() { # check NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then ok; else bad "$1: got '$3', expected '$2'"; fi
}
expect() { # expect NAME CMD...: CMD succeeds
  n=$1; shift
  if "$@"; then ok; else bad "$n"; fi
}
has() { grep -q -- "$1" "$tmp/err"; } # has TEXT: the last command's stderr says it
left() { ls -A "$1" | grep -e '\.tmp$' -e '^-$'; } # left DIR: temporary outputs (or a file named -) in DIR

small=$tmp/small.etl
"$etlkit" synth --quiet --duration 0.5 -o "$small" || { echo "FAIL: synth small"; exit 1; }
# Big enough that every command is still at work well after its temporary output appears.
big=$tmp/big.etl
"$etlkit" synth --quiet --cpus 8 --duration 0 --size 64M -o "$big" || { echo "FAIL: synth big"; exit 1; }

# The Windows binary (ETLKIT_TARGET=windows: etlkit.exe under wine, make test-windows) skips what is Linux's,
# one line each: signals sent with kill, file size limits, symbolic links, file modes.
windows() { [ "${ETLKIT_TARGET:-}" = windows ] && echo "skipped on Windows: $*"; }

# --- 1. signals ------------------------------------------------------------------------------
if ! windows "1. signals sent with kill (Windows has Ctrl-C: a console control handler)"; then
# A shell starts background jobs with SIGINT ignored; env --default-signal gives it back.
if env --default-signal=INT true 2>/dev/null; then dflt="env --default-signal=INT,TERM,HUP,XFSZ"; sigs="INT TERM HUP"
else dflt=""; sigs="TERM HUP"; echo "note: env --default-signal missing: SIGINT not tested"; fi
signo() { case $1 in HUP) echo 1 ;; INT) echo 2 ;; TERM) echo 15 ;; XFSZ) echo 25 ;; esac; }
d=$tmp/sig; mkdir "$d"
# interrupt SIG NAME CMD...: starts CMD in $d, waits (bounded) for its temporary output to appear,
# sends SIG; expects the signal's exit status and $d empty. A run that ended before the signal
# (exit 0) is tried again, twice at most.
interrupt() {
  sig=$1; name=$2; shift 2
  for attempt in 1 2 3; do
    rm -rf "$d"; mkdir "$d"
    (cd "$d" && exec $dflt "$@") 2>"$tmp/err" &
    pid=$!; i=0
    while [ $i -lt 2000 ] && [ -z "$(left "$d")" ] && kill -0 $pid 2>/dev/null; do sleep 0.01; i=$((i+1)); done
    # Still running after 20 s without its temporary: a failure; ended already: the next attempt.
    [ -n "$(left "$d")" ] || ! kill -0 $pid 2>/dev/null || bad "$name: no temporary output appeared"
    kill -s "$sig" $pid 2>/dev/null
    { wait $pid; rc=$?; } 2>/dev/null # (no "Terminated" from the shell)
    [ "$rc" -ne 0 ] && break
  done
  check "$name: exit status" $((128 + $(signo "$sig"))) "$rc"
  expect "$name: nothing left ($(ls -A "$d" | tr '\n' ' '))" [ -z "$(ls -A "$d")" ]
}
for s in $sigs; do
  interrupt $s "SIG$s export sqlite" "$etlkit" export "$big" --to sqlite -o out.db --quiet
  interrupt $s "SIG$s export csv" "$etlkit" export "$big" --to csv -o out.csv --quiet
  interrupt $s "SIG$s export parquet" "$etlkit" export "$big" --to parquet -o out.pq --quiet
  interrupt $s "SIG$s export perfetto" "$etlkit" export "$big" --to perfetto -o out.pf --quiet
  interrupt $s "SIG$s report" "$etlkit" report "$big" -o r.html --quiet
  interrupt $s "SIG$s convert" "$etlkit" convert "$big" -o c.etl --cswitch compact -q
  interrupt $s "SIG$s synth" "$etlkit" synth --quiet --cpus 8 --duration 0 --size 1G -o s.etl --truth s.jsonl
done
# A file size limit's SIGXFSZ, not ignored: the same.
for c in "export $big --to csv -o out.csv --quiet" "export $big --to parquet -o out.pq --quiet" "convert $big -o c.etl -q"; do
  rm -rf "$d"; mkdir "$d"
  { (cd "$d" && ulimit -c 0 && ulimit -f 2000 && exec $dflt "$etlkit" $c) 2>/dev/null; rc=$?; } 2>/dev/null
  check "SIGXFSZ ${c%% *}: exit status" 153 "$rc"
  expect "SIGXFSZ ${c%% *}: nothing left ($(ls -A "$d" | tr '\n' ' '))" [ -z "$(ls -A "$d")" ]
done
# A signal just as the temporary directory is made: strace holds the mkdir 1.5 s after the name exists, and the
# SIGTERM comes then. The name is registered for removal with its making (a signal between the two left it behind).
if command -v strace >/dev/null 2>&1 && strace -o /dev/null true 2>/dev/null; then
  for x in csv parquet; do
    rm -rf "$d"; mkdir "$d"
    (cd "$d" && exec strace -f -o /dev/null -e trace=mkdir,mkdirat -e inject=mkdir,mkdirat:delay_exit=1500000 \
      sh -c 'echo $$ >../pid; exec "$@"' sh "$etlkit" export "$small" --to $x -o out.$x --quiet) 2>/dev/null &
    pid=$!; i=0
    while [ $i -lt 2000 ] && [ -z "$(left "$d")" ] && kill -0 $pid 2>/dev/null; do sleep 0.01; i=$((i+1)); done
    kill -s TERM "$(cat "$tmp/pid")" 2>/dev/null
    { wait $pid; rc=$?; } 2>/dev/null
    check "SIGTERM as the $x directory is made: exit status" 143 "$rc"
    expect "SIGTERM as the $x directory is made: nothing left ($(ls -A "$d" | tr '\n' ' '))" [ -z "$(ls -A "$d")" ]
  done
else
  echo "note: strace missing (or not permitted): a signal as the temporary output is made not tested"
fi
# Started with SIGHUP ignored (nohup): a hangup does not end the run; the SIGTERM after it does.
rm -rf "$d"; mkdir "$d"
(cd "$d" && trap '' HUP && exec "$etlkit" export "$big" --to sqlite -o out.db --quiet) 2>/dev/null &
pid=$!; i=0
while [ $i -lt 2000 ] && [ -z "$(left "$d")" ] && kill -0 $pid 2>/dev/null; do sleep 0.01; i=$((i+1)); done
kill -s HUP $pid 2>/dev/null; sleep 0.1; kill -s TERM $pid 2>/dev/null
{ wait $pid; rc=$?; } 2>/dev/null; check "SIGHUP ignored, then SIGTERM: exit status" 143 $rc
expect "SIGHUP ignored, then SIGTERM: nothing left" [ -z "$(ls -A "$d")" ]
fi

# --- 2. failed writes: the file and the reason ------------------------------------------------
d=$tmp/full; mkdir "$d"
if ! windows "2. writes failing under a file size limit (ulimit -f)"; then
limited() { # limited BLOCKS CMD...: CMD in $d under a file size limit, SIGXFSZ ignored (writes fail EFBIG)
  b=$1; shift
  (cd "$d" && trap '' XFSZ && ulimit -f "$b" && exec "$@") 2>"$tmp/err"
}
for to in sqlite csv perfetto ftrace; do
  limited 100 "$etlkit" export "$small" --to $to -o out.$to --quiet; check "limit: export $to exit" 1 $?
  expect "limit: export $to names out.$to and why ($(cat "$tmp/err"))" has "out\.$to.*File too large"
  expect "limit: export $to leaves nothing" [ -z "$(ls -A "$d")" ]
done
limited 100 "$etlkit" report "$small" -o r.html; check "limit: report exit" 1 $?
expect "limit: report names r.html and why ($(cat "$tmp/err"))" has "r\.html.*File too large"
limited 100 "$etlkit" convert "$small" -o c.etl -q; check "limit: convert exit" 1 $?
expect "limit: convert names c.etl ($(cat "$tmp/err"))" has "c\.etl"
limited 100 "$etlkit" synth --quiet -o s.etl; check "limit: synth exit" 1 $?
expect "limit: synth names s.etl, not its temporary ($(cat "$tmp/err"))" has "synth: s\.etl: "
# The truth grows about nine times faster than the trace: it meets the limit first.
limited 2000 "$etlkit" synth --quiet -o s.etl --truth s.jsonl; check "limit: synth --truth exit" 1 $?
expect "limit: synth names s.jsonl and why ($(cat "$tmp/err"))" has "s\.jsonl: File too large"
expect "limit: nothing left ($(ls -A "$d" | tr '\n' ' '))" [ -z "$(ls -A "$d")" ]
fi
# A full device (/dev/full: ENOSPC on every write) as standard output.
for to in perfetto ftrace; do
  "$etlkit" export "$small" --to $to -o - --quiet >/dev/full 2>"$tmp/err"; check "/dev/full: export $to exit" 1 $?
  expect "/dev/full: export $to says why ($(cat "$tmp/err"))" has "standard output: No space left on device"
done

# --- 3. -o - ---------------------------------------------------------------------------------
d=$tmp/dash; mkdir "$d"
(cd "$d" && exec "$etlkit" report "$small" -o - --quiet) >"$tmp/page" 2>"$tmp/err"; check "report -o -: exit" 0 $?
expect "report -o -: the page on standard output" grep -q '^<!DOCTYPE html>' "$tmp/page"
expect "report -o -: no file named -" [ -z "$(ls -A "$d")" ]
(cd "$d" && exec "$etlkit" report "$small" -o - --quiet) >/dev/full 2>"$tmp/err"; check "report -o - on /dev/full: exit" 1 $?
expect "report -o - on /dev/full says why ($(cat "$tmp/err"))" has "standard output.*No space left on device"
(cd "$d" && exec "$etlkit" convert "$small" -o - -q) >/dev/null 2>&1; check "convert -o -: usage" 64 $?
(cd "$d" && exec "$etlkit" synth --quiet -o -) >/dev/null 2>&1; check "synth -o -: usage" 64 $?
expect "-o -: no file named - ($(ls -A "$d" | tr '\n' ' '))" [ -z "$(ls -A "$d")" ]

# --- 4. existing outputs and symbolic links: one rule -----------------------------------------
d=$tmp/links; mkdir "$d"; cd "$d" || exit 1
cp "$small" in.etl
echo keep > victim; mkdir vdir; echo keep > vdir/keep.txt
is_kind() { [ ! -L "$1" ] && [ "$(ls -ld "$1" | cut -c1)" = "$2" ]; } # is_kind PATH -|d: not a link
unharmed() { # unharmed NAME: what the links pointed to is as it was
  expect "$1: the file a link named is untouched" [ "$(cat victim)" = keep ]
  expect "$1: the directory a link named is untouched" [ "$(ls -A vdir)" = keep.txt ]
  expect "$1: nothing left ($(left . | tr '\n' ' '))" [ -z "$(left .)" ]
}
windows "4. symbolic links as outputs (wine shows a Unix link as what it names)" ||
for c in "export in.etl --to sqlite" "export in.etl --to csv" "export in.etl --to perfetto" \
         "export in.etl --to ftrace" "report in.etl" "convert in.etl" "synth --duration 0.1"; do
  t=victim; kind=-; case "$c" in *csv) t=vdir; kind=d ;; esac
  rm -rf out; ln -s $t out
  "$etlkit" $c -o out --quiet 2>"$tmp/err"; check "$c: a link, no --force" 1 $?
  expect "$c: a link, no --force: says so" has "symbolic link"
  expect "$c: a link, no --force: the link stays" [ -L out ]
  unharmed "$c: a link, no --force"
  "$etlkit" $c -o out --force --quiet 2>"$tmp/err"; check "$c: a link, --force ($(cat "$tmp/err"))" 0 $?
  expect "$c: a link, --force: the link replaced" is_kind out $kind
  unharmed "$c: a link, --force"
  rm -rf out; ln -s nowhere out
  "$etlkit" $c -o out --quiet 2>/dev/null; check "$c: a dangling link, no --force" 1 $?
  "$etlkit" $c -o out --force --quiet 2>/dev/null; check "$c: a dangling link, --force" 0 $?
  expect "$c: a dangling link, --force: replaced" is_kind out $kind
  expect "$c: a dangling link, --force: nothing made where it pointed" [ ! -e nowhere ]
  rm -rf out
  case "$c" in synth*) continue ;; esac
  # The input under another name: refused, --force or not.
  ln -s in.etl out
  "$etlkit" $c -o out --force --quiet 2>/dev/null; check "$c: a link to the input" 64 $?
  rm out; ln in.etl out
  "$etlkit" $c -o out --force --quiet 2>/dev/null; check "$c: a hard link of the input" 64 $?
  expect "$c: the input untouched" cmp -s in.etl "$small"
  rm out
done
# An existing regular file: refused without --force (convert and synth too), replaced with it, mode kept.
for c in "convert in.etl" "synth --duration 0.1" "report in.etl" "export in.etl --to perfetto"; do
  echo mine > old; chmod 640 old
  "$etlkit" $c -o old --quiet 2>"$tmp/err"; check "$c: an existing file, no --force" 1 $?
  expect "$c: an existing file, no --force: says so" has "exists; use --force"
  expect "$c: an existing file, no --force: kept" [ "$(cat old)" = mine ]
  "$etlkit" $c -o old --force --quiet 2>/dev/null; check "$c: an existing file, --force" 0 $?
  expect "$c: an existing file, --force: replaced" [ "$(cat old)" != mine ]
  [ "${ETLKIT_TARGET:-}" = windows ] || expect "$c: an existing file, --force: mode kept" [ "$(stat -c %a old)" = 640 ]
  rm -f old
done
windows "4. file modes kept on replacing"
cd / || exit 1

# --- 5. --force over a CSV or Parquet directory (export, a dataset): one export, never the input --------
# Its table files are replaced as one: afterwards OUT holds this export's tables and no other table's file (with
# --tables the others are removed), or its old files as they were; other files stay. A table file there that is
# the input (itself, a link to it, a hard link), or that is not a regular file, is refused before anything is
# written. (A signal during the replacement waits for its end: tests/unit/test_sigclean.c; a rename failing half
# way is undone: tests/export/test_export_csv.c.)
other=$tmp/other.etl
"$etlkit" synth --quiet --seed 9 --duration 0.3 -o "$other" || { echo "FAIL: synth other"; exit 1; }
d=$tmp/dirs; mkdir "$d"; cd "$d" || exit 1
sums() { (cd "$1" && cksum -- * 2>/dev/null | sort); } # sums DIR: its files' checksums
for x in csv parquet; do
  # The input inside OUT at a table's name (its only copy): 64, untouched, nothing written.
  rm -rf o; mkdir o; cp "$small" o/slice.$x
  "$etlkit" export o/slice.$x --to $x -o o --force --quiet 2>"$tmp/err"; check "$x: the input is OUT/slice.$x" 64 $?
  expect "$x: the input is OUT/slice.$x: says so ($(cat "$tmp/err"))" has "slice\.$x: the output is the input file"
  expect "$x: the input is OUT/slice.$x: untouched" cmp -s o/slice.$x "$small"
  expect "$x: the input is OUT/slice.$x: nothing written ($(ls -A . o | tr '\n' ' '))" [ "$(ls -A o)" = slice.$x ]
  expect "$x: the input is OUT/slice.$x: nothing left" [ -z "$(left .)" ]
  # -o naming the input file: 64, as for every output (not "not a directory", 1).
  cp "$small" in.etl
  "$etlkit" export in.etl --to $x -o in.etl --force --quiet 2>/dev/null; check "$x: -o the input" 64 $?
  expect "$x: -o the input: untouched" cmp -s in.etl "$small"
  # A hard link of the input at a table --tables leaves out (--force would remove it): 64 too.
  rm -rf o; "$etlkit" export "$small" --to $x -o o --quiet; rm o/pmc.$x; ln in.etl o/pmc.$x
  "$etlkit" export in.etl --to $x -o o --force --tables cswitch --quiet 2>/dev/null
  check "$x: the input hard-linked as OUT/pmc.$x, --tables cswitch" 64 $?
  expect "$x: the input hard-linked as OUT/pmc.$x: untouched" cmp -s o/pmc.$x "$small"
  if ! windows "5. the input as a symbolic link to OUT/<table>.$x"; then
    rm -rf o; mkdir o; cp "$small" o/trace.$x; ln -s trace.$x o/my.etl
    "$etlkit" export o/my.etl --to $x -o o --force --quiet 2>/dev/null; check "$x: the input links to OUT/trace.$x" 64 $?
    expect "$x: the input links to OUT/trace.$x: untouched" cmp -s o/trace.$x "$small"
  fi
  # --force --tables over an earlier full export: one export's tables, the user's file kept.
  rm -rf o; "$etlkit" export "$small" --to $x -o o --quiet; echo mine > o/notes.txt
  "$etlkit" export "$other" --to $x -o o --force --tables cswitch --quiet; check "$x: --force --tables cswitch: exit" 0 $?
  check "$x: --force --tables cswitch: one export" "cswitch.$x enum_name.$x notes.txt trace.$x" "$(ls o | tr '\n' ' ' | sed 's/ $//')"
  expect "$x: --force --tables cswitch: the user's file kept" [ "$(cat o/notes.txt)" = mine ]
  expect "$x: --force --tables cswitch: nothing left ($(left . | tr '\n' ' '))" [ -z "$(left .)" ]
  [ $x = parquet ] || expect "csv: --force --tables cswitch: the trace table is other.etl's" grep -q '^other\.etl,' o/trace.csv
  # A directory where a table goes: refused (1) before anything is written, every old file as it was.
  rm -rf o; "$etlkit" export "$small" --to $x -o o --quiet; rm o/slice.$x; mkdir o/slice.$x; echo theirs > o/slice.$x/keep
  before=$(sums o)
  "$etlkit" export "$other" --to $x -o o --force --quiet 2>"$tmp/err"; check "$x: a directory at OUT/slice.$x: exit" 1 $?
  expect "$x: a directory at OUT/slice.$x: names it ($(cat "$tmp/err"))" has "slice\.$x: not a regular file"
  expect "$x: a directory at OUT/slice.$x: the old tables as they were" [ "$(sums o)" = "$before" ]
  expect "$x: a directory at OUT/slice.$x: its file kept" [ "$(cat o/slice.$x/keep)" = theirs ]
  expect "$x: a directory at OUT/slice.$x: nothing left" [ -z "$(left .)" ]
  # A dataset: an input among the files a run into an existing DS removes (its staging folder, a partition): 64.
  rm -rf ds; "$etlkit" export "$small" "$other" --to $x -o ds --quiet
  mkdir -p ds/_tmp; cp "$small" ds/_tmp/keep.etl
  "$etlkit" export ds/_tmp/keep.etl --dataset --to $x -o ds --force --quiet 2>/dev/null; check "$x: a dataset's input in DS/_tmp" 64 $?
  expect "$x: a dataset's input in DS/_tmp: untouched" cmp -s ds/_tmp/keep.etl "$small"
  rm -rf ds/_tmp; mkdir -p "ds/cswitch/trace_id=p.$x"; cp "$small" "ds/cswitch/trace_id=p.$x/part-0.$x"
  ln "ds/cswitch/trace_id=p.$x/part-0.$x" p.$x.etl
  "$etlkit" export p.$x.etl --dataset --to $x -o ds --force --quiet 2>/dev/null; check "$x: a dataset's input as its partition" 64 $?
  expect "$x: a dataset's input as its partition: untouched" cmp -s "ds/cswitch/trace_id=p.$x/part-0.$x" "$small"
done
cd / || exit 1

# --- round 2: F6 synth --truth - is standard output; F8 a failed write says why; F11 --help to a full stdout fails ---
d=$tmp/r2; mkdir "$d"
(cd "$d" && exec "$etlkit" synth --quiet --duration 0.1 -o s.etl --truth -) >"$tmp/truth" 2>"$tmp/err"
check "synth --truth -: exit" 0 $?
expect "synth --truth -: no file named - ($(ls -A "$d" | tr '\n' ' '))" [ "$(ls -A "$d")" = s.etl ]
"$etlkit" synth --quiet --duration 0.1 -o "$tmp/s2.etl" --truth "$tmp/s2.jsonl"
expect "synth --truth -: the lines of --truth FILE on standard output" cmp -s "$tmp/truth" "$tmp/s2.jsonl"
expect "synth --truth -: the same trace" cmp -s "$d/s.etl" "$tmp/s2.etl"
rm -f "$d/s.etl"
(cd "$d" && exec "$etlkit" synth --quiet --duration 0.1 -o s.etl --truth -) >/dev/full 2>"$tmp/err"
check "synth --truth - on /dev/full: exit" 1 $?
expect "synth --truth - on /dev/full: says why ($(cat "$tmp/err"))" has "^etlkit synth: standard output: No space left on device$"
expect "synth --truth - on /dev/full: nothing left ($(ls -A "$d" | tr '\n' ' '))" [ -z "$(ls -A "$d")" ]
# The reader gone (SIGPIPE, or EPIPE where it is ignored): the run ends, its trace not left half written.
{ (cd "$d" && exec "$etlkit" synth --quiet --duration 0.5 -o s.etl --truth -) 2>/dev/null; echo $? >"$tmp/rc"; } |
  head -c 100 >/dev/null
expect "synth --truth - | head: ended by the pipe ($(cat "$tmp/rc"))" grep -qx -e 141 -e 1 "$tmp/rc"
expect "synth --truth - | head: nothing left ($(ls -A "$d" | tr '\n' ' '))" [ -z "$(ls -A "$d")" ]
if ! windows "F8: writes failing under a file size limit (ulimit -f)"; then
  # 400 blocks (of 512 bytes in dash, 1024 in bash): past the header buffer, before the end of $small.
  limited 400 "$etlkit" convert "$small" -o c.etl -q; check "limit: convert exit" 1 $?
  expect "limit: convert names c.etl and why ($(cat "$tmp/err"))" has "^etlkit convert: c\.etl: File too large$"
  limited 400 "$etlkit" synth --quiet -o s.etl; check "limit: synth exit" 1 $?
  expect "limit: synth names s.etl and why ($(cat "$tmp/err"))" has "^etlkit synth: s\.etl: File too large$"
  limited 1 "$etlkit" synth --quiet -o s.etl; check "limit 1: synth exit" 1 $?
  expect "limit 1: synth's header and why ($(cat "$tmp/err"))" has "^etlkit synth: s\.etl: .*File too large$"
  expect "limit: nothing left ($(ls -A "$d" | tr '\n' ' '))" [ -z "$(ls -A "$d")" ]
fi
for c in "--help" "cpu --help" "synth --help" "export --help" "help cpu" "--version"; do
  "$etlkit" $c >/dev/full 2>"$tmp/err"; check "etlkit $c >/dev/full: exit" 1 $?
  expect "etlkit $c >/dev/full: says why ($(cat "$tmp/err"))" has "standard output: No space left on device$"
done

# --- round 4 (etlkit.exe under wine): the platform layer -------------------------------------------------------------
# W2 report's page data (and its anomalies list) are made in memory: on Windows through a temporary file in TMPDIR.
# One that cannot be made fails the page (1, naming the folder and why), never a page without its data block and
# script. Under wine TMPDIR must be a folder wine itself can use (its server's): one whose name ends with a dot,
# which Windows drops (so it names a folder that is not there). Linux needs no temporary file: a missing TMPDIR works.
d=$tmp/r4; mkdir "$d" "$d/tmpdot."; cd "$d" || exit 1
if [ "${ETLKIT_TARGET:-}" = windows ]; then
  TMPDIR=$d/tmpdot. "$etlkit" report -q "$small" -o r.html 2>"$tmp/err"; check "W2: report, TMPDIR not there: exit" 1 $?
  expect "W2: report, TMPDIR not there: names it and why ($(cat "$tmp/err"))" \
    has "^etlkit report: .*small\.etl: cannot use a temporary file in $d/tmpdot\. (set TMPDIR to choose another directory): No such file or directory$"
else
  TMPDIR=$d/nosuch "$etlkit" report -q "$small" -o r.html 2>"$tmp/err"; check "W2: report, TMPDIR not there: exit" 0 $?
  expect "W2: report, TMPDIR not there: the page has its data" grep -q 'id="etlkit-data"' r.html
  rm -f r.html
fi
expect "W2: report, TMPDIR not there: nothing else ($(ls -A | tr '\n' ' '))" [ "$(ls -A)" = tmpdot. ]
# W3 a TMPDIR outside the ANSI code page: the folder it names (read in UTF-16 on Windows), the page whole.
mkdir "$d/tmpé"
TMPDIR=$d/tmpé "$etlkit" report -q "$small" -o r.html 2>"$tmp/err"; check "W3: report, TMPDIR tmpé: exit ($(cat "$tmp/err"))" 0 $?
expect "W3: report, TMPDIR tmpé: the page has its data" grep -q 'id="etlkit-data"' r.html
rm -rf r.html "$d/tmpé" "$d/tmpdot."
# ... and ETLKIT_SYMBOL_PATH: the folder, not "sym\xe9: No such file or directory (passed over)".
mkdir "$d/symé"
ETLKIT_SYMBOL_PATH=$d/symé "$etlkit" profile -q "$small" >/dev/null 2>"$tmp/err"; check "W3: ETLKIT_SYMBOL_PATH symé" 0 $?
expect "W3: ETLKIT_SYMBOL_PATH symé: the folder is there ($(cat "$tmp/err"))" [ ! -s "$tmp/err" ]
rmdir "$d/symé"
# W4 synth -o and --truth naming one file by two spellings: refused (64) before anything is written (the truth was
# lost, exit 0); on Windows, names that differ in case or by a trailing dot are one too.
mkdir sub
for t in ./same.etl sub/../same.etl "$d/same.etl"; do
  "$etlkit" synth -q --duration 0.1 -o same.etl --truth "$t" 2>"$tmp/err"; check "W4: synth -o same.etl --truth $t" 64 $?
  expect "W4: synth -o same.etl --truth $t: says so" has "truth and -o name the same file"
done
if [ "${ETLKIT_TARGET:-}" = windows ]; then
  for t in SAME.ETL 'Same.etl.' '.\same.etl'; do
    "$etlkit" synth -q --duration 0.1 -o same.etl --truth "$t" 2>/dev/null; check "W4: synth -o same.etl --truth $t" 64 $?
  done
fi
expect "W4: nothing written ($(ls -A | tr '\n' ' '))" [ "$(ls -A)" = sub ]
"$etlkit" synth -q --duration 0.1 -o sub/same.etl --truth same.etl; check "W4: two files of one name in two folders" 0 $?
expect "W4: two folders: the trace and the truth" sh -c '[ -s sub/same.etl ] && head -c 1 same.etl | grep -q "{"'
rm -rf sub same.etl
# W5 a pipe its reader closed (`etlkit ... | head`): POSIX ends the process by SIGPIPE, silently (141); Windows' C
# runtime calls it EINVAL: the line must give the system's reason, "Broken pipe", not "Invalid argument".
if [ "${ETLKIT_TARGET:-}" = windows ]; then
  { "$etlkit" switches "$small" 2>"$tmp/err"; echo $? >"$tmp/rc"; } | head -c 1 >/dev/null
  check "W5: switches | head -c 1: exit" 1 "$(cat "$tmp/rc")"
  expect "W5: switches | head -c 1: says why ($(cat "$tmp/err"))" has "^etlkit switches: standard output: Broken pipe$"
  { "$etlkit" export "$small" --to ftrace -o - 2>"$tmp/err"; echo $? >"$tmp/rc"; } | head -c 1 >/dev/null
  check "W5: export --to ftrace -o - | head -c 1: exit" 1 "$(cat "$tmp/rc")"
  expect "W5: export --to ftrace -o - | head -c 1: says why ($(cat "$tmp/err"))" has "standard output: Broken pipe$"
  # W7 a device the C runtime takes no descriptor for: not "Too many open files" (h-explore20 F7)
  "$etlkit" info '\\.\PhysicalDrive0' 2>"$tmp/err"; check "W7: info \\.\PhysicalDrive0: exit" 1 $?
  expect "W7: info \\.\PhysicalDrive0: a reason that is not a descriptor leak ($(cat "$tmp/err"))" sh -c "! grep -q 'Too many open files' '$tmp/err'"
fi
# W12 a new output directory named with a trailing separator (OUT/; OUT\ on Windows): made, nothing left beside it.
seps=/; [ "${ETLKIT_TARGET:-}" = windows ] && seps='/ \'
for sep in $seps; do
  for x in csv parquet; do
    "$etlkit" export -q "$small" --to $x -o "T$x$sep" 2>"$tmp/err"; check "W12: export --to $x -o T$x$sep ($(cat "$tmp/err"))" 0 $?
    expect "W12: export --to $x -o T$x$sep: its tables" [ -s T$x/slice.$x ]
    "$etlkit" export -q "$small" --to $x -o "T$x$sep" --force 2>"$tmp/err"; check "W12: again, --force ($(cat "$tmp/err"))" 0 $?
  done
  "$etlkit" export -q "$small" --dataset --to csv -o "DS$sep" 2>"$tmp/err"; check "W12: a dataset -o DS$sep ($(cat "$tmp/err"))" 0 $?
  expect "W12: a dataset -o DS$sep: its manifest" [ -s DS/_manifest.json ]
  expect "W12: -o OUT$sep: nothing left ($(ls -A | tr '\n' ' '))" [ "$(ls -A | tr '\n' ' ')" = "DS Tcsv Tparquet " ]
  rm -rf DS Tcsv Tparquet
done
# W6 --force over a directory whose table file is read-only: replaced as on Linux (unlink asks the directory), exit 0,
# nothing left (Windows refused to delete the old copy: exit 1, and it stayed in a hidden temporary directory).
"$etlkit" export -q "$small" --to csv -o RO; chmod 444 RO/slice.csv
"$etlkit" export -q "$other" --to csv -o RO --force 2>"$tmp/err"; check "W6: a read-only table, --force ($(cat "$tmp/err"))" 0 $?
expect "W6: a read-only table: the new tables" grep -q '^other\.etl,' RO/trace.csv
expect "W6: a read-only table: nothing left ($(ls -A | tr '\n' ' '))" [ "$(ls -A)" = RO ]
rm -rf RO
# W10 an input that is a directory: "is a directory" on both (Windows said "Permission denied").
mkdir adir
"$etlkit" info -q adir 2>"$tmp/err"; check "W10: info DIR" 1 $?
expect "W10: info DIR: says so ($(cat "$tmp/err"))" has "^etlkit: adir: is a directory$"
rmdir adir
if [ "${ETLKIT_TARGET:-}" = windows ]; then
  # W7 a \\?\ output directory (Windows' way past 260 characters): its tables joined with '\', which \\?\ needs.
  w='\\?\Z:'$(printf '%s' "$d" | tr '/' '\\')
  for x in csv parquet; do
    "$etlkit" export -q "$small" --to $x -o "$w\\Q$x" 2>"$tmp/err"; check "W7: export --to $x -o \\\\?\\...\\Q$x ($(cat "$tmp/err"))" 0 $?
    expect "W7: --to $x: its tables" [ -s Q$x/slice.$x ]
    "$etlkit" export -q "$other" --to $x -o "$w\\Q$x" --force 2>"$tmp/err"; check "W7: again, --force ($(cat "$tmp/err"))" 0 $?
  done
  "$etlkit" export -q "$small" --dataset --to parquet -o "$w\\QDS" 2>"$tmp/err"; check "W7: a dataset in \\\\?\\ ($(cat "$tmp/err"))" 0 $?
  expect "W7: a dataset: its partition" [ -s QDS/slice/trace_id=small/part-0.parquet ]
  expect "W7: nothing left ($(ls -A | tr '\n' ' '))" [ "$(ls -A | tr '\n' ' ')" = "QDS Qcsv Qparquet " ]
  rm -rf QDS Qcsv Qparquet
  # W11 a table's path in a message: the folder as typed, then the separator it uses ('\' when it has none).
  mkdir o; cp "$small" o/slice.csv
  "$etlkit" export 'o\slice.csv' --to csv -o o --force -q 2>"$tmp/err"; check "W11: the input is o\\slice.csv" 64 $?
  expect "W11: the table's path as Windows writes it ($(cat "$tmp/err"))" has '^etlkit export: o\\slice\.csv: the output is the input'
  rm -rf o
  # W5 wildcards: cmd.exe and PowerShell pass them as typed; etlkit expands them as a shell would, in name order (a
  # quoted one stays as it is: wine quotes an argument with a space).
  mkdir -p 'w/x y'; cp "$small" w/b.etl; cp "$other" w/A.etl; cp "$small" 'w/x y/c.etl'
  "$etlkit" info -q 'w/?.etl' >/dev/null 2>"$tmp/err"; check "W5: info w/?.etl (two files)" 64 $?
  expect "W5: info w/?.etl: expanded ($(cat "$tmp/err"))" has "unexpected argument 'w/b.etl'"
  "$etlkit" export -q 'w\*.etl' 'w/x*/*.etl' --to csv -o WDS 2>"$tmp/err"; check "W5: export 'w\\*.etl' 'w/x*/*.etl' ($(cat "$tmp/err"))" 0 $?
  check "W5: export: every trace, in name order" "A.json b.json c.json" "$(ls WDS/_traces | tr '\n' ' ' | sed 's/ $//')"
  expect "W5: export: the paths as typed" grep -q '"w\\\\A\.etl"' WDS/_manifest.json
  "$etlkit" info -q 'w/x y/*.etl' 2>"$tmp/err"; check "W5: a quoted wildcard" 1 $?
  expect "W5: a quoted wildcard: no such file ($(cat "$tmp/err"))" has "^etlkit: w/x y/\*\.etl: No such file or directory$"
  "$etlkit" info -q 'w/*.nope' 2>"$tmp/err"; check "W5: a wildcard matching nothing" 1 $?
  expect "W5: a wildcard matching nothing: no such file ($(cat "$tmp/err"))" has "^etlkit: w/\*\.nope: No such file or directory$"
  rm -rf w WDS
  # W8 a name Windows cannot have: why ("File name too long" was the message); CON without a console: a device.
  for n in 'a*b.html' 'a<b.html' 'a|b.html' 'a"b.html'; do
    "$etlkit" report -q "$small" -o "$n" 2>"$tmp/err"; check "W8: report -o $n" 1 $?
    expect "W8: report -o $n: Invalid argument ($(cat "$tmp/err"))" has ": Invalid argument$"
  done
  "$etlkit" convert -q "$small" -o CON 2>"$tmp/err"; check "CON: convert -o CON" 1 $?
  expect "CON: convert -o CON: not a regular file ($(cat "$tmp/err"))" has "CON: not a regular file"
  expect "W8, CON: nothing left ($(ls -A | tr '\n' ' '))" [ -z "$(ls -A)" ]
else
  echo 'skipped on Linux: W5 (wildcards), W7 (\\?\ paths), W8 and CON (Windows names), W11 (backslashes in messages)'
fi
# W1 a console shows UTF-8 (Windows wrote UTF-8 bytes its OEM code page showed as ├⌐): a pty, which wine makes a
# console; redirected, the same bytes as on Linux.
cp "$small" "$d/é日本.etl"
if command -v python3 >/dev/null 2>&1; then
  python3 - "$etlkit" "$d/é日本.etl" >"$tmp/pty" 2>&1 <<'PY'
import os, pty, subprocess, sys
m, s = pty.openpty()
p = subprocess.Popen([sys.argv[1], "info", "-q", sys.argv[2]], stdout=s, stderr=s, stdin=subprocess.DEVNULL)
os.close(s)
out = b""
while True:
    try:
        b = os.read(m, 65536)
    except OSError:
        break
    if not b:
        break
    out += b
p.wait()
sys.stdout.buffer.write(out)
PY
  expect "W1: info on a console: the name as text ($(grep -a File "$tmp/pty"))" grep -aq 'é日本\.etl' "$tmp/pty"
else
  echo "skipped: W1 (no python3 for a pty)"
fi
"$etlkit" info -q "$d/é日本.etl" >"$tmp/out"; check "W1: info, redirected" 0 $?
expect "W1: info, redirected: UTF-8" grep -q "File: *$d/é日本\.etl (" "$tmp/out"
cd / || exit 1

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
