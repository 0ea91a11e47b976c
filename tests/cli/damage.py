"""damage.py IN OUT ACTION ARGS - one controlled damage of an uncompressed ETL copy, for the damage tests.

Buffers are walked by BufferSize; BUF is a buffer's index in file order, or cN for CPU N's middle buffer.
  ts BUF HOOK K DELTA   add DELTA ticks to the TimeStamp of the K-th record with HOOK (hex) in BUF
  first BUF K DELTA     the same for the FirstTimeStamp of the K-th compact batch (hook 0x0525) in BUF
  proc BUF N            set BUF's ProcessorIndex to N
  seq BUF N             set BUF's SequenceNumber to N
  bsize BUF DELTA       add DELTA to BUF's BufferSize (a compressed file's buffers each have their own)
  dup BUF               write BUF a second time, right after itself
  size BUF HOOK K SIZE  set the Size of the K-th record with HOOK (hex) in BUF to SIZE
  rehook HOOK NEW N     give every N-th record with HOOK (hex) in the file hook NEW (hex): events dropped
Prints the file offset of what it changed.
"""
import struct, sys

HDR = 0x48


def buffers(d):
    out, off = [], 0
    while off + HDR <= len(d):
        size, = struct.unpack_from('<I', d, off)
        seq, = struct.unpack_from('<Q', d, off + 0x18)
        proc, = struct.unpack_from('<H', d, off + 0x28)
        fill, = struct.unpack_from('<I', d, off + 0x30)
        out.append(dict(off=off, size=size, seq=seq, cpu=proc & 0x7FF, fill=fill))
        if size < HDR:
            break
        off += size
    return out


def records(d, b):
    """(offset, hook, ts offset, payload offset) of the kernel records (SYSTEM/PERFINFO headers) of buffer b."""
    o, end = b['off'] + HDR, b['off'] + b['fill']
    while o + 8 <= end:
        m, = struct.unpack_from('<I', d, o)
        if m == 0xFFFFFFFF:
            break
        ht, ver = (m >> 16) & 0xFF, m & 0xFFFF
        size, hook = struct.unpack_from('<HH', d, o + 4)
        if ht in (0x10, 0x11):      # PERFINFO: time at 8, header 0x10 + PEBS + PMC counters
            yield o, hook, o + 8, o + 0x10 + (8 if ver & 0x8000 else 0) + 8 * ((ver >> 8) & 7)
        elif ht in (0x01, 0x02):    # SYSTEM
            yield o, hook, o + 0x10, o + 0x20
        if size == 0:
            break
        o += (size + 7) & ~7


def main():
    src, dst, action, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    d = bytearray(open(src, 'rb').read())
    bs = buffers(d)

    def buf(s):
        if s.startswith('c'):
            mine = [b for b in bs[1:] if b['cpu'] == int(s[1:])]
            return mine[len(mine) // 2]
        return bs[int(s)]

    if action in ('ts', 'first'):
        b = buf(args[0])
        hook = int(args[1], 16) if action == 'ts' else 0x0525
        k, delta = (int(args[2]), int(args[3])) if action == 'ts' else (int(args[1]), int(args[2]))
        recs = [r for r in records(d, b) if r[1] == hook]
        o, _, ts_at, pl = recs[k]
        at = ts_at if action == 'ts' else pl
        t, = struct.unpack_from('<Q', d, at)
        struct.pack_into('<Q', d, at, t + delta)
        print(hex(o))
    elif action == 'proc':
        b = buf(args[0])
        struct.pack_into('<H', d, b['off'] + 0x28, int(args[1]))
        print(hex(b['off']))
    elif action == 'seq':
        b = buf(args[0])
        struct.pack_into('<Q', d, b['off'] + 0x18, int(args[1]))
        print(hex(b['off']))
    elif action == 'bsize':
        b = buf(args[0])
        struct.pack_into('<I', d, b['off'], b['size'] + int(args[1]))
        print(hex(b['off']))
    elif action == 'dup':
        b = buf(args[0])
        d[b['off'] + b['size']:b['off'] + b['size']] = d[b['off']:b['off'] + b['size']]
        print(hex(b['off'] + b['size']))
    elif action == 'size':
        b = buf(args[0])
        o = [r for r in records(d, b) if r[1] == int(args[1], 16)][int(args[2])][0]
        struct.pack_into('<H', d, o + 4, int(args[3], 0))
        print(hex(o))
    elif action == 'rehook':
        hook, new, n = int(args[0], 16), int(args[1], 16), int(args[2])
        recs = [r[0] for b in bs[1:] for r in records(d, b) if r[1] == hook][::n]
        for o in recs:
            struct.pack_into('<H', d, o + 6, new)
        print(hex(recs[0]) if recs else 'none')
    else:
        sys.exit('damage.py: unknown action ' + action)
    open(dst, 'wb').write(d)


main()
