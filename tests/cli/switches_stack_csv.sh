#!/bin/sh
# switches_stack_csv.sh ETLKIT - switches --csv's stack cells read back exactly: the frames are joined by '/', and a
# '/' or '%' inside a frame's label (a C++ operator/ or operator%, from a PDB) is written %2F or %25, so that
# splitting a cell at '/' and percent-decoding each part gives the frames of the row's JSON array, in order. The
# label 'ops.dll!operator/+0x4' was written as is: a reader split it into two frames, 'ops.dll!operator' and '+0x4'.
# Builds a DLL and its PDB with clang and lld-link as symbols.sh does; skips without them, llvm-pdbutil,
# llvm-readobj or python3.
set -u
etlkit=$1
tmp=${KEEP:-$(mktemp -d)}; [ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
expect() { # expect NAME COMMAND...
  name=$1; shift
  if "$@"; then passes=$((passes+1)); else echo "FAIL: $name" >&2; fails=$((fails+1)); fi
}
[ "${ETLKIT_TARGET:-}" = windows ] && { echo "switches_stack_csv.sh: skipped under wine (llvm-pdbutil is Debian's)"; exit 77; }
for t in clang lld-link llvm-readobj python3; do
  command -v $t >/dev/null 2>&1 || { echo "switches_stack_csv.sh: skipped: no $t"; exit 77; }
done
command -v llvm-pdbutil >/dev/null 2>&1 || command -v llvm-pdbutil-14 >/dev/null 2>&1 ||
  { echo "switches_stack_csv.sh: skipped: no llvm-pdbutil"; exit 77; }

# ---- A DLL whose functions' names hold '/' and '%'.
cat > "$tmp/ops.cpp" <<'EOC'
struct V { int v; };
__declspec(dllexport) V operator/(V a, V b) { V r = {3}; for (int i = 0; i < a.v; i++) r.v += i / (b.v | 1); return r; }
__declspec(dllexport) V operator%(V a, V b) { V r = {5}; for (int i = 0; i < a.v; i++) r.v ^= i % (b.v | 1); return r; }
__declspec(dllexport) int Run(int x) { V a = {x}, b = {x + 1}; return (a / b).v + (a % b).v; }
EOC
clang --target=x86_64-pc-windows-msvc -g -gcodeview -c "$tmp/ops.cpp" -o "$tmp/ops.obj" 2>/dev/null &&
  lld-link /dll /noentry /nodefaultlib /debug "/out:$tmp/ops.dll" "/pdb:$tmp/ops.pdb" "$tmp/ops.obj" >/dev/null 2>&1 ||
  { echo "FAIL: building ops.dll" >&2; exit 1; }
set -- $(llvm-readobj --file-headers --coff-debug-directory "$tmp/ops.dll" | awk '
    /TimeDateStamp:/ && !tds { tds = $NF; gsub(/[()]/, "", tds) }
    /SizeOfImage:/ { size = $2 }
    /PDBGUID:/ { s = $0; sub(/.*\(/, "", s); sub(/\).*/, "", s); split(s, b, " ")
      g = b[4] b[3] b[2] b[1] "-" b[6] b[5] "-" b[8] b[7] "-" b[9] b[10] "-" b[11] b[12] b[13] b[14] b[15] b[16] }
    /PDBAge:/ { age = $2 }
    END { print tds, size, g, age }')
tds=$1; size=$2; guid=$3; age=$4
rvas=$(llvm-readobj --coff-exports "$tmp/ops.dll" | awk '/RVA: 0x[1-9A-Fa-f]/ { print $2 }' |
  while read -r r; do printf '0x%x,' $((r + 4)); done); rvas=${rvas%,}
key=$(printf '%s%X' "$(echo "$guid" | tr -d - | tr a-f A-F)" "$age")
mkdir -p "$tmp/store/ops.pdb/$key" && cp "$tmp/ops.pdb" "$tmp/store/ops.pdb/$key/"
"$etlkit" synth --quiet --stacks --duration 0.3 --seed 3 -o "$tmp/t.etl" \
  --modules "ops.dll,0x180000000,$size,$tds,$guid,$age,ops.pdb,$rvas" || { echo "FAIL: synth --modules" >&2; exit 1; }

"$etlkit" switches "$tmp/t.etl" --json --symbols "$tmp/store" > "$tmp/s.json" 2>/dev/null
expect "switches --json exits 0" [ $? = 0 ]
"$etlkit" switches "$tmp/t.etl" --csv --symbols "$tmp/store" > "$tmp/s.csv" 2>/dev/null
expect "switches --csv exits 0" [ $? = 0 ]

# ---- Every row's two stack cells, split at '/' and decoded, are its JSON arrays; the operators are among them.
expect "switches --csv: each stack cell, split at '/' and percent-decoded, is the row's JSON stack" \
  python3 - "$tmp/s.json" "$tmp/s.csv" <<'PY'
import csv, json, sys
from urllib.parse import unquote
rows = [json.loads(l) for l in open(sys.argv[1])]
with open(sys.argv[2], encoding="utf-8-sig", newline="") as f:
    cells = list(csv.DictReader(f))
assert len(rows) == len(cells), (len(rows), len(cells))
seen = set()
for r, c in zip(rows, cells):
    for col, key in (("New Thread Stack", "new_thread_stack"), ("Readying Thread Stack", "readying_thread_stack")):
        want = r.get(key)
        got = [unquote(p) for p in c[col].split("/")] if c[col] else None
        assert got == want, (c["CPU"], c["Switch-In Time (s)"], col, c[col][:300], want)
        seen.update(x for x in want or () if x.startswith("ops.dll!"))
assert {"ops.dll!operator/+0x4", "ops.dll!operator%+0x4"} <= seen, sorted(seen)
PY
expect "switches --csv: the labels' '/' and '%' written %2F and %25" \
  sh -c "grep -q 'ops.dll!operator%2F+0x4' '$tmp/s.csv' && grep -q 'ops.dll!operator%25+0x4' '$tmp/s.csv' &&
         ! grep -q 'operator/' '$tmp/s.csv'"
expect "switches --help says how a frame's '/' and '%' are written" \
  sh -c "'$etlkit' switches --help | tr '\n' ' ' | grep -q '%2F'"

echo "switches_stack_csv: $passes passed, $fails failed"
[ "$fails" = 0 ]
