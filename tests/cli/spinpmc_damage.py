#!/usr/bin/env python3
"""spinpmc_damage.py ETLKIT IN OUT OP ARGS...: (from explore10's dmg10.py) damage an uncompressed etlkit trace (buffers at i*BufferSize).
  pmcset N K VALUE     set counter K of the N-th record with PMC (file order, `dump --order file`) to VALUE
  pmcxor N K MASK      xor counter K of the N-th PMC record with MASK
  pmcall K VALUE       counter K of every PMC record set to VALUE (a PMU that never counts)
  spinset N FIELD VAL  set a SpinLock (0x0529, v2, 64-bit) field of the N-th spinlock record:
                       field offsets after the header: lock 0, caller 8, acquire 16, release 24, wait 32(u32),
                       spins 36(u32), tid 40, irq 44, irql 48(u8), depth 49(u8), flags 50(u8: AcquireMode low bits, ExecuteDpc, ExecuteIsr) ...  (see KE §7)
  cut BYTES            keep the first BYTES bytes
  dropbuf I            remove buffer I (BufferSize bytes) from the file
  zerobuf I            zero buffer I's bytes after its 72-byte header
  flip OFFSET MASK     xor one byte at a file offset
"""
import sys, json, struct, subprocess
E = sys.argv.pop(1)
src, dst, op = sys.argv[1], sys.argv[2], sys.argv[3]; args = sys.argv[4:]
d = bytearray(open(src, 'rb').read())
bs = struct.unpack_from('<I', d, 0)[0]  # WMI_BUFFER_HEADER BufferSize at 0
def recs(filt=None, want=None):
    cmd = [E, 'dump', src, '--order', 'file', '--format', 'jsonl']
    if filt: cmd += ['--filter', filt]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    for line in p.stdout:
        o = json.loads(line)
        if want is None or want(o): yield o
    p.wait()
def nth(it, n):
    for i, o in enumerate(it):
        if i == n: return o
    raise SystemExit('not enough records')
hsz = lambda o: o['size'] - o['len'] - 8 * len(o.get('pmc', []))
if op in ('pmcset', 'pmcxor'):
    n, k, v = int(args[0]), int(args[1]), int(args[2], 0)
    o = nth(recs(None, lambda o: 'pmc' in o), n)
    at = o['buf'] * bs + o['off'] + hsz(o) + 8 * k
    old = struct.unpack_from('<Q', d, at)[0]
    new = v if op == 'pmcset' else old ^ v
    struct.pack_into('<Q', d, at, new)
    print('record', o['buf'], o['off'], 'cpu', o['cpu'], 'ns', o['ns'], 'counter', k, old, '->', new, 'file offset', hex(at), file=sys.stderr)
elif op == 'pmcall':   # pmcall K VALUE: counter K of every PMC record set to VALUE
    k, v = int(args[0]), int(args[1], 0); n = 0
    for o in recs(None, lambda o: 'pmc' in o):
        struct.pack_into('<Q', d, o['buf'] * bs + o['off'] + hsz(o) + 8 * k, v); n += 1
    print('set', n, 'records', file=sys.stderr)
elif op == 'spinset':
    n, field, v = int(args[0]), args[1], int(args[2], 0)
    offs = {'lock': (0, 'Q'), 'caller': (8, 'Q'), 'acquire': (16, 'Q'), 'release': (24, 'Q'), 'wait': (32, 'I'),
            'spins': (36, 'I'), 'tid': (40, 'I'), 'irq': (44, 'I'), 'irql': (48, 'B'), 'depth': (49, 'B'), 'flags': (50, 'B')}
    o = nth(recs('SpinLock'), n)
    off, f = offs[field]
    at = o['buf'] * bs + o['off'] + hsz(o) + off
    old = struct.unpack_from('<' + f, d, at)[0]; struct.pack_into('<' + f, d, at, v)
    print('spinlock', o['buf'], o['off'], 'ns', o['ns'], field, old, '->', v, 'file offset', hex(at), o.get('fields'), file=sys.stderr)
elif op == 'cut':
    d = d[:int(args[0], 0)]
elif op == 'dropbuf':
    i = int(args[0]); d = d[:i * bs] + d[(i + 1) * bs:]
elif op == 'zerobuf':
    i = int(args[0]); d[i * bs + 72:(i + 1) * bs] = bytes(bs - 72)
elif op == 'flip':
    d[int(args[0], 0)] ^= int(args[1], 0)
else:
    raise SystemExit('unknown op')
open(dst, 'wb').write(d)
