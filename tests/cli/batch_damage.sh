#!/bin/sh
# batch_damage.sh ETLKIT - a damaged compact batch (hook 0x0525) is told at its own file offset, and every command
# that reads batches (info and convert too) exits 3 (explore19 F1-F3): a Size past the 0x58 + 0x400 batch limit, a switch after the
# batch's own header time (kernel-events.md 6.5: the batch was written after its last switch), a record cut by the
# batch's Size, a TidTable index past the filled entries. The undamaged trace exits 0 everywhere.
set -u
etlkit=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails+1)); }

# mut IN OUT OP ARG...: batch 3 (file order; for ridx the first from there with an empty TidTable entry) of an uncompressed trace; prints its file offset.
#   size DELTA (its Size), first DELTA (FirstTimeStamp), ridx R IDX (record R's index), bprio I V (base priority I)
mut() {
  python3 - "$@" <<'PY'
import struct, sys
src, dst, op, args = sys.argv[1], sys.argv[2], sys.argv[3], [int(a, 0) for a in sys.argv[4:]]
d = bytearray(open(src, 'rb').read())
bl, off = [], 0
while off + 0x48 <= len(d):
    size, = struct.unpack_from('<I', d, off)
    fill, = struct.unpack_from('<I', d, off + 0x30)
    o, end = off + 0x48, off + fill
    while off and o + 8 <= end:
        m, = struct.unpack_from('<I', d, o)
        if m == 0xFFFFFFFF: break
        rs, hook = struct.unpack_from('<HH', d, o + 4)
        if (m >> 16) & 0xFF in (0x10, 0x11) and hook == 0x0525:
            bl.append((o, o + 0x10 + (8 if m & 0x8000 else 0) + 8 * ((m >> 8) & 7)))
        if rs == 0: break
        o += (rs + 7) & ~7
    if size < 0x48: break
    off += size
o, pl = bl[3]
if op == 'ridx':     # a batch whose TidTable has an empty entry
    o, pl = next(b for b in bl[3:] if struct.unpack_from('<I', d, b[1] + 8 + 4 * 15)[0] == 0)
if op == 'size':
    struct.pack_into('<H', d, o + 4, struct.unpack_from('<H', d, o + 4)[0] + args[0])
elif op == 'first':
    struct.pack_into('<Q', d, pl, struct.unpack_from('<Q', d, pl)[0] + args[0])
elif op == 'ridx':   # record R of the batch, Lite or Full, its index set to IDX (-1: the first empty entry)
    if args[1] < 0:
        args[1] = next(i for i in range(16) if struct.unpack_from('<I', d, pl + 8 + 4 * i)[0] == 0)
    q = pl + 0x58
    for _ in range(args[0]): q += (2, 4, 4, 8)[d[q] & 3]
    while d[q] & 3 < 2: q += (2, 4, 4, 8)[d[q] & 3]
    if d[q] & 3 == 2: d[q] = (d[q] & 0xC3) | (args[1] << 2)
    else: d[q + 4] = (d[q + 4] & 0xF0) | args[1]
elif op == 'bprio':
    d[pl + 0x48 + args[0]] = args[1] & 0xFF
elif op == 'rstate':  # every Lite/Full record's StateWr set to V
    q, end = pl + 0x58, o + struct.unpack_from('<H', d, o + 4)[0]
    while q < end:
        f = d[q] & 3
        if f == 2: struct.pack_into('<I', d, q, (struct.unpack_from('<I', d, q)[0] & ~0x7E00) | args[0] << 9)
        if f == 3: struct.pack_into('<I', d, q + 4, (struct.unpack_from('<I', d, q + 4)[0] & ~0x3F0) | args[0] << 4)
        q += (2, 4, 4, 8)[f]
open(dst, 'wb').write(d)
print(hex(o))
PY
}

# batches FILE: the Size and bytes of every 0x0525 record, sorted (convert keep/compact copies them as they are)
batches() {
  python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
out, off = [], 0
while off + 0x48 <= len(d):
    size, = struct.unpack_from('<I', d, off)
    fill, = struct.unpack_from('<I', d, off + 0x30)
    o, end = off + 0x48, off + fill
    while off and o + 8 <= end:
        m, = struct.unpack_from('<I', d, o)
        if m == 0xFFFFFFFF: break
        rs, hook = struct.unpack_from('<HH', d, o + 4)
        if (m >> 16) & 0xFF in (0x10, 0x11) and hook == 0x0525:
            h = 0x10 + (8 if m & 0x8000 else 0) + 8 * ((m >> 8) & 7)
            out.append(d[o + h:o + rs].hex())
        if rs == 0: break
        o += (rs + 7) & ~7
    if size < 0x48: break
    off += size
print("\n".join(sorted(out)))
PY
}

# The commands that read batches: the reports, dump --expand, info (which counts them) and convert in every form.
cmds="cpu_--json waits_--json switches_--json wakeups_--json dump_--format_jsonl_--expand info info_--json
convert_--cswitch_keep convert_--cswitch_compact convert_--cswitch_full"
run() { # FILE "CMD": etlkit's status; convert writes $tmp/out.etl
  case $2 in convert*) $etlkit $(echo "$2" | tr _ ' ') "$1" -o "$tmp/out.etl" --force ;;
  *) $etlkit $(echo "$2" | tr _ ' ') "$1" ;; esac
}

# case NAME EXPECT_TEXT OP ARG...: every command that reads batches exits 3 with the warning at the batch's offset
case_() {
  name=$1; text=$2; shift 2
  off=$(mut "$tmp/h.etl" "$tmp/$name.etl" "$@") || { bad "$name: mut"; return; }
  batches "$tmp/$name.etl" >"$tmp/$name.batches"
  for c in $cmds; do
    run "$tmp/$name.etl" "$c" >/dev/null 2>"$tmp/$name.err"; rc=$?
    # (grown: the reader passes that record over, it is no batch to copy)
    case $name:$c in grown:*) ;; *:convert_--cswitch_keep|*:convert_--cswitch_compact)
      batches "$tmp/out.etl" | cmp -s - "$tmp/$name.batches" || bad "$name: $c: the batches are not copied as they are";;
    esac
    # Expanded, the damaged switches are not in the output as the input has them: its readers find a loss there
    # (explore25 F3: info and cpu on it exited 0). Copied, they find the batch's own damage.
    case $c in convert*)
      $etlkit info "$tmp/out.etl" >/dev/null 2>&1; orc=$?
      [ "$orc" = 3 ] || bad "$name: $c: info of the output exit $orc, expected 3";;
    esac
    [ "$rc" = 3 ] || bad "$name: $c exit $rc, expected 3"
    grep -q "file offset $off.*$text" "$tmp/$name.err" ||
      bad "$name: $c: no warning '$text' at $off: $(head -c 300 "$tmp/$name.err")"
  done
}

"$etlkit" synth -o "$tmp/h.etl" --cswitch compact --duration 300ms --seed 21 --clock cycles -q --force || bad "synth"
for c in $cmds; do
  run "$tmp/h.etl" "$c" >/dev/null 2>"$tmp/h.err"; rc=$?
  [ "$rc" = 0 ] || bad "undamaged: $c exit $rc: $(head -c 300 "$tmp/h.err")"
done

# F1: one flipped bit of the Size (+0x1000): once ~170 records swallowed as 822 switches, exit 0.
case_ grown "more than its layout's 1128 bytes" size 0x1000
# F2: FirstTimeStamp 700000 cycles late: its last switches come after the batch was written; once the next, sound
# batch was blamed (its offset) and its first switch dropped.
case_ late "after the batch was written" first 700000
grep -q "go back" "$tmp/late.err" && bad "late: the next batch is blamed: $(grep 'go back' "$tmp/late.err" | head -c 300)"
# F3: the last 4-byte record cut to 2 bytes by the Size: once exit 0, no offset anywhere.
case_ cut "runs past the batch's Size" size -2
# A TidTable index past the filled entries: the spec's corrupt record (6.4).
case_ index "TidTable entry past" ridx 5 -1

# The time of a lost switch is nobody's (explore19 F3): a switch whose successor was lost (the chain broken) leaves
# the slice from it unknown, in the per-CPU run (cpu) and the model (switches) alike; it once went to the next thread
# seen (the cut case: thread 524 +386,754 ns of CPU 0's idle time). Damage only takes knowledge away: no thread, and
# no CPU's busy or idle time, may grow; the CPU's unknown time must.
time_of() { # FILE KIND: "T tid ns" per thread, "C cpu busy idle unknown" per CPU (cpu), "T tid ns" from the rows (switches)
  case $2 in
  cpu) $etlkit cpu --json "$1" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
for t in d["threads"]: print("T", t["tid"], t["cpu_ns"])
for c in d["cpus"]: print("C", c["cpu"], c["busy_ns"], c["idle_ns"], c["unknown_ns"])' ;;
  switches) $etlkit switches --json "$1" 2>/dev/null | python3 -c '
import json, sys
s, u = {}, {}
for l in sys.stdin:
    l = l.strip().rstrip(",")
    if not l.startswith("{\"cpu\""): continue
    r = json.loads(l)
    if "new_tid" in r: s[r["new_tid"]] = s.get(r["new_tid"], 0) + r["cpu_usage_ns"]
    else: u[r["cpu"]] = u.get(r["cpu"], 0) + r["cpu_usage_ns"]
for k in sorted(s): print("T", k, s[k])
for k in sorted(u): print("U", k, u[k])' ;;
  esac
}
for kind in cpu switches; do
  time_of "$tmp/h.etl" $kind >"$tmp/h.$kind"
  for name in cut index; do  # (late: its switches before the header time are used, shifted: undetectable)
    time_of "$tmp/$name.etl" $kind >"$tmp/$name.$kind"
    python3 - "$tmp/h.$kind" "$tmp/$name.$kind" <<'PY' || bad "$name: $kind: a lost switch's time went to a thread"
import sys
def rd(f):
    d = {}
    for l in open(f):
        w = l.split(); d[(w[0], w[1])] = [int(x) for x in w[2:]]
    return d
a, b = rd(sys.argv[1]), rd(sys.argv[2])
if not a or not b: sys.exit("no output")
err = ["thread %s: %d -> %d ns" % (k[1], a.get(k, [0])[0], v[0]) for k, v in b.items()
       if k[0] == "T" and v[0] > a.get(k, [0])[0]]
err += ["cpu %s: busy/idle grew %s -> %s" % (k[1], a[k], v) for k, v in b.items()
        if k[0] == "C" and (v[0] > a[k][0] or v[1] > a[k][1])]
grew = any(v[-1] > a.get(k, [0])[-1] for k, v in b.items() if k[0] in "CU")
if not grew: err.append("no CPU's unknown time grew")
sys.exit("; ".join(err[:4]) if err else 0)
PY
  done
done

# F4, F5: fields out of range are no damage of the input's framing: counted (anomalies bad_priority, bad_state, dump's
# summary), the field unknown, never a wrapped priority (base 127 + 1 was -128 in switches, dump and the export).
mut "$tmp/h.etl" "$tmp/prio.etl" bprio 0 127 >/dev/null
"$etlkit" switches --json "$tmp/prio.etl" >"$tmp/prio.json" 2>/dev/null
python3 - "$tmp/prio.json" <<'PY' || bad "prio: a priority outside 0..31 reported"
import json, re, sys
t = open(sys.argv[1]).read()
bad = [m for m in re.findall(r'"[a-z_]*pri[a-z_]*":(-?[0-9]+)', t) if not 0 <= int(m) <= 31]
sys.exit('priorities %s' % sorted(set(bad)) if bad else 0)
PY
"$etlkit" cpu --json "$tmp/prio.etl" 2>/dev/null | grep -q '"bad_priority":[1-9]' || bad "prio: no bad_priority in cpu's anomalies"
"$etlkit" waits "$tmp/prio.etl" 2>/dev/null | grep -q "priority is outside 0..31" || bad "prio: no note in waits"
mut "$tmp/h.etl" "$tmp/state.etl" rstate 63 >/dev/null
"$etlkit" cpu --json "$tmp/state.etl" 2>/dev/null | grep -q '"bad_state":[1-9]' || bad "state: no bad_state in cpu's anomalies"
"$etlkit" dump --format jsonl --expand "$tmp/state.etl" 2>&1 >/dev/null | grep -q "[1-9][0-9]* states past 9" ||
  bad "state: dump's summary does not count it"
"$etlkit" export "$tmp/state.etl" --to sqlite -o "$tmp/state.sqlite" --force >/dev/null 2>&1
if command -v sqlite3 >/dev/null; then
  v=$(sqlite3 "$tmp/state.sqlite" "select value from trace where key='bad_state'" 2>/dev/null)
  [ -n "$v" ] && [ "$v" != 0 ] || bad "state: export's trace table has bad_state '$v'"
fi

[ $fails -eq 0 ] && echo "batch_damage: all passed" && exit 0
echo "batch_damage: $fails failed" >&2; exit 1
