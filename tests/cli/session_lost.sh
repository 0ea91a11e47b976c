#!/bin/sh
# session_lost.sh ETLKIT SAMPLES - a trace whose logfile header says the session lost events or buffers while
# tracing (EventsLost, BuffersLost) gets one note on stderr from every command that analyses it, in every output
# form, and the counts under "anomalies" in every report's JSON; exit 0 (the file is not damaged), nothing with -q,
# no note from info and dump (the header is their output), none for a trace that lost nothing. On the real
# amsi-user-x64.etl (EventsLost 3) and on a synthesized trace whose header is patched (EventsLost 1, BuffersLost 2).
set -u
etlkit=$1; samples=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
bad() { echo "FAIL: $*" >&2; fails=$((fails+1)); }
ok() { passes=$((passes+1)); }
command -v python3 >/dev/null 2>&1 || { echo "session_lost.sh: skipped: no python3"; exit 77; }

# run EXIT FILE NOTE ARGS...: etlkit ARGS exits EXIT; its stderr holds NOTE (the note's start, "" none) on
# exactly one line and nothing else of the loss; its stdout says nothing of it (the note is said once).
run() {
  want=$1; file=$2; said=$3; shift 3 # not note: the callers' variable
  "$etlkit" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ "$rc" = "$want" ] || { bad "$*: exit $rc, expected $want: $(head -c 300 "$tmp/err")"; return; }
  n=$(grep -c "session lost" "$tmp/err")
  if [ -n "$said" ]; then
    [ "$n" = 1 ] && grep -qF "etlkit: $file: note: $said" "$tmp/err" ||
      { bad "$*: stderr has $n lines of the loss, expected one: $(grep -i lost "$tmp/err" | head -3)"; return; }
  else
    [ "$n" = 0 ] || { bad "$*: a note where none is due: $(grep "session lost" "$tmp/err")"; return; }
  fi
  ! grep -q "session lost" "$tmp/out" || { bad "$*: stdout tells the loss too: $(grep "session lost" "$tmp/out")"; return; }
  ok
}

# json EXPR...: each Python expression true of the JSON d on the last run's stdout.
json() {
  python3 - "$tmp/out" "$@" <<'PY' && ok || bad "JSON: $(tail -c 200 "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
for e in sys.argv[2:]:
    if not eval(e):
        sys.stderr.write("not true: %s\n" % e)
        sys.exit(1)
PY
}

# 1. The real sample: EventsLost 3, BuffersLost 0 in its header; no switch nor sample (the reports say so).
amsi=$tmp/amsi.etl
cp "$samples/amsi-user-x64.etl" "$amsi"
note="the session lost 3 events and 0 buffers while tracing (logfile header EventsLost, BuffersLost): the numbers may miss them"
for c in cpu waits wakeups switches pmc spinlocks profile; do
  run 0 "$amsi" "$note" $c "$amsi"
  run 0 "$amsi" "$note" $c "$amsi" --csv
  run 0 "$amsi" "" $c "$amsi" -q
done
for c in cpu waits wakeups pmc spinlocks profile; do
  run 0 "$amsi" "$note" $c "$amsi" --json
  json 'd["anomalies"]["events_lost"] == 3' 'd["anomalies"]["buffers_lost"] == 0'
done
run 0 "$amsi" "$note" switches "$amsi" --json
run 0 "$amsi" "$note" export "$amsi" --to csv -o "$tmp/amsi.csv"
run 0 "$amsi" "$note" report "$amsi" -o "$tmp/amsi.html"
run 0 "$amsi" "" info "$amsi"
run 0 "$amsi" "" dump "$amsi" --limit 5

# 2. A synthesized trace with switches, samples and spin locks, its header patched: EventsLost 1, BuffersLost 2
# (at 0x30 and 0x114 of the 64-bit logfile header, after the first buffer's and the record's headers).
"$etlkit" synth -q --stacks --pmc 4 --seed 3 --duration 0.5 -o "$tmp/s.etl" || { echo "FAIL: synth" >&2; exit 1; }
python3 - "$tmp/s.etl" "$tmp/lost.etl" <<'PY' || { echo "FAIL: patch" >&2; exit 1; }
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
h = 0x48 + 0x20
assert struct.unpack_from('<I', d, h + 0x30)[0] == 0 and struct.unpack_from('<I', d, h + 0x114)[0] == 0
struct.pack_into('<I', d, h + 0x30, 1)
struct.pack_into('<I', d, h + 0x114, 2)
open(sys.argv[2], 'wb').write(d)
PY
lost=$tmp/lost.etl
"$etlkit" info --json "$lost" >"$tmp/out" 2>/dev/null || bad "info on the patched trace"
json 'd["events_lost"] == 1 and d["buffers_lost"] == 2'
tid=$("$etlkit" cpu "$lost" --json -q | python3 -c 'import json,sys; print(json.load(sys.stdin)["threads"][0]["tid"])')
note="the session lost 1 event and 2 buffers while tracing (logfile header EventsLost, BuffersLost)"
for c in cpu waits wakeups switches pmc spinlocks profile; do
  run 0 "$lost" "$note" $c "$lost"
  run 0 "$lost" "$note" $c "$lost" --csv
done
for c in cpu waits wakeups pmc spinlocks profile "profile --by process,module" "waitchain --thread $tid"; do
  run 0 "$lost" "$note" $c "$lost" --json
  json 'd["anomalies"]["events_lost"] == 1' 'd["anomalies"]["buffers_lost"] == 2'
done
fn=$("$etlkit" profile "$lost" --json -q | python3 -c 'import json,sys; print(json.load(sys.stdin)["functions"][0]["function"])')
run 0 "$lost" "$note" profile "$lost" --butterfly "$fn" --json
json 'd["anomalies"]["events_lost"] == 1' 'd["anomalies"]["buffers_lost"] == 2'
run 0 "$lost" "$note" profile "$lost" --folded
run 0 "$lost" "$note" waitchain "$lost" --thread "$tid"
run 0 "$lost" "$note" waitchain "$lost" --thread "$tid" --depth 3
# compare: one note per side that lost, each naming its file; the JSON has each side's anomalies.
run 0 "$lost" "$note" compare "$tmp/s.etl" "$lost"
run 0 "$lost" "$note" compare "$tmp/s.etl" "$lost" --json
json 'd["before"]["anomalies"]["events_lost"] == 0 and d["after"]["anomalies"]["events_lost"] == 1' \
     'd["after"]["anomalies"]["buffers_lost"] == 2 and d["before"]["file"].endswith("s.etl")'
run 0 "$lost" "$note" export "$lost" --to sqlite -o "$tmp/lost.db"
run 0 "$lost" "$note" report "$lost" -o "$tmp/lost.html"
python3 - "$tmp/lost.html" <<'PY' && ok || bad "report: the page's data lack the loss"
import sys
p = open(sys.argv[1]).read()
sys.exit(not ('"anomalies":{"events_lost":1,"buffers_lost":2,' in p and 'The session lost events.' in p))
PY
run 0 "$lost" "" cpu "$lost" -q
run 0 "$lost" "" info "$lost"
# A dataset (several traces, a library's run): the note for the trace that lost, none for the other; none with -q.
run 0 "$lost" "$note" export "$tmp/s.etl" "$lost" --to csv -o "$tmp/ds"
run 0 "$lost" "" export "$tmp/s.etl" "$lost" --to csv -o "$tmp/ds2" -q

# 3. The trace that lost nothing: no note.
for c in cpu switches profile; do run 0 "$tmp/s.etl" "" $c "$tmp/s.etl"; done

echo "session_lost: $passes passed, $fails failed"
[ "$fails" = 0 ]
