#!/bin/sh
# sched_stacks_rows.sh ETLKIT - which row a scheduler stack goes to, on damaged and edge-case traces
# (exploratory finds on switches, waits --by stack and the export's slice stack ids):
#   - a switch whose old thread is not the one the previous switch-in planned (cswitch_chain_mismatch): the
#     row is the observed thread's, and the walk at its switch-in is the planned thread's, so it has no New
#     Thread Stack (switches --json/--csv, export's slice.new_stack_id), never the other thread's;
#   - a StackWalk of its head alone (no frame) at a CSwitch: its row has no stack (JSON null, not []), waits --by
#     stack charges its time to the no-stack line (the tree and that line add up to the total, ready time too), and
#     a note counts it (stacks_lack.walks_empty);
#   - waitchain --json with --frames N: each stack's array is cut to N, and blocking_stack_frames /
#     readier_stack_frames say how many it has (the text's "(N more)"), as --frames 0 gives them;
#   - an image name holding a newline and an escape sequence (a hostile trace): waits --by stack's text tree and
#     --flat list print it escaped, as every text output does (it printed them raw: a frame over two lines, the
#     terminal's colours changed).
set -u
etlkit=$1
tmp=${KEEP:-$(mktemp -d)}; [ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null 2>&1 || { echo "sched_stacks_rows.sh: skipped: no python3"; exit 77; }
fails=0; passes=0
expect() { # expect NAME COMMAND...
  name=$1; shift
  if "$@"; then passes=$((passes+1)); else echo "FAIL: $name" >&2; fails=$((fails+1)); fi
}

# ---- 1. A chain mismatch: the second of two CSwitches on one CPU names another old thread than the first's new.
"$etlkit" synth --quiet --stacks --seed 5 --duration 0.3 -o "$tmp/a.etl" || { echo "FAIL: synth" >&2; exit 1; }
"$etlkit" dump "$tmp/a.etl" --order file --format jsonl --filter 0x0524 > "$tmp/a.cs" || { echo "FAIL: dump" >&2; exit 1; }
"$etlkit" switches "$tmp/a.etl" --json > "$tmp/a.rows" 2>/dev/null || { echo "FAIL: switches" >&2; exit 1; }
# The first switch-in of a non-idle thread with a New Thread Stack whose next CSwitch on its CPU switches it out:
# that CSwitch's OldThreadId becomes another thread's (one of the trace's); its switch-in ns in $tmp/si.
python3 - "$tmp" <<'PY' || { echo "FAIL: damaging the copy" >&2; exit 1; }
import json, struct, sys
d = sys.argv[1]
rows = {}
for l in open(d + "/a.rows"):
    r = json.loads(l)
    if not r.get("head") and r.get("new_thread_stack"): rows[(r["cpu"], r["switch_in_ts"])] = r
cs = [json.loads(l) for l in open(d + "/a.cs")]
last = {}
b = bytearray(open(d + "/a.etl", "rb").read())
size = struct.unpack_from("<I", b, 0)[0]
tids = sorted({c["fields"]["NewThreadId"] for c in cs if c["fields"]["NewThreadId"]})
for c in cs:
    p = last.get(c["cpu"])
    last[c["cpu"]] = c
    if not p or p["fields"]["NewThreadId"] == 0 or (p["cpu"], p["ts"]) not in rows: continue
    if c["fields"]["OldThreadId"] != p["fields"]["NewThreadId"]: continue
    other = next(t for t in tids if t != p["fields"]["NewThreadId"])
    pl = size * c["buf"] + c["off"] + c["size"] - c["len"]
    assert struct.unpack_from("<I", b, pl + 4)[0] == p["fields"]["NewThreadId"]
    struct.pack_into("<I", b, pl + 4, other)
    open(d + "/m.etl", "wb").write(b)
    open(d + "/si", "w").write("%d %d %d %d\n" % (p["cpu"], p["ts"], p["fields"]["NewThreadId"], other))
    break
else:
    sys.exit("no switch to damage")
PY
set -- $(cat "$tmp/si"); cpu=$1; si=$2; planned=$3; ran=$4
"$etlkit" switches "$tmp/m.etl" --json > "$tmp/m.rows" 2> "$tmp/m.err"
expect "mismatch: switches --json exits 0" [ $? = 0 ]
expect "mismatch: the row (CPU $cpu, switch-in $si) is tid $ran's, planned $planned, with no New Thread Stack" \
  python3 - "$tmp/m.rows" "$cpu" "$si" "$planned" "$ran" <<'PY'
import json, sys
cpu, si, planned, ran = map(int, sys.argv[2:])
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["cpu"] == cpu and r["switch_in_ts"] == si and not r.get("head"):
        assert r["new_tid"] == ran and r.get("planned_new_tid") == planned, r
        assert r["new_thread_stack"] is None, r["new_thread_stack"]
        sys.exit(0)
sys.exit("row not found")
PY
"$etlkit" switches "$tmp/m.etl" --csv > "$tmp/m.csv" 2>/dev/null
expect "mismatch: switches --csv: the row's New Thread Stack cell blank" python3 - "$tmp/m.csv" "$cpu" "$planned" <<'PY'
import csv, sys
cpu, planned = sys.argv[2], sys.argv[3]
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8-sig", newline="")))
hit = [r for r in rows if r["CPU"] == cpu and r["Planned New Thread Id"] == planned]
assert len(hit) == 1, len(hit)
assert hit[0]["New Thread Stack"] == "", hit[0]["New Thread Stack"][:200]
PY
if python3 -c 'import sqlite3' 2>/dev/null; then
  "$etlkit" export "$tmp/m.etl" --to sqlite -o "$tmp/m.sqlite" --quiet 2>/dev/null
  expect "mismatch: export: the slice of tid $ran at the switch-in (mismatch 1) has no new_stack_id" \
    python3 - "$tmp/m.sqlite" "$cpu" "$ran" <<'PY'
import sqlite3, sys
d = sqlite3.connect(sys.argv[1])
r = d.execute("SELECT tid, new_stack_id FROM slice WHERE cpu = ? AND mismatch = 1", (int(sys.argv[2]),)).fetchall()
assert len(r) == 1 and r[0][0] == int(sys.argv[3]), r
assert r[0][1] is None, r
PY
fi

# ---- 2. A walk of no frame: a System thread's CSwitch walk (plain form, kernel only) cut to its 16-byte head, the
# bytes after it a record of an unknown hook.
"$etlkit" synth --quiet --stacks --stack-form plain --seed 5 --duration 0.3 -o "$tmp/p.etl" ||
  { echo "FAIL: synth plain" >&2; exit 1; }
"$etlkit" dump "$tmp/p.etl" --order file --format jsonl --filter 0x1820 > "$tmp/p.walks" &&
  "$etlkit" dump "$tmp/p.etl" --order file --format jsonl --filter 0x0524 > "$tmp/p.cs" || { echo "FAIL: dump" >&2; exit 1; }
python3 - "$tmp" <<'PY' || { echo "FAIL: cutting a walk" >&2; exit 1; }
import json, struct, sys
d = sys.argv[1]
cs = {}
for l in open(d + "/p.cs"):
    r = json.loads(l); cs[(r["cpu"], r["ts"])] = r["fields"]["NewThreadId"]
b = bytearray(open(d + "/p.etl", "rb").read())
size = struct.unpack_from("<I", b, 0)[0]
for l in open(d + "/p.walks"):
    r = json.loads(l); f = r["fields"]
    if f["StackProcess"] != 4 or f["FrameCount"] < 2 or not f["StackThread"]: continue
    if cs.get((r["cpu"], f["EventTimeStamp"])) != f["StackThread"]: continue
    o = size * r["buf"] + r["off"]
    assert struct.unpack_from("<H", b, o + 4)[0] == r["size"] == 32 + 8 * f["FrameCount"]
    struct.pack_into("<H", b, o + 4, 32)              # the record: its header and the walk's 16-byte head
    b[o + 32:o + 48] = b[o:o + 16]                    # the rest: a record of hook 0x0F7F (nobody's)
    struct.pack_into("<HH", b, o + 36, 8 * f["FrameCount"], 0x0F7F)
    open(d + "/z.etl", "wb").write(b)
    open(d + "/z.at", "w").write("%d %d\n" % (r["cpu"], f["EventTimeStamp"]))
    break
else:
    sys.exit("no walk to cut")
PY
set -- $(cat "$tmp/z.at"); cpu=$1; si=$2
"$etlkit" switches "$tmp/z.etl" --json > "$tmp/z.rows" 2> "$tmp/z.err"
expect "empty walk: switches --json exits 0" [ $? = 0 ]
expect "empty walk: the row (CPU $cpu, switch-in $si) has no New Thread Stack (null)" \
  python3 - "$tmp/z.rows" "$cpu" "$si" <<'PY'
import json, sys
cpu, si = int(sys.argv[2]), int(sys.argv[3])
hit = [r for r in map(json.loads, open(sys.argv[1])) if r["cpu"] == cpu and r["switch_in_ts"] == si and not r.get("head")]
assert len(hit) == 1 and hit[0]["new_thread_stack"] is None, [h["new_thread_stack"] for h in hit]
PY
expect "empty walk: a note counts it ($(grep -c 'held no frame' "$tmp/z.err"))" \
  grep -q "note: .*z\.etl: 1 stack walks at a CSwitch or ReadyThread held no frame" "$tmp/z.err"
"$etlkit" waits "$tmp/z.etl" --by stack --json > "$tmp/z.by" 2>/dev/null
expect "empty walk: waits --by stack: the roots and the no-stack line add up to the totals; walks_empty 1" \
  python3 - "$tmp/z.by" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
for k in ("wait_ns", "ready_ns", "waits", "readies"):
    got = sum(c[k] for c in b["children"]) + b["no_stack"][k]
    assert got == b[k], (k, got, b[k])
assert b["stacks_lack"]["walks_empty"] == 1, b["stacks_lack"]
PY

# ---- 3. waitchain --json --frames 2: the arrays cut, their frame counts those of --frames 0.
"$etlkit" waits "$tmp/a.etl" --json > "$tmp/a.w"
tid=$(python3 -c "import json,sys; print(max(json.load(open(sys.argv[1]))['threads'], key=lambda t: t['wait_ns'])['tid'])" "$tmp/a.w")
"$etlkit" waitchain "$tmp/a.etl" --thread "$tid" --depth 2 --frames 0 --json > "$tmp/c0.json" 2>/dev/null
"$etlkit" waitchain "$tmp/a.etl" --thread "$tid" --depth 2 --frames 2 --json > "$tmp/c2.json" 2>/dev/null
"$etlkit" waitchain "$tmp/a.etl" --thread "$tid" --depth 2 --frames 2 > "$tmp/c2.txt" 2>/dev/null
expect "waitchain --frames 2 --json (tid $tid): the arrays the first 2 of --frames 0's, *_frames their whole length" \
  python3 - "$tmp/c0.json" "$tmp/c2.json" "$tmp/c2.txt" <<'PY'
import json, re, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
more = [int(m) for m in re.findall(r"\((\d+) more\)", open(sys.argv[3]).read())]
cut = []
def walk(x, y):
    if isinstance(x, dict):
        for k in ("blocking_stack", "readier_stack"):
            if k in x and x[k] is not None:
                assert y[k] == x[k][:2], (y[k], x[k][:2])
                assert y[k + "_frames"] == len(x[k]) == x[k + "_frames"], (k, y.get(k + "_frames"), len(x[k]))
                if len(x[k]) > 2: cut.append(len(x[k]) - 2)
        for k in x:
            if k not in ("blocking_stack", "readier_stack"): walk(x[k], y[k])
    elif isinstance(x, list):
        assert len(x) == len(y)
        for p, q in zip(x, y): walk(p, q)
walk(a, b)
assert cut and sorted(cut) == sorted(more), (cut, more)
PY

# ---- 4. A hostile image name: every "ntdll.dll" of the plain trace made "nt<LF>l<ESC>[1m." (the same length).
python3 - "$tmp" <<'PY' || { echo "FAIL: renaming ntdll.dll" >&2; exit 1; }
import sys
d = sys.argv[1]
b = open(d + "/p.etl", "rb").read()
pat, new = "ntdll.dll".encode("utf-16-le"), "nt\nl\x1b[1m.".encode("utf-16-le")
assert len(pat) == len(new) and b.count(pat) > 0
open(d + "/h.etl", "wb").write(b.replace(pat, new))
PY
for form in "" "--flat"; do
  for by in stack readying-stack; do
    "$etlkit" waits "$tmp/h.etl" --by $by $form --top 100000 > "$tmp/h.txt" 2>/dev/null
    rc=$?
    expect "hostile name: waits --by $by $form: exit 0 (got $rc), no raw escape, every frame line whole" \
      sh -c "[ $rc = 0 ] && ! grep -aq \"\$(printf '\\033')\" '$tmp/h.txt' && grep -aq 'nt.*l.*1m\\.+0x' '$tmp/h.txt' &&
             ! grep -aEq '^l' '$tmp/h.txt'"
  done
done

echo "sched_stacks_rows: $passes passed, $fails failed"
[ "$fails" = 0 ]
