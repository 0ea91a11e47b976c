#!/bin/sh
# waitchain_adopt.sh ETLKIT - waitchain attributes threads to processes as cpu and waits do when the buffer holding
# the start rundown (Thread DCStart) is lost: a TID first seen in a switch is adopted by the DCEnd at the trace end.
# waitchain chose the process's threads by their process at each switch, before the adoption: --thread svchost said
# "no thread of process svchost ever switched in" (exit 4), --process PID took a short gap of the one thread the
# remaining rundown named; and a pass stopped early, before the DCEnd, labelled the chain's threads "Unknown".
set -u
etlkit=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
check() { # check NAME EXPECTED_STATUS ACTUAL_STATUS
  if [ "$2" = "$3" ]; then passes=$((passes+1)); else echo "FAIL: $1: exit $3, expected $2" >&2; fails=$((fails+1)); fi
}
expect() { # expect NAME CONDITION...
  name=$1; shift
  if "$@"; then passes=$((passes+1)); else echo "FAIL: $name" >&2; fails=$((fails+1)); fi
}
# cut IN OUT: IN without the buffers that hold a Thread DCStart (SYSTEM header, hook 0x0503); prints how many.
cut() {
  python3 - "$1" "$2" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read(); out = bytearray(); o = 0; n = 0
while o + 0x48 <= len(d):
    size, fill = struct.unpack_from('<I', d, o)[0], struct.unpack_from('<I', d, o + 0x30)[0]
    if size < 0x48: break
    r, end, rundown = o + 0x48, o + min(fill, size), False
    while r + 8 <= end:
        m = struct.unpack_from('<I', d, r)[0]
        if m == 0xffffffff: break
        ht = (m >> 16) & 0xff
        if ht in (1, 2, 3, 4, 0x10, 0x11): size_r, hook = struct.unpack_from('<HH', d, r + 4)
        else: size_r, hook = m & 0xffff, None
        rundown |= ht in (1, 2) and hook == 0x0503
        if size_r == 0: break
        r += (size_r + 7) & ~7
    if rundown: n += 1
    else: out += d[o:o + size]
    o += size
open(sys.argv[2], 'wb').write(out)
print(n)
PY
}

"$etlkit" synth --quiet --seed 3 --duration 1 -o "$tmp/s.etl"; check "synth" 0 $?
n=$(cut "$tmp/s.etl" "$tmp/cut.etl"); expect "the start rundown is in 1 buffer ($n)" test "$n" = 1
"$etlkit" cpu "$tmp/cut.etl" --json >"$tmp/cpu.json" 2>/dev/null; check "cpu, rundown lost" 3 $?
pids=$(python3 -c 'import json,sys; print(" ".join(str(p["pid"]) for p in json.load(open(sys.argv[1]))["processes"] if p.get("pid") and p["switches"]))' "$tmp/cpu.json")
expect "processes that switched ($pids)" test -n "$pids"

# For every process: waitchain --process PID takes the thread of the longest wait that waits --process PID shows (of
# that process, as cpu and waits count it), its gap starting with that wait.
for p in $pids; do
  "$etlkit" waits "$tmp/cut.etl" --process "$p" --json >"$tmp/w.json" 2>/dev/null; check "waits --process $p" 3 $?
  "$etlkit" waitchain "$tmp/cut.etl" --process "$p" --depth 0 --json >"$tmp/c.json" 2>/dev/null
  check "waitchain --process $p" 3 $?
  got=$(python3 - "$tmp/w.json" "$tmp/c.json" "$p" <<'PY'
import json, sys
w, c, pid = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
t = max(w["threads"], key=lambda t: t["wait_max_ns"])
want = (t["tid"], pid, "waiting", t["wait_max_ns"])
ch = c.get("chain")
got = (ch["tid"], ch["pid"], ch["segments"][0]["state"], ch["segments"][0]["duration_ns"]) if ch else c.get("error")
print("ok" if got == want else "waitchain %s, waits' longest wait %s" % (got, want))
PY
)
  expect "waitchain --process $p: the longest wait of waits --process $p ($got)" test "$got" = ok
done

# lost_until FILE: where the lost buffer's records may end (its flush, from the warning), in ns
lost_until() {
  "$etlkit" info "$1" 2>&1 >/dev/null | sed -n 's/.*flushed between [0-9.]* s and \([0-9.]*\) s.*/\1/p' | head -1 |
    python3 -c 'import sys; print(int(round(float(sys.stdin.read()) * 1e9)))'
}
# The same thread and end as the whole file gives, or, when the whole file's gap starts where the lost buffer's
# records lie (a switch-out or ReadyThread of any thread may be among them: that gap's start is unknown in the cut
# file, h4), each thread the cut file's chain names (the chain's, its readiers) is the whole file's thread of that
# TID, of its process: the adoption is what these lines check.
"$etlkit" cpu "$tmp/s.etl" --json >"$tmp/whole_cpu.json" 2>/dev/null; check "cpu, whole" 0 $?
as_whole() { # as_whole WHOLE.json CUT.json LOST_UNTIL_NS [readiers]
  python3 - "$tmp/whole_cpu.json" "$@" <<'PY'
import json, sys
cpu, a, b, until = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), json.load(open(sys.argv[3])), int(sys.argv[4])
readiers = len(sys.argv) > 5
def k(d):
    if "chain" not in d: return d.get("error")
    c = d["chain"]; who = lambda t: (t["tid"], t["pid"], t["process_label"], t["name"])
    out = [who(c), d["at_ns"]]
    if readiers: out += [who(s["readier"]) for s in c["segments"] if (s["readier"] or {}).get("kind") == "thread"]
    return out
if k(a) == k(b): print("ok"); sys.exit()
if "chain" not in a or "chain" not in b or a.get("from_ns") is None or a["from_ns"] >= until:
    print("%s vs the whole file %s" % (k(b), k(a))); sys.exit()
who = lambda t: (t["tid"], t["pid"], t["process_label"], t["name"])
threads = {t["tid"]: who(t) for t in cpu["threads"]}
c = b["chain"]
names = [c] + ([s["readier"] for s in c["segments"] if (s["readier"] or {}).get("kind") == "thread"] if readiers else [])
wrong = [who(t) for t in names if threads.get(t["tid"]) != who(t)]
print("ok" if not wrong else "%s not the whole file's %s" % (wrong, [threads.get(t[0]) for t in wrong]))
PY
}
until=$(lost_until "$tmp/cut.etl"); expect "the lost buffer's flush ($until)" test -n "$until"
"$etlkit" waitchain "$tmp/cut.etl" --thread svchost >"$tmp/out" 2>"$tmp/err"; check "waitchain --thread svchost" 3 $?
expect "waitchain --thread svchost: no 'never switched in'" sh -c "! grep -q 'ever switched in' '$tmp/err'"
for a in "--thread svchost" "--process svchost.exe" "--process 400" "--process 400 --at 0.5" \
         "--process 400 --from 0.3 --at 0.6" "--process svchost --range 0.2 0.4"; do
  "$etlkit" waitchain "$tmp/s.etl" $a --json >"$tmp/a.json" 2>/dev/null; check "waitchain whole $a" 0 $?
  "$etlkit" waitchain "$tmp/cut.etl" $a --json >"$tmp/b.json" 2>/dev/null; check "waitchain rundown lost $a" 3 $?
  same=$(as_whole "$tmp/a.json" "$tmp/b.json" "$until")
  expect "waitchain $a: as on the whole file ($same)" test "$same" = ok
done

# A collecting pass that stops early (long before the DCEnd at the end) still names the threads' processes.
"$etlkit" synth --quiet --seed 3 --duration 3 -o "$tmp/l.etl"; check "synth 3 s" 0 $?
n=$(cut "$tmp/l.etl" "$tmp/lcut.etl"); expect "3 s: the start rundown is in 1 buffer ($n)" test "$n" = 1
"$etlkit" waitchain "$tmp/l.etl" --process 400 --range 0.1 0.5 --depth 0 --json >"$tmp/a.json" 2>/dev/null
check "waitchain early, whole" 0 $?
"$etlkit" waitchain "$tmp/lcut.etl" --process 400 --range 0.1 0.5 --depth 0 --json >"$tmp/b.json" 2>/dev/null
check "waitchain early, rundown lost" 3 $?
"$etlkit" cpu "$tmp/l.etl" --json >"$tmp/whole_cpu.json" 2>/dev/null; check "cpu, whole 3 s" 0 $?
until=$(lost_until "$tmp/lcut.etl")
same=$(as_whole "$tmp/a.json" "$tmp/b.json" "$until" readiers)
expect "waitchain early: the thread, its readiers and their processes as on the whole file ($same)" test "$same" = ok
pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["chain"]["pid"])' "$tmp/b.json")
expect "waitchain early: a thread of process 400 ($pid)" test "$pid" = 400

echo "waitchain_adopt.sh: $passes passed, $fails failed" >&2
[ "$fails" -eq 0 ]
