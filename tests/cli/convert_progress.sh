#!/bin/sh
# convert_progress.sh ETLKIT - on a terminal, convert's progress bar on a damaged input says why it starts again
# (explore26 F5): the second writing, which marks the losses in the output, ran the bar from 0 % a second time with
# no word until the warnings at the end. The bar shows for inputs of 64 MiB and more, on a terminal (script(1)).
set -u
etlkit=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if ! command -v script >/dev/null 2>&1; then echo "convert_progress: skipped: no script(1) to give a terminal"; exit 0; fi
if [ "${ETLKIT_TARGET:-}" = windows ]; then echo "convert_progress: skipped: no terminal under wine"; exit 0; fi
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails+1)); }
"$etlkit" synth -q --preset large --size 70M -o "$tmp/in.etl" || bad "synth"
# Buffer 40's records zeroed (its header kept): the reading loses them.
python3 - "$tmp/in.etl" <<'PY'
import struct, sys
with open(sys.argv[1], 'r+b') as f:
    bs = struct.unpack('<I', f.read(4))[0]
    f.seek(40 * bs + 72)
    f.write(b'\0' * (bs - 72))
PY
tty() { script -qec "$*" /dev/null | tr '\r' '\n'; }
tty "'$etlkit' convert '$tmp/in.etl' -o '$tmp/out.etl'" > "$tmp/log"
grep -aq "^\[#*\.*\] *[0-9]*%  writing again: records were lost (told at the end)" "$tmp/log" || bad "damaged: the second writing's bar has no label"
grep -aq "the output is written again" "$tmp/log" || bad "damaged: the warning"
# Undamaged: one bar, no label.
"$etlkit" synth -q --preset large --size 70M -o "$tmp/ok.etl" || bad "synth"
tty "'$etlkit' convert '$tmp/ok.etl' -o '$tmp/ok-out.etl'" > "$tmp/log2"
grep -aq "^\[#*\.*\] *[0-9]*%" "$tmp/log2" || bad "undamaged: no bar (script gives no terminal?)"
! grep -aq "writing again" "$tmp/log2" || bad "undamaged: labelled"
[ "$fails" = 0 ] && echo "convert_progress: ok"
[ "$fails" = 0 ]
