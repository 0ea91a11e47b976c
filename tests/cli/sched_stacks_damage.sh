#!/bin/sh
# sched_stacks_damage.sh ETLKIT - damage only the stack readers meet is told and counted by switches,
# waits --by stack / --by readying-stack, waitchain, export and profile:
#   - explore8 F5: stack records (0x1820, 0x1823..0x1826) whose header type says the other pointer size than
#     the trace's (logfile header PointerSize): a warning at each record's file offset, exit 3, and the stacks
#     read at the trace's pointer size: the same rows and stacks as the undamaged trace's (32-bit trace with
#     64-bit header types, and a 64-bit trace with 32-bit ones; one walker and several);
#   - an Image event with an ImageSize no image can have: a warning at its file offset, exit 3 (it was silent).
# An undamaged trace: exit 0, no warning.
set -u
etlkit=$1
tmp=${KEEP:-$(mktemp -d)}; [ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null 2>&1 || { echo "sched_stacks_damage.sh: skipped: no python3"; exit 77; }
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails+1)); }
for p in 32 64; do
  "$etlkit" synth --quiet --stacks --cswitch full --stack-form both --pointer-size $p --seed 6 --duration 0.5 \
    -o "$tmp/t$p.etl" || { echo "FAIL: synth $p" >&2; exit 1; }
  "$etlkit" dump "$tmp/t$p.etl" --order file --format jsonl \
    --filter 0x1820,0x1823,0x1824,0x1825,0x1826 > "$tmp/t$p.walks" || fail "dump t$p walks"
  "$etlkit" dump "$tmp/t$p.etl" --order file --format jsonl --filter 0x030a,0x1402,0x1403,0x1404 \
    > "$tmp/t$p.images" || fail "dump t$p images"
done
python3 - "$tmp" <<'PY' || fail "damaging the copies"
import json, struct, sys
d = sys.argv[1]
for p in (32, 64):
    b = bytearray(open("%s/t%d.etl" % (d, p), "rb").read())
    size = struct.unpack_from("<I", b, 0)[0]
    at = lambda r: size * r["buf"] + r["off"]
    # ptr: every stack record gets the other pointer size's header type (SYSTEM32 0x01 <-> SYSTEM64 0x02,
    # PERFINFO32 0x10 <-> PERFINFO64 0x11)
    c = bytearray(b)
    offs = []
    for r in map(json.loads, open("%s/t%d.walks" % (d, p))):
        o = at(r)
        assert c[o + 2] == r["htype"]
        c[o + 2] = {0x01: 0x02, 0x02: 0x01, 0x10: 0x11, 0x11: 0x10}[c[o + 2]]
        offs.append(o)
    assert len(offs) > 1000, len(offs)
    open("%s/t%d-ptr.etl" % (d, p), "wb").write(c)
    open("%s/t%d-ptr.offs" % (d, p), "w").write("".join("0x%x\n" % o for o in offs))
    # size: the first Image event of dbghelp.dll (loaded during the trace) gets ImageSize all ones
    c = bytearray(b)
    w = p // 8
    r = next(r for r in map(json.loads, open("%s/t%d.images" % (d, p)))
             if r["fields"]["FileName"].lower().endswith("dbghelp.dll"))
    pl = at(r) + r["size"] - r["len"]
    assert struct.unpack_from("<I" if w == 4 else "<Q", c, pl + w)[0] == r["fields"]["ImageSize"]
    c[pl + w:pl + 2 * w] = b"\xff" * w
    open("%s/t%d-size.etl" % (d, p), "wb").write(c)
    open("%s/t%d-size.off" % (d, p), "w").write("0x%x\n" % at(r))
PY
# run NAME TRACE ARGS...: exit status in $tmp/NAME.rc, stdout and stderr in $tmp/NAME.out, .err
run() {
  name=$1; shift
  "$etlkit" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"; echo $? > "$tmp/$name.rc"
}
rc() { cat "$tmp/$1.rc"; }
for p in 32 64; do
  for th in 1 2; do
    run sw$p "switches" "$tmp/t$p.etl" --csv --threads $th
    run ws$p "waits" "$tmp/t$p.etl" --by stack --threads $th
    run wr$p "waits" "$tmp/t$p.etl" --by readying-stack --json --threads $th
    for n in sw$p ws$p wr$p; do
      [ "$(rc $n)" = 0 ] || fail "t$p undamaged $n --threads $th: exit $(rc $n)"
      ! grep -q warning "$tmp/$n.err" || fail "t$p undamaged $n: $(grep warning "$tmp/$n.err" | head -1)"
    done
    # F5: the same rows and stacks, exit 3, the first records told at their offsets
    run swd "switches" "$tmp/t$p-ptr.etl" --csv --threads $th
    run wsd "waits" "$tmp/t$p-ptr.etl" --by stack --threads $th
    run wrd "waits" "$tmp/t$p-ptr.etl" --by readying-stack --json --threads $th
    [ "$(rc swd)" = 3 ] || fail "t$p-ptr switches --threads $th: exit $(rc swd), not 3"
    [ "$(rc wsd)" = 3 ] || fail "t$p-ptr waits --by stack --threads $th: exit $(rc wsd), not 3"
    [ "$(rc wrd)" = 3 ] || fail "t$p-ptr waits --by readying-stack --threads $th: exit $(rc wrd), not 3"
    cmp -s "$tmp/sw$p.out" "$tmp/swd.out" || fail "t$p-ptr switches --threads $th: rows differ from the undamaged"
    tail -n +2 "$tmp/ws$p.out" > "$tmp/a"; tail -n +2 "$tmp/wsd.out" > "$tmp/b"
    cmp -s "$tmp/a" "$tmp/b" || fail "t$p-ptr waits --by stack --threads $th: differs: $(diff "$tmp/a" "$tmp/b" | head -4)"
    python3 - "$tmp/wr$p.out" "$tmp/wrd.out" <<'PY' || fail "t$p-ptr waits --by readying-stack --json --threads $th differs"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
for j in (a, b):
    for k in ("file", "path", "trace"): j.pop(k, None)
sys.exit(0 if a == b else 1)
PY
    first=$(head -1 "$tmp/t$p-ptr.offs")
    if [ $p = 32 ]; then other=8; own=4; else other=4; own=8; fi
    for n in swd wsd wrd; do
      grep -q "file offset $first, hook 0x18[0-9a-f]*, a stack record with header type 0x[0-9a-f]* ($other-byte pointers) in a trace of $own-byte pointers.*read with the trace's $own-byte pointers" "$tmp/$n.err" ||
        fail "t$p-ptr $n --threads $th: no warning at $first: $(head -3 "$tmp/$n.err")"
    done
    # profile, waitchain and export read the same stacks: the same answers, exit 3, the first record told
    run pf$p profile "$tmp/t$p.etl" --folded --threads $th
    run pfd profile "$tmp/t$p-ptr.etl" --folded --threads $th
    run wc$p waitchain "$tmp/t$p.etl" --thread 788 --threads $th
    run wcd waitchain "$tmp/t$p-ptr.etl" --thread 788 --threads $th
    rm -rf "$tmp/x$p" "$tmp/xd"
    run ex$p export "$tmp/t$p.etl" --to csv -o "$tmp/x$p" --threads $th
    run exd export "$tmp/t$p-ptr.etl" --to csv -o "$tmp/xd" --threads $th
    for n in pf$p wc$p ex$p; do
      [ "$(rc $n)" = 0 ] || fail "t$p undamaged $n --threads $th: exit $(rc $n)"
    done
    for n in pfd wcd exd; do
      [ "$(rc $n)" = 3 ] || fail "t$p-ptr $n --threads $th: exit $(rc $n), not 3"
      grep -q "file offset $first, hook 0x18[0-9a-f]*, a stack record with header type" "$tmp/$n.err" ||
        fail "t$p-ptr $n --threads $th: no warning at $first: $(head -3 "$tmp/$n.err")"
    done
    cmp -s "$tmp/pf$p.out" "$tmp/pfd.out" || fail "t$p-ptr profile --folded --threads $th: stacks differ"
    # (the first line names the file; so does the export's first column)
    tail -n +2 "$tmp/wc$p.out" > "$tmp/a"; tail -n +2 "$tmp/wcd.out" > "$tmp/b"
    cmp -s "$tmp/a" "$tmp/b" || fail "t$p-ptr waitchain --threads $th: chain differs"
    for t in stack sample slice; do
      cut -d, -f2- "$tmp/x$p/$t.csv" > "$tmp/a"; cut -d, -f2- "$tmp/xd/$t.csv" > "$tmp/b"
      cmp -s "$tmp/a" "$tmp/b" || fail "t$p-ptr export --threads $th: $t.csv differs"
    done
    # an impossible ImageSize: told at its offset, exit 3
    run sws "switches" "$tmp/t$p-size.etl" --csv --threads $th
    run wss "waits" "$tmp/t$p-size.etl" --by stack --threads $th
    off=$(cat "$tmp/t$p-size.off")
    for n in sws wss; do
      [ "$(rc $n)" = 3 ] || fail "t$p-size $n --threads $th: exit $(rc $n), not 3"
      grep -q "file offset $off, hook 0x[0-9a-f]*, the Image event of dbghelp.dll at 0x[0-9a-f]*: ImageSize 0xf*, .*: the image is taken to hold no address" "$tmp/$n.err" ||
        fail "t$p-size $n --threads $th: no warning at $off: $(grep warning "$tmp/$n.err" | head -2)"
      [ "$(grep -c warning "$tmp/$n.err")" -eq 1 ] || fail "t$p-size $n: not one warning: $(cat "$tmp/$n.err")"
    done
  done
done
# A dataset of the damaged copies: each trace damaged in the manifest, exit 3, as their single exports (reviewer66 #1).
for k in ptr size; do
  rm -rf "$tmp/ds"
  run ds export "$tmp/t64-$k.etl" "$tmp/t32-$k.etl" "$tmp/t64.etl" --to csv -o "$tmp/ds"
  [ "$(rc ds)" = 3 ] || fail "dataset of t*-$k: exit $(rc ds), not 3"
  python3 - "$tmp/ds/_manifest.json" <<'PY' || fail "dataset of t*-$k: the manifest's damaged flags"
import json, sys
m = {t['id']: t['damaged'] for t in json.load(open(sys.argv[1]))['traces']}
want = {i: not i.startswith('t64.') and i != 't64' for i in m}
sys.exit(0 if len(m) == 3 and m == want else print(m) or 1)
PY
done
[ $fails -eq 0 ] || { echo "$fails failures" >&2; exit 1; }
echo "sched_stacks_damage: ok"
