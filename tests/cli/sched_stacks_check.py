#!/usr/bin/env python3
# sched_stacks_check.py MODE TRUTH FILE... - checks etlkit's stacks on the scheduler's rows against
# `synth --truth` (issue 23). Frames are compared as labels: "module+0xOFF" must be an image of that
# name at base + OFF == the truth's address ("Unknown+0xADDR": the address itself).
#   switches TRUTH ROWS.jsonl      every row's New Thread Stack (the CSwitch walk at its switch-in) and
#                                  Readying Thread Stack (the ReadyThread walk at its Ready Time) are the
#                                  truth's; a row the truth has none for has none.
#   waitchain TRUTH CHAIN.json N BASE  every wait's blocking_stack and readier_stack are the truth's top N
#                                  frames (BASE: the ticks of the trace's ns 0).
#   export TRUTH DB.sqlite         every slice's new_stack_id / readying_stack_id frames (stack table) are the
#                                  truth's addresses, the sample rows' stacks are in the stack table, and no
#                                  id holds two stacks.
import json, sys

mode, truth = sys.argv[1], sys.argv[2]
imgs, cs, rd, tps = {}, {}, {}, None
for line in open(truth):
    t = json.loads(line)
    if t["type"] == "meta":
        tps = t["ticks_per_sec"]
    elif t["type"] == "image":
        imgs.setdefault(t["name"], set()).add(t["base"])
    elif t["type"] == "stack":
        if t["event"] == "cswitch":
            cs[(t["cpu"], t["time"])] = t["stack"]
        else:
            rd.setdefault(t["time"], []).append((t["tid"], t["stack"]))

def same(labels, frames):  # labels in the order given, frames innermost first (already ordered to match)
    if labels is None or len(labels) != len(frames):
        return False
    for lab, a in zip(labels, frames):
        mod, off = lab.rsplit("+0x", 1)
        off = int(off, 16)
        if mod == "Unknown":
            if off != a:
                return False
        elif not any(b + off == a for b in imgs.get(mod, ())):
            return False
    return True

def fail(msg):
    sys.stderr.write("sched_stacks_check %s: %s\n" % (mode, msg))
    sys.exit(1)

def ticks(origin, ns):
    return origin + ns * tps // 10**9

if mode == "switches":
    rows = [json.loads(l) for l in open(sys.argv[3])]
    origin = next(r["switch_in_ts"] - r["switch_in_ns"] * tps // 10**9 for r in rows if not r.get("head"))
    n = rn = 0
    for r in rows:
        got, key = r.get("new_thread_stack"), (r["cpu"], r["switch_in_ts"])
        if not r.get("head") and key in cs:
            n += 1
            if not same(got, list(reversed(cs[key]))):
                fail("row at cpu %d ts %d: New Thread Stack %s, truth %s" % (key + (got, cs[key])))
        elif got is not None:
            fail("row at cpu %d ts %d has a New Thread Stack the truth has not" % key)
        got = r.get("readying_thread_stack")
        cand = rd.get(ticks(origin, r["ready_time_ns"]), []) if "readying_process" in r else []
        if "readying_tid" in r:
            cand = [c for c in cand if c[0] == r["readying_tid"]]
        if cand:
            rn += 1
            if not any(same(got, list(reversed(f))) for _, f in cand):
                fail("row at cpu %d ts %d: Readying Thread Stack %s, truth %s" % (key + (got, cand)))
        elif got is not None:
            fail("row at cpu %d ts %d has a Readying Thread Stack the truth has not" % key)
    if (cs and not n) or not rn:  # a compact-only trace has no CSwitch, so no New Thread Stack
        fail("no row with stacks (%d, %d)" % (n, rn))
    print("switches: %d New Thread Stacks and %d Readying Thread Stacks equal the truth" % (n, rn))
elif mode == "waitchain":
    # BASE: the ticks of ns 0 (the chain's times are ns from the trace start).
    d, top, base = json.load(open(sys.argv[3])), int(sys.argv[4]), int(sys.argv[5])
    hops = [0, 0]
    def walk(node):
        segs = node["segments"]
        for i, s in enumerate(segs):
            if s["state"] in ("waiting", "off-cpu") and "blocking_stack" in s and i + 1 < len(segs):
                x = segs[i + 1]
                si = x["end_ns"] if x["state"] == "ready" else x["start_ns"]
                f = cs.get((x["cpu"], ticks(base, si)))
                if s["blocking_stack"] is not None:
                    if f is None or not same(s["blocking_stack"], f[:top]):
                        fail("wait at %d ns: blocking stack %s, truth %s" % (s["start_ns"], s["blocking_stack"], f))
                    hops[0] += 1
            if s["state"] == "waiting" and s.get("readier_stack") is not None:
                cand = rd.get(ticks(base, s["end_ns"]), [])
                if not any(same(s["readier_stack"], f[:top]) for _, f in cand):
                    fail("wait at %d ns: readier stack %s, truth %s" % (s["start_ns"], s["readier_stack"], cand))
                hops[1] += 1
            if "chain" in s:
                walk(s["chain"])
    walk(d["chain"])
    if not hops[0] or not hops[1]:
        fail("no hop with stacks (%d, %d)" % tuple(hops))
    print("waitchain: %d blocking and %d readier stacks equal the truth" % tuple(hops))
elif mode == "export":
    import sqlite3
    db = sqlite3.connect(sys.argv[3])
    frames = {}
    for sid, depth, addr in db.execute("SELECT stack_id, depth, address FROM stack ORDER BY stack_id, depth"):
        frames.setdefault(sid, []).append(int(addr, 16))
    n = rn = 0
    for cpu, ts, nid, rid, rt in db.execute(
            "SELECT cpu, start_ts, new_stack_id, readying_stack_id, ready_time_ts FROM slice WHERE head = 0"):
        if (cpu, ts) in cs:
            if nid is None or frames.get(nid) != cs[(cpu, ts)]:
                fail("slice at cpu %d ts %d: new_stack_id %s" % (cpu, ts, nid))
            n += 1
        elif nid is not None:
            fail("slice at cpu %d ts %d: a new_stack_id the truth has not" % (cpu, ts))
        if rid is not None:
            if not any(frames.get(rid) == f for _, f in rd.get(rt, [])):
                fail("slice at cpu %d ts %d: readying_stack_id %s is not the truth's" % (cpu, ts, rid))
            rn += 1
    for (sid,) in db.execute("SELECT DISTINCT stack_id FROM sample"):
        if sid not in frames:
            fail("sample stack %d not in the stack table" % sid)
    # The images: the profile's ids, so a switch stack's frame lies in its image too.
    imgs = {i: (int(b, 16), n) for i, b, n in db.execute("SELECT image_id, base, size FROM image")}
    for sid, depth, addr, img in db.execute("SELECT stack_id, depth, address, image_id FROM stack WHERE image_id IS NOT NULL"):
        b, n = imgs.get(img, (1, 0))
        if not b <= int(addr, 16) < b + n:
            fail("stack %d frame %d at %s outside its image %d" % (sid, depth, addr, img))
    dup = db.execute("SELECT COUNT(*) FROM (SELECT 1 FROM stack GROUP BY stack_id, depth HAVING COUNT(*) > 1)").fetchone()[0]
    if dup:
        fail("%d (stack_id, depth) pairs twice in the stack table: two stacks under one id" % dup)
    if not n or not rn:
        fail("no slice with stacks (%d, %d)" % (n, rn))
    print("export: %d new_stack_id and %d readying_stack_id equal the truth" % (n, rn))
