#!/bin/sh
# unchanged.sh OLD NEW [SAMPLES_DIR] - every answer NEW gives is OLD's, byte for byte: a refactoring's
# proof. Both binaries run every command in every output form (text, --json, --csv, the exports, the
# files convert, synth and report write) on the bundled traces, the test fixtures, the real samples
# (when SAMPLES_DIR is given) and synthesized traces made here (full, compact, both with PMC counters
# and spin locks, 32-bit cycle clock, and damaged copies), and standard output, standard error, the exit
# status and every file written must be equal. What may differ, and is skipped: --help texts, and
# the report page's embedded JSON data block (its keys are the commands' own since 0.2; the page
# around it is compared). Prints one line per difference and a count; exits 1 if there is any.
#   sh tests/cli/unchanged.sh /path/to/old/etlkit build/etlkit ../shared/samples
set -u
old=$(readlink -f "$1"); new=$(readlink -f "$2"); samples=${3:-}
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# The same program name in both (the messages start with it), each run in its own folder with
# the same relative output names, so the file names the output echoes are the same too.
mkdir -p "$tmp/old/bin" "$tmp/new/bin" "$tmp/in"
ln -s "$old" "$tmp/old/bin/etlkit"; ln -s "$new" "$tmp/new/bin/etlkit"
runs=0; diffs=0

# run NAME ARGS...: both binaries, in $tmp/old/w and $tmp/new/w (emptied first); compares stdout,
# stderr, the status and the files left in w.
run() {
  name=$1; shift
  for side in old new; do
    rm -rf "$tmp/$side/w"; mkdir "$tmp/$side/w"
    (cd "$tmp/$side/w" && exec "$tmp/$side/bin/etlkit" "$@" >../out 2>../err); echo $? > "$tmp/$side/rc"
    normalize "$tmp/$side"
  done
  runs=$((runs + 1))
  for part in rc out err; do
    if ! cmp -s "$tmp/old/$part" "$tmp/new/$part"; then
      diffs=$((diffs + 1)); echo "DIFF $name: $part"
      diff "$tmp/old/$part" "$tmp/new/$part" 2>/dev/null | head -${DIFF_LINES:-6} | cut -c1-200
    fi
  done
  if ! diff -r "$tmp/old/w" "$tmp/new/w" >/dev/null 2>&1; then
    diffs=$((diffs + 1)); echo "DIFF $name: files"
    diff -r "$tmp/old/w" "$tmp/new/w" 2>/dev/null | head -${DIFF_LINES:-6} | cut -c1-200
  fi
}

# What a run left that is compared in another form: a SQLite database as its SQL text (the file's
# pages may differ for the same content), a report page without its JSON data block, and synth's
# summary without the seconds it took.
normalize() {
  sed -i 's/, in [0-9.]* s\.$/, in S s./' "$1/err"
  for f in "$1"/w/*.sqlite; do
    [ -f "$f" ] || continue
    sqlite3 "$f" .dump > "$f.sql" 2>&1; rm -f "$f"
  done
  for f in "$1"/w/*.html "$1"/out; do
    [ -f "$f" ] && grep -q 'id="etlkit-data"' "$f" || continue
    awk '/<script type="application\/json" id="etlkit-data">/ { skip = 1 } !skip { print } /<\/script>/ { skip = 0 }' \
      "$f" > "$f.page" && mv "$f.page" "$f"
  done
}

# --- the inputs -------------------------------------------------------------------------------
synth() { n=$1; shift; "$old" synth --quiet "$@" -o "$tmp/in/$n.etl" || { echo "FAIL: synth $n"; exit 1; }; }
synth full --seed 1 --cpus 4 --duration 0.4
synth compact --seed 2 --cpus 4 --duration 0.4 --cswitch compact
synth pmc --seed 3 --cpus 3 --duration 0.4 --cswitch both --pmc 4 --spinlocks --compress
synth cyc32 --seed 4 --cpus 2 --duration 0.3 --clock cycles --pointer-size 32 --pmc 2 --spinlocks
# Damage: one buffer's bytes overwritten in the middle of the file, and a file cut short.
cp "$tmp/in/full.etl" "$tmp/in/damaged.etl"
size=$(stat -c %s "$tmp/in/full.etl")
dd if=/dev/urandom of="$tmp/in/damaged.etl" bs=1 seek=$((size / 2)) count=300 conv=notrunc 2>/dev/null
head -c $((size * 2 / 3 + 77)) "$tmp/in/compact.etl" > "$tmp/in/cut.etl"
printf 'not a trace\n' > "$tmp/in/notetl.etl"
traces="$tmp/in/*.etl $here/samples/*.etl $here/tests/data/*.etl"
[ -n "$samples" ] && traces="$traces $samples/*.etl"

# --- every command on every trace --------------------------------------------------------------
for t in $traces; do
  b=$(basename "$t" .etl)
  run "$b info" info "$t"
  run "$b info --json" info --json "$t"
  run "$b dump" dump --limit 20000 "$t"
  run "$b dump jsonl" dump --format jsonl --limit 20000 "$t"
  run "$b dump csv file" dump --format csv --order file --limit 20000 "$t"
  run "$b dump expand" dump --expand --format jsonl --limit 20000 "$t"
  for c in cpu waits switches wakeups spinlocks pmc; do
    run "$b $c" $c "$t"
    run "$b $c --json" $c --json "$t"
    run "$b $c --csv" $c --csv $([ $c = switches ] || echo --top 0) "$t" # switches has no --top: every row
  done
  run "$b cpu interval" cpu --interval 50ms "$t"
  run "$b cpu interval json" cpu --interval 50ms --json --complete-only "$t"
  run "$b cpu range" cpu --range 0.1 0.3 --top 3 "$t"
  run "$b waits longest" waits --json --top 0 --longest 25 "$t"
  run "$b waits process" waits --process System --csv "$t"
  run "$b switches thread" switches --thread 4 --json "$t"
  run "$b spinlocks params" spinlocks --spin-threshold 2 --acquire-rate 10 --json "$t"
  run "$b pmc counters" pmc --counters cycles,instructions,llc-misses,branch-misses --csv "$t"
  run "$b waitchain" waitchain "$t"
  run "$b waitchain json" waitchain --json --depth 3 --min 100us "$t"
  run "$b export csv" export "$t" --to csv -o csv --quiet
  run "$b export sqlite" export "$t" --to sqlite -o db.sqlite
  run "$b export perfetto" export "$t" --to perfetto -o trace.pb
  run "$b export ftrace" export "$t" --to ftrace -o -
  run "$b report" report "$t" -o page.html --top 10
  run "$b convert" convert "$t" -o conv.etl --json
  run "$b convert compact" convert "$t" -o conv.etl --cswitch compact --no-compress
  run "$b convert full" convert "$t" -o conv.etl --cswitch full --compress --buffer-size 16384
done
run "compare" compare "$tmp/in/full.etl" "$tmp/in/compact.etl"
run "compare json" compare --json --top 0 "$tmp/in/full.etl" "$tmp/in/pmc.etl"
run "compare fail-if" compare --fail-if 'cpu.total > 1%' "$tmp/in/full.etl" "$tmp/in/pmc.etl"
run "compare empty" compare "$tmp/in/full.etl" "$here/samples/kernel-shutdown-x64.etl"
run "synth" synth --seed 9 --cpus 3 --duration 0.2 --pmc 2 --spinlocks -o s.etl --truth s.jsonl
run "synth compact" synth --seed 10 --duration 0.2 --cswitch compact --clock system -o s.etl --truth s.jsonl
# Bad command lines: the same message and status.
run "usage no file" cpu
run "usage bad top" cpu --top x "$tmp/in/full.etl"
run "usage unknown" waits --nope "$tmp/in/full.etl"
run "usage range" cpu --range 2 1 "$tmp/in/full.etl"
run "usage command" frobnicate

echo "unchanged: $runs runs, $diffs differences"
[ "$diffs" -eq 0 ]
