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
#   switches TRUTH ROWS.jsonl ROWS.csv  also the CSV's stack cells (frames joined by '/'), row by row the JSON's.
#   relabel PLAIN SYMBOLS          waits --by stack (JSON, tree or --flat; or text) without symbols (PLAIN) and
#                                  with (SYMBOLS): the same nodes and times, each label of a NAMES module
#                                  renamed module!function (--symbols' waits go by function); needs --names.
# --names NAMES (before MODE): "MODULE RVA FUNCTION" lines, the functions of the modules whose PDB is at hand.
# A label of such a module must then be "module!function+0xOFF" with base + RVA + OFF the truth's address
# (never module+offset), and every NAMES module must be named somewhere; the others stay module+offset.
import json, sys

names, named, seen = {}, set(), set()
if sys.argv[1] == "--names":
    for line in open(sys.argv[2]):
        m, rva, fn = line.split()
        names[(m, fn)] = int(rva, 0)
        named.add(m)
    del sys.argv[1:3]

def function_of(mod, off):  # the NAMES function of mod holding offset off (None: none)
    best = None
    for (m, fn), rva in names.items():
        if m == mod and rva <= off and (best is None or rva > best[1]):
            best = (fn, rva)
    return best[0] if best else None

mode, truth = sys.argv[1], sys.argv[2]
imgs, cs, rd, tps = {}, {}, {}, None
for line in open(truth) if mode != "relabel" else ():
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
        if "!" in lab:  # module!function+0xOFF: a NAMES function's RVA + OFF
            mod, fn = lab.split("!", 1)
            fn, off = fn.rsplit("+0x", 1) if "+0x" in fn else (fn, "0")
            rva = names.get((mod, fn))
            if rva is None or not any(b + rva + int(off, 16) == a for b in imgs.get(mod, ())):
                return False
            seen.add(mod)
            continue
        mod, off = lab.rsplit("+0x", 1)
        off = int(off, 16)
        if mod in named:  # its PDB is at hand: a name, never module+offset
            return False
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

def named_all():  # with --names: every NAMES module named somewhere
    if named - seen:
        fail("no frame named in %s" % ", ".join(sorted(named - seen)))

if mode == "switches":
    rows = [json.loads(l) for l in open(sys.argv[3])]
    origin = next(r["switch_in_ts"] - r["switch_in_ns"] * tps // 10**9 for r in rows if not r.get("head"))
    if len(sys.argv) > 4:  # the CSV's cells in place of the JSON's, its rows the JSON's (CPU, Switch-In Time)
        import csv
        with open(sys.argv[4], encoding="utf-8-sig", newline="") as fh:
            cells = list(csv.DictReader(fh))
        if len(cells) != len(rows):
            fail("%d CSV rows, %d JSON rows" % (len(cells), len(rows)))
        for r, c in zip(rows, cells):
            if int(c["CPU"]) != r["cpu"] or round(float(c["Switch-In Time (s)"]) * 1e9) != r["switch_in_ns"]:
                fail("CSV row at CPU %s %s s is not the JSON's" % (c["CPU"], c["Switch-In Time (s)"]))
            for col, key in (("New Thread Stack", "new_thread_stack"), ("Readying Thread Stack", "readying_thread_stack")):
                r[key] = c[col].split("/") if c[col] else None
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
    named_all()
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
    named_all()
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
elif mode == "relabel":
    plain, symb = sys.argv[2], sys.argv[3]
    if not names:
        fail("relabel needs --names")
    def rename(lab):  # module+0xOFF of a NAMES module: module!function
        mod, _, off = lab.rpartition("+0x")
        fn = function_of(mod, int(off, 16)) if mod in named else None
        return "%s!%s" % (mod, fn) if fn else lab
    def lines(path, relabel):  # the nodes as sorted lines: path of labels (tree) or label (flat), and times
        out = []
        text = open(path, encoding="utf-8").read()
        if not text.startswith("{"):  # text: the frame is a row's last field
            for l in text.splitlines():
                f = l.rstrip().rsplit(" ", 1)
                if not relabel and "!" in f[-1] and f[-1].split("!")[0] in named:
                    seen.add(f[-1].split("!")[0])
                out.append(f[0] + " " + (rename(f[1]) if relabel and len(f) == 2 and "+0x" in f[1] else f[-1]))
            return sorted(out)
        d = json.loads(text)
        head = {k: d[k] for k in ("wait_ns", "ready_ns", "waits", "readies", "no_stack")}
        out.append(json.dumps(head, sort_keys=True))
        def walk(nodes, above):
            for x in nodes:
                lab = rename(x["frame"]) if relabel else x["frame"]
                out.append("%s %d %d %d %d" % (above + [lab], x["wait_ns"], x["ready_ns"], x["waits"], x["readies"]))
                if not relabel and "!" in lab and lab.split("!")[0] in named:
                    seen.add(lab.split("!")[0])
                walk(x.get("children", []), above + [lab])
        walk(d.get("children", d.get("functions", [])), [])
        return sorted(out)
    a, b = lines(plain, True), lines(symb, False)
    if a != b:
        d = [x for x in b if x not in a][:3] + ["--"] + [x for x in a if x not in b][:3]
        fail("%s and %s differ (renamed): %s" % (plain, symb, d))
    named_all()
    print("relabel: %d nodes the same, renamed by function" % len(a))
