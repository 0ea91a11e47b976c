#!/bin/sh
# profile_agree.sh ETLKIT GEN_PROFILE_AGREE - the profile's outputs agree with each other and tell what they
# leave out (explore8 F1, F3, F4, F6, F7), on tests/unit/profagree.h's traces and on a synth trace whose
# dbghelp.dll is unloaded and loaded again:
#   - the report's flame graph equals --folded path by path (a node per module+offset, not per image life);
#   - a sample of a thread no Thread event names: --json, --folded and the export's sample.image_id name
#     its module in one process (the one its walk names), and --process selects it by that process;
#   - an impossible ImageSize: exit 3, a warning at its file offset, no other image's samples taken;
#   - stack references no definition gives and walks past 192 frames: a note on standard error in every
#     output form, the counts under anomalies;
#   - stack-key definitions lost (explore8 F2): a reference whose key's next definition holds the other part
#     (kernel or user) resolves to nothing, and is told; none on the whole trace;
#   - kernel-part references lost (explore23 F1): the samples whose stack does not begin at their address are
#     counted and told in every form.
set -u
etlkit=$1; gen=$2
here=$(dirname "$0")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
check() { # check NAME EXPECTED_STATUS ACTUAL_STATUS
  if [ "$2" = "$3" ]; then passes=$((passes+1)); else echo "FAIL: $1: exit $3, expected $2" >&2; fails=$((fails+1)); fi
}
expect() { # expect NAME CONDITION...
  name=$1; shift
  if "$@"; then passes=$((passes+1)); else echo "FAIL: $name" >&2; fails=$((fails+1)); fi
}
command -v python3 >/dev/null 2>&1 || { echo "profile_agree.sh: skipped: no python3 to read the JSON"; exit 77; }
"$gen" "$tmp" || { echo "FAIL: gen_profile_agree" >&2; exit 1; }

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

# flame_check NAME PAGE FOLDED: every flame node but "other" holds the samples --folded has through its path, every
# path with at least min_samples is a node, no two siblings share a label.
flame_check() {
  expect "$1: flame graph = --folded" python3 - "$2" "$3" <<'PY'
import json, re, sys
from collections import Counter
page = open(sys.argv[1]).read()
d = json.loads(re.search(r'<script type="application/json" id="etlkit-data">(.*?)</script>', page, re.S).group(1))
fl = d["flame"]; nodes = fl["nodes"]
pref = Counter(); total = 0
for line in open(sys.argv[2]):
    path, n = line.rstrip("\n").rsplit(" ", 1); n = int(n); total += n
    parts = path.split(";")
    for i in range(1, len(parts) + 1): pref[tuple(parts[:i])] += n
bad = []
if fl["samples"] != total: bad.append("total %d, folded %d" % (fl["samples"], total))
paths = [None] * len(nodes); sib = Counter()
for i, (par, n, lab) in enumerate(nodes):
    paths[i] = () if par < 0 else paths[par] + (lab,)
    if par < 0 or lab == "other": continue
    sib[(par, lab)] += 1
    if pref.get(paths[i]) != n: bad.append("%s: flame %d, folded %s" % (";".join(paths[i][-3:]), n, pref.get(paths[i])))
bad += ["siblings %s x%d" % (k[1], v) for k, v in sib.items() if v > 1]
have = set(paths)
bad += ["missing " + ";".join(p[-3:]) for p, n in pref.items() if n >= fl["min_samples"] and p not in have]
for b in bad[:5]: sys.stderr.write(b + "\n")
sys.exit(1 if bad else 0)
PY
}

# ---- F1: a module+offset in several image lives is one node, as --folded names it.
t=$tmp/reload.etl
"$etlkit" report "$t" -o "$tmp/reload.html" >/dev/null 2>"$tmp/err"; check "reload: report" 0 $?
"$etlkit" profile --folded "$t" >"$tmp/reload.folded" 2>"$tmp/err"; check "reload: --folded" 0 $?
flame_check reload "$tmp/reload.html" "$tmp/reload.folded"
expect "reload: one folded line per text" [ "$(sed 's/ [0-9]*$//' "$tmp/reload.folded" | sort | uniq -d | wc -l)" -eq 0 ]
expect "reload: plug.dll+0x20 in 6 samples, one line" \
  grep -qx 'app.exe (100);main (101);ntdll.dll+0x1000;app.exe+0x100;plug.dll+0x10;plug.dll+0x20 6' "$tmp/reload.folded"
"$etlkit" synth --quiet --stacks --stack-form both --seed 5 --duration 1 -o "$tmp/synth.etl" || echo "FAIL: synth" >&2
"$etlkit" report "$tmp/synth.etl" -o "$tmp/synth.html" >/dev/null 2>"$tmp/err"; check "synth: report" 0 $?
"$etlkit" profile --folded "$tmp/synth.etl" >"$tmp/synth.folded" 2>"$tmp/err"; check "synth: --folded" 0 $?
flame_check "synth (dbghelp.dll reloaded)" "$tmp/synth.html" "$tmp/synth.folded"
"$etlkit" report "$tmp/synth.etl" --range 0.2 0.5 -o "$tmp/synth-r.html" >/dev/null 2>"$tmp/err"
"$etlkit" profile --folded --range 0.2 0.5 "$tmp/synth.etl" >"$tmp/synth-r.folded" 2>"$tmp/err"
flame_check "synth --range" "$tmp/synth-r.html" "$tmp/synth-r.folded"
expect "synth: one folded line per text" [ "$(sed 's/ [0-9]*$//' "$tmp/synth.folded" | sort | uniq -d | wc -l)" -eq 0 ]

# ---- F4: a thread no Thread event names: its walk's process, for --json, --folded and the export alike.
t=$tmp/threads.etl
"$etlkit" profile --folded "$t" >"$tmp/folded" 2>"$tmp/err.folded"; check "threads: --folded" 0 $?
expect "threads: 4242 in app.exe, ntdll.dll" \
  grep -qx 'app.exe (100);Thread (4242);app.exe+0x300;ntdll.dll+0x5000 1' "$tmp/folded"
expect "threads: 101's frames in its own process" \
  grep -qx 'app.exe (100);main (101);app.exe+0x400;ntdll.dll+0x6000 1' "$tmp/folded"
"$etlkit" profile --json --thread 4242 "$t" >"$tmp/json" 2>"$tmp/err"; check "threads: --json --thread 4242" 0 $?
json_check "threads: --json names what --folded names" "$tmp/json" \
  '[(m["module"], m["samples"]) for m in d["modules"]] == [("ntdll.dll", 1)]' \
  '[f["function"] for f in d["functions"]] == ["ntdll.dll+0x5000"]' \
  '[(p["pid"], p["name"]) for p in d["processes"]] == [(100, "app.exe")]' \
  'd["threads"][0]["pid"] == 100 and d["threads"][0]["with_stack"] == 1'
"$etlkit" profile --json "$t" >"$tmp/json" 2>"$tmp/err.json"; check "threads: --json" 0 $?
json_check "threads: anomalies" "$tmp/json" \
  'd["anomalies"]["key_refs_unresolved"] == 1 and d["anomalies"]["process_from_walk"] == 1' \
  'd["anomalies"]["process_disagrees"] == 1 and d["anomalies"]["walks_cut"] == 0' \
  '[(m["module"], m["samples"]) for m in d["modules"]] == [("ntdll.dll", 2), ("ntoskrnl.exe", 1), ("Unknown", 1)]'
for sel in "--process 100" "--process app"; do
  # shellcheck disable=SC2086
  "$etlkit" profile --json $sel "$t" >"$tmp/json" 2>"$tmp/err"; check "threads: $sel" 0 $?
  json_check "threads: $sel selects 4242 by its walk's process" "$tmp/json" 'd["samples"] == 3' \
    '4242 in [t["tid"] for t in d["threads"]]'
done
for form in folded json; do
  expect "threads: --$form: the unresolved key told" grep -q \
    "^etlkit profile: note: .*threads.etl: 1 stack references have no definition of their part" "$tmp/err.$form"
  expect "threads: --$form: the walk's process told" grep -q \
    "^etlkit profile: note: .*: 1 samples are of threads no Thread event names" "$tmp/err.$form"
done
"$etlkit" profile "$t" >"$tmp/out" 2>"$tmp/err"; check "threads: text" 0 $?
expect "threads: text: the note on standard error" grep -q "have no definition of their part" "$tmp/err"
expect "threads: text: not in the tables" sh -c "! grep -q 'no definition of their part' '$tmp/out'"
"$etlkit" profile -q --json "$t" >"$tmp/json" 2>"$tmp/err"; check "threads: -q" 0 $?
expect "threads: -q: no note" [ ! -s "$tmp/err" ]
"$etlkit" report "$t" -o "$tmp/threads.html" >/dev/null 2>&1; check "threads: report" 0 $?
expect "threads: the flame section says what the stacks lack" grep -q "have no definition of their part" "$tmp/threads.html"
if python3 -c 'import sqlite3' 2>/dev/null; then
  "$etlkit" export "$t" --to sqlite -o "$tmp/threads.db" >/dev/null 2>&1; check "threads: export" 0 $?
  expect "threads: export: a sample's image is its first frame's, its pid its walk's" python3 - "$tmp/threads.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select s.tid, s.pid, s.ip, s.image_id, k.address, k.image_id from sample s join stack k "
                  "on k.stack_id = s.stack_id and k.depth = 0 where s.walked = 1").fetchall()
bad = [r for r in rows if int(str(r[2]), 0) == int(str(r[4]), 0) and r[3] != r[5]]
bad += [r for r in rows if r[0] == 4242 and (r[1] != 100 or r[3] is None)]
for b in bad: sys.stderr.write("sample %r\n" % (b,))
sys.exit(1 if bad or not rows else 0)
PY
else
  echo "skipped: the export check (no python3 sqlite3)"
fi

# ---- F3: an ImageSize over 32 bits: damage, told at its offset; the other images keep their samples.
t=$tmp/bigsize.etl
"$etlkit" profile --json "$t" >"$tmp/json" 2>"$tmp/err"; check "bigsize: --json" 3 $?
json_check "bigsize: no sample moved to dbghelp.dll" "$tmp/json" \
  '[(m["module"], m["samples"]) for m in d["modules"]] == [("ntdll.dll", 1), ("other.dll", 1), ("Unknown", 1)]' \
  'd["anomalies"]["image_sizes_bad"] == 1'
expect "bigsize: a warning at the record's file offset" \
  grep -q "file offset 0x[0-9a-f]*, hook 0x030a, the Image event of dbghelp.dll .*ImageSize 0xffffffffffffffff" "$tmp/err"
expect "bigsize: one warning" [ "$(grep -c warning "$tmp/err")" -eq 1 ]
"$etlkit" profile --folded "$t" >"$tmp/folded" 2>"$tmp/err"; check "bigsize: --folded" 3 $?
expect "bigsize: --folded" grep -q ';other.dll+0x100 1$' "$tmp/folded"
# The report's flame graph and the export's profile tables read the file again: the damage is theirs too (exit 3).
"$etlkit" report "$t" -o "$tmp/page.html" --force >/dev/null 2>&1; check "bigsize: report" 3 $?
"$etlkit" export "$t" --to sqlite -o "$tmp/x.db" --force >/dev/null 2>&1; check "bigsize: export --to sqlite" 3 $?
"$etlkit" export "$t" --to perfetto -o "$tmp/x.pftrace" --force >/dev/null 2>&1; check "bigsize: export --to perfetto" 3 $?

# ---- F7: a walk and a key definition of 200 frames: the innermost 192, told.
t=$tmp/deep.etl
"$etlkit" profile --folded "$t" >"$tmp/folded" 2>"$tmp/err"; check "deep: --folded" 0 $?
expect "deep: one stack of 192 frames" [ "$(awk -F';' '{ print NF - 2 }' "$tmp/folded")" = 192 ]
expect "deep: told" grep -q "^etlkit profile: note: .*deep.etl: 2 stack walks had more than 192 frames" "$tmp/err"
"$etlkit" profile --json "$t" >"$tmp/json" 2>"$tmp/err"; check "deep: --json" 0 $?
json_check "deep: counted" "$tmp/json" 'd["anomalies"]["walks_cut"] == 2 and d["with_stack"] == 3'
expect "deep: --json: told" grep -q "2 stack walks had more than 192 frames" "$tmp/err"

# ---- explore8 F2: one KeyDelete in 10 lost. Kernel and user stacks share the cache's keys, so a reference whose
# definition was lost would take its key's next one, often the other part's: idle samples got user frames.
"$etlkit" synth --stacks --stack-form cached --seed 5 --duration 1 -q -o "$tmp/c.etl"; check "F2: synth" 0 $?
python3 "$here/damage.py" "$tmp/c.etl" "$tmp/lost.etl" rehook 1823 18ff 10 >/dev/null; check "F2: damage.py" 0 $?
"$etlkit" profile --json "$tmp/c.etl" >"$tmp/json" 2>"$tmp/err"; check "F2: whole: --json" 0 $?
json_check "F2: whole: every reference resolves" "$tmp/json" 'd["anomalies"]["key_refs_unresolved"] == 0'
for form in json folded; do
  "$etlkit" profile --$form "$tmp/lost.etl" >"$tmp/out.$form" 2>"$tmp/err.$form"; check "F2: lost: --$form" 0 $?
  expect "F2: lost: --$form: told" grep -q "stack references have no definition of their part" "$tmp/err.$form"
  # explore23 F2: a lost definition whose key's next holds the same part is taken: the note says stacks may be wrong.
  expect "F2: lost: --$form: may be another sample's" grep -q "some stacks may then be another sample's" "$tmp/err.$form"
done
json_check "F2: lost: counted" "$tmp/out.json" 'd["anomalies"]["key_refs_unresolved"] > 100'
expect "F2: lost: the idle thread's stacks hold no user address" python3 - "$tmp/out.folded" <<'PY'
import re, sys
bad = [l for l in open(sys.argv[1]) if l.startswith("Idle (0);")
       and any(int(a, 16) < 1 << 63 for a in re.findall(r";Unknown\+0x([0-9a-f]+)", l))]
sys.stderr.write("".join(bad[:3]))
sys.exit(1 if bad else 0)
PY

# ---- explore23 F1: one kernel-part reference (0x1825) in 10 lost. A sample at a kernel address kept its user part
# alone, which read as its whole stack: --json (the address) and --folded (the leaf) disagreed, untold. Now each
# form counts the samples whose stack does not begin at their address (the export's sample.ip against its stack's
# innermost frame: the same samples) and says so; the undamaged trace has none.
"$etlkit" synth --stacks --stack-form cached --seed 4 --duration 1 -q -o "$tmp/k.etl"; check "F1: synth" 0 $?
python3 "$here/damage.py" "$tmp/k.etl" "$tmp/lostk.etl" rehook 1825 18ff 10 >/dev/null; check "F1: damage.py" 0 $?
"$etlkit" profile --json "$tmp/k.etl" >"$tmp/json" 2>"$tmp/err"; check "F1: whole: --json" 0 $?
json_check "F1: whole: every stack begins at its address" "$tmp/json" 'd["anomalies"]["stacks_not_at_ip"] == 0'
expect "F1: whole: no note" [ ! -s "$tmp/err" ]
for form in json folded "json --threads 2"; do
  "$etlkit" profile --$form "$tmp/lostk.etl" >"$tmp/out" 2>"$tmp/err"; check "F1: lost: --$form" 0 $?
  expect "F1: lost: --$form: told" grep -q "samples' stacks do not begin at their sampled address" "$tmp/err"
done
"$etlkit" profile --json "$tmp/lostk.etl" >"$tmp/json" 2>/dev/null
"$etlkit" export "$tmp/lostk.etl" --to sqlite -o "$tmp/lostk.db" --force >/dev/null 2>&1; check "F1: export" 0 $?
expect "F1: lost: counted, the export's samples whose stack begins elsewhere" python3 - "$tmp/json" "$tmp/lostk.db" <<'PY'
import json, sqlite3, sys
n = json.load(open(sys.argv[1]))["anomalies"]["stacks_not_at_ip"]
db = sqlite3.connect(sys.argv[2])
off = db.execute("select count(*) from sample s join stack st on st.stack_id = s.stack_id and st.depth = 0 "
                 "where s.walked and st.address != s.ip").fetchone()[0]
sys.stderr.write("stacks_not_at_ip %d, export %d\n" % (n, off) if n != off or n < 10 else "")
sys.exit(0 if n == off and n >= 10 else 1)
PY

echo "profile_agree.sh: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
