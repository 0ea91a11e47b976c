#!/bin/sh
# sched_stacks_lack.sh ETLKIT - what the scheduler's stacks lack is told, as profile tells its own (explore9 F4),
# and a walk whose EventTimeStamp repeats another's gives no undamaged row a wrong stack (explore9 F5).
# Damaged copies of synth --stacks traces (64-bit, uncompressed): every KeyRundown's key changed (references
# unresolved); 200 plain walks naming another StackThread; 200 plain walks with the previous walk's EventTimeStamp
# on their CPU. switches, waits --by, waitchain and export say so on stderr (exit 0), waits --by --json and waitchain
# --json count it under "stacks_lack"; an undamaged trace says nothing and counts 0s.
set -u
etlkit=$1
tmp=${KEEP:-$(mktemp -d)}; [ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null 2>&1 || { echo "sched_stacks_lack.sh: skipped: no python3"; exit 77; }
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails+1)); }
"$etlkit" synth --quiet --stacks --cswitch full --stack-form plain --seed 3 --duration 0.5 -o "$tmp/p.etl" \
  --truth "$tmp/p.jsonl" || { echo "FAIL: synth" >&2; exit 1; }
"$etlkit" synth --quiet --stacks --cswitch full --stack-form cached --seed 4 --duration 0.5 -o "$tmp/c.etl" ||
  { echo "FAIL: synth" >&2; exit 1; }
for f in 0x1820 0x1824; do
  "$etlkit" dump "$tmp/p.etl" --order file --format jsonl --filter $f > "$tmp/p.$f" || fail "dump p $f"
  "$etlkit" dump "$tmp/c.etl" --order file --format jsonl --filter $f > "$tmp/c.$f" || fail "dump c $f"
done
python3 - "$tmp" <<'PY' || fail "damaging the copies"
import json, random, struct, sys
d = sys.argv[1]
def payload(b, r): return struct.unpack_from("<I", b, 0)[0] * r["buf"] + r["off"] + r["size"] - r["len"]
# c-keys: every KeyRundown's StackKey changed (the end rundown's definitions lost)
b = bytearray(open(d + "/c.etl", "rb").read())
for r in map(json.loads, open(d + "/c.0x1824")):
    p = payload(b, r)
    struct.pack_into("<Q", b, p, struct.unpack_from("<Q", b, p)[0] ^ 0x10000000)
open(d + "/c-keys.etl", "wb").write(b)
walks = [json.loads(l) for l in open(d + "/p.0x1820")]
prev, last = {}, {}
for i, r in enumerate(walks):
    prev[i] = last.get(r["cpu"]); last[r["cpu"]] = r
tids = sorted({r["fields"]["StackThread"] for r in walks if r["fields"]["StackThread"]})
for mode in ("tid", "prev"):
    rng = random.Random(1)
    b = bytearray(open(d + "/p.etl", "rb").read())
    picked = rng.sample([i for i, r in enumerate(walks) if r["fields"]["StackThread"] and prev[i]], 200)
    out = open(d + "/p-%s.dmg" % mode, "w")
    for i in picked:
        r = walks[i]; p = payload(b, r)
        ets, _, stid = struct.unpack_from("<QII", b, p)
        assert ets == r["fields"]["EventTimeStamp"] and stid == stid
        if mode == "tid": struct.pack_into("<I", b, p + 12, rng.choice([t for t in tids if t != stid]))
        else: struct.pack_into("<Q", b, p, prev[i]["fields"]["EventTimeStamp"])
        out.write("%d\n" % ets)
    open(d + "/p-%s.etl" % mode, "wb").write(b)
PY
# The notes and counts: name TRACE KEY (the count that must not be 0; - for none at all).
told() {
  name=$1; t=$2; key=$3
  "$etlkit" switches "$t" --json > "$tmp/$name.rows" 2> "$tmp/$name.sw" || fail "$name: switches exit $?"
  "$etlkit" waits "$t" --by stack --json > "$tmp/$name.by" 2> "$tmp/$name.wb" || fail "$name: waits --by exit $?"
  "$etlkit" waitchain "$t" --process services --json > "$tmp/$name.wc" 2> "$tmp/$name.wce"
  rm -f "$tmp/$name.db"
  "$etlkit" export "$t" --to sqlite -o "$tmp/$name.db" 2> "$tmp/$name.ex" || fail "$name: export exit $?"
  for e in sw wb wce ex; do
    if [ "$key" = - ]; then
      ! grep -q "note:" "$tmp/$name.$e" || fail "$name: a note on an undamaged trace: $(grep note: "$tmp/$name.$e")"
    else
      grep -q "note: .*$4" "$tmp/$name.$e" || fail "$name: $e: no note of $key: $(cat "$tmp/$name.$e")"
    fi
  done
  python3 - "$tmp/$name.by" "$tmp/$name.wc" "$key" <<'PY' || fail "$name: stacks_lack"
import json, sys
key = sys.argv[3]
for f in sys.argv[1:3]:
    try: j = json.load(open(f))
    except ValueError: continue  # waitchain found no chain: no stacks read
    if "stacks_lack" not in j:
        if f.endswith(".wc") and "error" in j: continue
        print("no stacks_lack in", f, file=sys.stderr); sys.exit(1)
    lack = j["stacks_lack"]
    bad = {k: v for k, v in lack.items() if v and k != key} or (key != "-" and not lack.get(key))
    if bad: print(f, lack, file=sys.stderr); sys.exit(1)
PY
}
told clean "$tmp/p.etl" -
told clean-cached "$tmp/c.etl" -
told keys "$tmp/c-keys.etl" key_refs_unresolved "stack references have no definition"
told tid "$tmp/p-tid.etl" walks_unmatched "name another thread"
told prev "$tmp/p-prev.etl" walks_repeated "repeats another's"
# F5: no row whose walk is undamaged takes a wrong stack (a damaged walk's own row may: its walk is gone). A damaged
# walk that is a deferred user part (a plain walk starting in user space) naming an event that waits for its user
# part is that part as far as the trace can tell: such a row's kernel frames are the truth's, user frames follow.
# A damaged kernel part was taken as the user part of the event it named (an undamaged row) before the fix.
python3 - "$tmp/p.jsonl" "$tmp/prev.rows" "$tmp/p-prev.dmg" <<'PY' || fail "prev: undamaged rows with wrong stacks"
import json, sys
tps = None; imgs = {}; cs = {}; rd = {}
for t in map(json.loads, open(sys.argv[1])):
    if t["type"] == "meta": tps = t["ticks_per_sec"]
    elif t["type"] == "image": imgs.setdefault(t["name"], set()).add(t["base"])
    elif t["type"] == "stack":
        if t["event"] == "cswitch": cs[(t["cpu"], t["time"])] = t["stack"]
        else: rd.setdefault(t["time"], []).append((t["tid"], t["stack"]))
dmg = {int(l) for l in open(sys.argv[3])}
def same(labels, frames):
    if len(labels) < len(frames): return False
    extra, labels = labels[:len(labels) - len(frames)], labels[len(labels) - len(frames):]  # outermost first
    if extra and (frames[-1] < 1 << 63 or any(b >= 1 << 63 for l in extra for b in imgs.get(l.rsplit("+0x", 1)[0], ()))):
        return False  # extra frames only on a kernel-only truth, and only user ones
    for lab, a in zip(labels, reversed(frames)):
        mod, off = lab.rsplit("+0x", 1); off = int(off, 16)
        if not (off == a if mod == "Unknown" else any(b + off == a for b in imgs.get(mod, ()))): return False
    return True
rows = [r for r in map(json.loads, open(sys.argv[2])) if not r.get("head")]
origin = rows[0]["switch_in_ts"] - rows[0]["switch_in_ns"] * tps // 10**9
wrong = checked = 0
for r in rows:
    got, want = r.get("new_thread_stack"), cs.get((r["cpu"], r["switch_in_ts"]))
    if got and want and r["switch_in_ts"] not in dmg:
        checked += 1; wrong += not same(got, want)
    got = r.get("readying_thread_stack")
    if got and "readying_tid" in r:
        rt = origin + r["ready_time_ns"] * tps // 10**9
        cand = [f for tid, f in rd.get(rt, []) if tid == r["readying_tid"]]
        if cand and rt not in dmg:
            checked += 1; wrong += not any(same(got, f) for f in cand)
print("prev: %d of %d undamaged rows' stacks wrong" % (wrong, checked), file=sys.stderr if wrong else sys.stdout)
sys.exit(1 if wrong or checked < 1000 else 0)
PY
[ $fails -eq 0 ] || { echo "sched_stacks_lack: $fails failed" >&2; exit 1; }
echo "sched_stacks_lack: ok"
