#!/bin/sh
# spinlocks_cut.sh ETLKIT - a file cut short holds each CPU only until its last record: spinlocks' rates and
# % CPU are over that CPU time (JSON known_cpu_ns, less than window_cpu_ns), said in a note (text: stdout; CSV:
# stderr; the report page), never over the window's whole time, where no event could be seen. A whole trace: known = window, no note.
set -u
etlkit=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails+1)); }
command -v python3 >/dev/null 2>&1 || { echo "spinlocks_cut.sh: skipped: no python3"; exit 77; }

"$etlkit" synth --preset small --seed 7 -o "$tmp/s.etl" --force 2>/dev/null || { echo "FAIL: synth"; exit 1; }
# The first 11 of its 64 KiB buffers and 100 bytes of the 12th: well under the 2 s session.
head -c $((11 * 65536 + 100)) "$tmp/s.etl" > "$tmp/cut.etl"

check() { # FILE EXIT CUT(1|0)
  "$etlkit" spinlocks --json "$1" >"$tmp/j" 2>/dev/null; rc=$?
  [ "$rc" = "$2" ] || { bad "spinlocks --json $1: exit $rc, expected $2"; return; }
  python3 - "$tmp/j" "$3" <<'PY' || bad "spinlocks --json $1: figures not over the time the file holds"
import json, sys
j = json.load(open(sys.argv[1])); cut = sys.argv[2] == "1"
w, k = j["window_cpu_ns"], j["known_cpu_ns"]
assert (0 < k < w * 0.8) if cut else (k == w), (w, k)
t = j["total"]; ncpu = j["num_cpus"]
# acquisitions/s = estimate x NCPU / known CPU s; % CPU = wait cycles / (known ns x MHz / 1000)
rate = t["est_acquisitions"] * ncpu / (k / 1e9)
assert abs(t["rates_per_s"]["acquisitions"] - rate) <= 0.0015 + rate * 1e-9, (t["rates_per_s"], rate)
PY
  "$etlkit" spinlocks "$1" >"$tmp/t" 2>/dev/null
  n=$(grep -c '^Note: the file is cut short: the rates and % CPU are over the' "$tmp/t")
  [ "$n" = "$3" ] || bad "spinlocks $1: $n cut notes in the text, expected $3"
  "$etlkit" spinlocks --csv "$1" >/dev/null 2>"$tmp/e"
  n=$(grep -c 'note: .*the file is cut short: the rates' "$tmp/e")
  [ "$n" = "$3" ] || bad "spinlocks --csv $1: $n cut notes on stderr, expected $3"
  "$etlkit" report "$1" -o "$tmp/r.html" --force >/dev/null 2>&1
  n=$(grep -c '<p class="warn">The file is cut short: the rates and % CPU are over the' "$tmp/r.html")
  [ "$n" = "$3" ] || bad "report $1: $n cut notes on the page, expected $3"
}
check "$tmp/s.etl" 0 0
check "$tmp/cut.etl" 3 1
# A window past the file's end: no CPU time held, no rate, and the reason said.
"$etlkit" spinlocks --range 1.5 1.6 "$tmp/cut.etl" 2>/dev/null | grep -q 'CPU spent acquiring - (the file holds none of the window); collision -; - acquisitions/s' ||
  bad "spinlocks --range past the cut: $(grep acquisitions/s "$tmp/t")"

[ "$fails" = 0 ] || exit 1
echo "spinlocks_cut: ok"
