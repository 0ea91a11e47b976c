#!/bin/sh
# symbols_names.sh ETLKIT - names from PDBs on the scheduler's stacks, whole (exploratory finds):
#   - a C++ name longer than a label's buffer (1,200 bytes; templates often are): waits --by stack --flat kept
#     its first 1,199 bytes, so two functions of one long namespace (::Lock, ::Unlock) were one line, their
#     times summed; waitchain's JSON and text cut the name; switches --json and --csv cut every label at 256
#     bytes. Each is whole, each function its own line.
# Builds a DLL and its PDB with clang and lld-link as symbols.sh does; skips without them, llvm-pdbutil,
# llvm-readobj or jq.
set -u
etlkit=$1
tmp=${KEEP:-$(mktemp -d)}; [ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
expect() { # expect NAME COMMAND...
  name=$1; shift
  if "$@"; then passes=$((passes+1)); else echo "FAIL: $name" >&2; fails=$((fails+1)); fi
}
[ "${ETLKIT_TARGET:-}" = windows ] && { echo "symbols_names.sh: skipped under wine (llvm-pdbutil is Debian's)"; exit 77; }
for t in clang lld-link llvm-readobj jq; do
  command -v $t >/dev/null 2>&1 || { echo "symbols_names.sh: skipped: no $t"; exit 77; }
done
command -v llvm-pdbutil >/dev/null 2>&1 || command -v llvm-pdbutil-14 >/dev/null 2>&1 ||
  { echo "symbols_names.sh: skipped: no llvm-pdbutil"; exit 77; }

# ---- 1. Two functions in a namespace of a 1,400-character name, and a third outside it.
ns="N$(printf '%1400s' '' | tr ' ' x)"
cat > "$tmp/long.cpp" <<EOC
namespace $ns {
__declspec(dllexport) int Lock(int x) { int s = 3; for (int i = 0; i < x; i++) s += i * 3; return s; }
__declspec(dllexport) int Unlock(int x) { int s = 5; for (int i = 0; i < x; i++) s ^= i * 5; return s; }
}
__declspec(dllexport) int WorkerRun(int x) { return $ns::Lock(x) + $ns::Unlock(x); }
EOC
clang --target=x86_64-pc-windows-msvc -g -gcodeview -c "$tmp/long.cpp" -o "$tmp/long.obj" 2>/dev/null &&
  lld-link /dll /noentry /nodefaultlib /debug "/out:$tmp/long.dll" "/pdb:$tmp/long.pdb" "$tmp/long.obj" >/dev/null 2>&1 ||
  { echo "FAIL: building long.dll" >&2; exit 1; }
set -- $(llvm-readobj --file-headers --coff-debug-directory "$tmp/long.dll" | awk '
    /TimeDateStamp:/ && !tds { tds = $NF; gsub(/[()]/, "", tds) }
    /SizeOfImage:/ { size = $2 }
    /PDBGUID:/ { s = $0; sub(/.*\(/, "", s); sub(/\).*/, "", s); split(s, b, " ")
      g = b[4] b[3] b[2] b[1] "-" b[6] b[5] "-" b[8] b[7] "-" b[9] b[10] "-" b[11] b[12] b[13] b[14] b[15] b[16] }
    /PDBAge:/ { age = $2 }
    END { print tds, size, g, age }')
tds=$1; size=$2; guid=$3; age=$4
rvas=$(llvm-readobj --coff-exports "$tmp/long.dll" | awk '/RVA: 0x[1-9A-Fa-f]/ { print $2 }' |
  while read -r r; do printf '0x%x,' $((r + 4)); done); rvas=${rvas%,}
key=$(printf '%s%X' "$(echo "$guid" | tr -d - | tr a-f A-F)" "$age")
mkdir -p "$tmp/store/long.pdb/$key" && cp "$tmp/long.pdb" "$tmp/store/long.pdb/$key/"
"$etlkit" synth --quiet --stacks --duration 0.5 --seed 3 -o "$tmp/t.etl" \
  --modules "long.dll,0x180000000,$size,$tds,$guid,$age,long.pdb,$rvas" || { echo "FAIL: synth --modules" >&2; exit 1; }

# ---- 2. waits --by stack --flat: one line per function, each name whole.
for by in stack readying-stack; do
  "$etlkit" waits "$tmp/t.etl" --by $by --flat --json --symbols "$tmp/store" > "$tmp/f.json" 2>/dev/null
  got=$(jq -r '[.functions[] | .frame | select(startswith("long.dll!"))] | sort | map(sub("N x+"; "N~")) | join(" ")' \
    "$tmp/f.json" | sed 's/Nxx*/N~/g')
  expect "waits --by $by --flat --symbols: Lock, Unlock and WorkerRun on lines of their own, whole (got: $got)" \
    [ "$got" = "long.dll!N~::Lock long.dll!N~::Unlock long.dll!WorkerRun" ]
  expect "waits --by $by --flat --symbols: the long names whole ($(jq '[.functions[].frame | length] | max' "$tmp/f.json") bytes)" \
    jq -e --arg ns "$ns" '[.functions[].frame | select(. == "long.dll!\($ns)::Lock" or . == "long.dll!\($ns)::Unlock")] | length == 2' "$tmp/f.json" >/dev/null
done

# ---- 3. waitchain --json and text: a long name whole (the threads with the longest waits until one holds it).
"$etlkit" waits "$tmp/t.etl" --json > "$tmp/w.json"
found=0
for tid in $(jq -r '.threads | sort_by(-.wait_ns) | .[:12][] | .tid' "$tmp/w.json"); do
  "$etlkit" waitchain "$tmp/t.etl" --thread "$tid" --frames 0 --json --symbols "$tmp/store" > "$tmp/c.json" 2>/dev/null
  jq -e '[.. | objects | (.blocking_stack, .readier_stack) | arrays | .[] | select(startswith("long.dll!N"))] | length > 0' \
    "$tmp/c.json" > /dev/null || continue
  found=1
  expect "waitchain --json (tid $tid): each long name whole, +0x4" jq -e --arg ns "$ns" \
    '[.. | objects | (.blocking_stack, .readier_stack) | arrays | .[] | select(startswith("long.dll!N"))] |
     all(. == "long.dll!\($ns)::Lock+0x4" or . == "long.dll!\($ns)::Unlock+0x4")' "$tmp/c.json" > /dev/null
  "$etlkit" waitchain "$tmp/t.etl" --thread "$tid" --frames 0 --symbols "$tmp/store" > "$tmp/c.txt" 2>/dev/null
  expect "waitchain text (tid $tid): the long names whole" grep -Eq "long\\.dll!${ns}::(Lock|Unlock)\\+0x4" "$tmp/c.txt"
  break
done
expect "waitchain: a chain with a frame of the long names found" [ $found = 1 ]

# ---- 4. switches --json and --csv: the long names whole (+0x4), both functions told apart.
"$etlkit" switches "$tmp/t.etl" --json --symbols "$tmp/store" > "$tmp/s.json" 2>/dev/null
expect "switches --json: every long.dll frame whole" jq -e -s --arg ns "$ns" '
  [.[] | (.new_thread_stack, .readying_thread_stack) | arrays | .[] | select(startswith("long.dll!"))] | group_by(.) |
  map(.[0]) == ["long.dll!\($ns)::Lock+0x4", "long.dll!\($ns)::Unlock+0x4", "long.dll!WorkerRun+0x4"]' "$tmp/s.json" >/dev/null
"$etlkit" switches "$tmp/t.etl" --csv --symbols "$tmp/store" 2>/dev/null | tr '/,' '\n\n' | grep '^long\.dll!' | sort -u |
  sed "s/$ns/N~/" > "$tmp/s.csv"
expect "switches --csv: every long.dll frame whole ($(tr '\n' ' ' < "$tmp/s.csv" | cut -c1-300))" \
  [ "$(tr '\n' ' ' < "$tmp/s.csv")" = "long.dll!N~::Lock+0x4 long.dll!N~::Unlock+0x4 long.dll!WorkerRun+0x4 " ]

# ---- 5. profile --folded and --butterfly, export's stack.symbol: the long names whole (profile's labels were cut
#      at 1,099 bytes, the export's at 1,099 and 1,199: Lock and Unlock one frame of the flame graph, one function).
"$etlkit" profile "$tmp/t.etl" --folded --symbols "$tmp/store" 2>/dev/null | tr ';' '\n' | sed 's/ [0-9]*$//' |
  grep '^long\.dll!' | sort -u | sed "s/$ns/N~/" > "$tmp/p.txt"
expect "profile --folded: Lock and Unlock frames of their own, whole ($(tr '\n' ' ' < "$tmp/p.txt" | cut -c1-300))" \
  [ "$(tr '\n' ' ' < "$tmp/p.txt")" = "long.dll!N~::Lock long.dll!N~::Unlock long.dll!WorkerRun " ]
"$etlkit" profile "$tmp/t.etl" --json --symbols "$tmp/store" --butterfly "long.dll!$ns::Lock" > "$tmp/b.json" 2>/dev/null
got=$(jq -r '[.callers[], .callees[] | .function | select(startswith("long.dll!"))] | unique | join(" ")' "$tmp/b.json" |
  sed "s/$ns/N~/g")
expect "profile --butterfly: the long name found ($(jq .total "$tmp/b.json") samples), its neighbours' names whole ($got)" \
  jq -e --arg ns "$ns" '.total > 0 and ([.callers[], .callees[] | .function | select(startswith("long.dll!N"))] |
    all(. == "long.dll!\($ns)::Lock" or . == "long.dll!\($ns)::Unlock"))' "$tmp/b.json" >/dev/null
if command -v sqlite3 >/dev/null 2>&1; then
  "$etlkit" export "$tmp/t.etl" --to sqlite -o "$tmp/e.db" --symbols "$tmp/store" 2>/dev/null
  got=$(sqlite3 "$tmp/e.db" "SELECT DISTINCT replace(symbol, '$ns', 'N~') FROM stack WHERE symbol LIKE 'long.dll!%' ORDER BY 1" |
    tr '\n' ' ')
  expect "export stack.symbol: each long name whole ($got)" \
    [ "$got" = "long.dll!N~::Lock+0x4 long.dll!N~::Unlock+0x4 long.dll!WorkerRun+0x4 " ]
fi
"$etlkit" profile "$tmp/t.etl" --json --symbols "$tmp/store" > "$tmp/pj.json" 2>/dev/null
"$etlkit" profile "$tmp/t.etl" --json --by function --symbols "$tmp/store" > "$tmp/pb.json" 2>/dev/null
expect "profile --json: the functions' and the pivot's long names whole (cut at 255 bytes before)" jq -e -s --arg ns "$ns" '
  ([.[0].functions[].function | select(startswith("long.dll!N"))] | length > 0 and
     all(. == "long.dll!\($ns)::Lock+0x4" or . == "long.dll!\($ns)::Unlock+0x4")) and
  ([.[1].rows[].group | select(startswith("long.dll!N"))] | length > 0 and
     all(. == "long.dll!\($ns)::Lock+0x4" or . == "long.dll!\($ns)::Unlock+0x4"))' "$tmp/pj.json" "$tmp/pb.json" >/dev/null
"$etlkit" export "$tmp/t.etl" --to perfetto -o "$tmp/e.pftrace" --symbols "$tmp/store" 2>/dev/null
expect "export --to perfetto: the interned function names whole (cut at 488 bytes before)" \
  [ "$(LC_ALL=C grep -a -c "long\.dll!$ns::Unlock" "$tmp/e.pftrace")" -gt 0 ]

# ---- 6. ETLKIT_LLVM_PDBUTIL naming no file: said, each PDB unread, never the llvm-pdbutil of PATH in its place.
ETLKIT_LLVM_PDBUTIL="$tmp/no-such-tool" "$etlkit" profile "$tmp/t.etl" --json --symbols "$tmp/store" >"$tmp/x.json" \
  2>"$tmp/x.err"
expect "ETLKIT_LLVM_PDBUTIL naming no file: told, no name read by another tool" sh -c \
  "grep -q 'ETLKIT_LLVM_PDBUTIL names .*no-such-tool, which cannot be run' '$tmp/x.err' && ! grep -q 'long.dll!N' '$tmp/x.json'"

echo "symbols_names: $passes passed, $fails failed"
[ "$fails" = 0 ]
