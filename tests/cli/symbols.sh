#!/bin/sh
# symbols.sh ETLKIT SAMPLES - function names from PDBs off Windows (issue 23, part 2).
#
# Builds four small Windows DLLs and their PDBs here (clang --target=x86_64-pc-windows-msvc, lld-link
# /debug), reads each one's TimeDateStamp, SizeOfImage, RSDS record and exports with llvm-readobj (not with
# etlkit's reader), and synthesizes a trace whose app DLLs are these (`synth --stacks --modules`):
#   app.dll    its PDB in a symbol store (app.pdb/<GUID><AGE>/app.pdb), identity logged (DbgID_RSDS)
#   other.dll  identity logged, no PDB anywhere: module+offset
#   bad.dll    identity logged with a GUID its PDB (in the store under that GUID, and flat) does not carry:
#              module+offset, never a name
#   pe.dll     no identity logged: found through its binary in the store (pe.dll/<TIMESTAMP><SIZE>/pe.dll),
#              whose debug directory names pe.pdb, flat beside it
# Then `profile --folded --symbols`, `profile --json --symbols`, `profile --butterfly NAME` and the export's
# stack.symbol column must name exactly the functions the truth's stacks hold (each frame at an export's RVA
# + 4), and the real perfview-x64-compressed.etl with an empty symbol path gives module+offset or an address
# for every frame. The scheduler's stacks too: switches --csv/--json, waits --by stack|readying-stack (tree
# and --flat, text and JSON: the times of the run without symbols) and waitchain --json name each frame as
# the truth's CSwitch and ReadyThread walks say (sched_stacks_check.py --names; needs python3). A symbol path
# entry that is not a folder: --symbols fails every command that takes it (exit 1, one line), ETLKIT_SYMBOL_PATH
# warns once and names with the others; a fake llvm-pdbutil that hangs is stopped after ETLKIT_SYMBOL_TIMEOUT. Skips with one line when clang, lld-link, llvm-pdbutil, llvm-readobj or jq are missing,
# and for the Windows binary under wine (it cannot run Debian's llvm-pdbutil) the part that needs names.
set -u
etlkit=$1; samples=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
expect() { # expect NAME COMMAND...
  name=$1; shift
  if "$@"; then passes=$((passes+1)); else echo "FAIL: $name" >&2; fails=$((fails+1)); fi
}
same() { # same NAME FILE1 FILE2
  if cmp -s "$2" "$3"; then passes=$((passes+1)); else
    echo "FAIL: $1" >&2; diff "$2" "$3" | head -10 >&2; fails=$((fails+1)); fi
}
finish() { echo "symbols: $passes passed, $fails failed"; [ "$fails" = 0 ]; exit $?; }

command -v jq >/dev/null 2>&1 || { echo "symbols.sh: skipped: no jq"; exit 77; }

# ---- 1. The real sample with a symbol path that holds nothing: every frame module+offset or an address.
mkdir "$tmp/empty"
real="$samples/perfview-x64-compressed.etl"
"$etlkit" profile "$real" --folded --symbols "$tmp/empty" > "$tmp/real.folded" 2> "$tmp/real.err"
expect "real sample: profile --folded --symbols exits 0" [ $? = 0 ]
# every frame (after the process and thread fields) is name+0xHEX, never name!function
awk -F';' '{ sub(/ [0-9]+$/, ""); for (i = 3; i <= NF; i++) if ($i !~ /^[^!]+\+0x[0-9a-f]+$/) { print $i; exit 1 } }' \
  "$tmp/real.folded" > "$tmp/real.bad"
expect "real sample: every frame module+offset or Unknown+address (first other: $(head -1 "$tmp/real.bad"))" \
  [ ! -s "$tmp/real.bad" ]
"$etlkit" profile "$real" --folded > "$tmp/real.plain"
same "real sample: --symbols with no PDB changes nothing in --folded" "$tmp/real.plain" "$tmp/real.folded"
expect "real sample: stderr counts the modules without symbols" grep -Eq '^etlkit: [0-9]+ modules? without symbols: ' "$tmp/real.err"
ETLKIT_SYMBOL_PATH="$tmp/empty" "$etlkit" profile "$real" --json > "$tmp/real.json" 2>/dev/null
expect "real sample: ETLKIT_SYMBOL_PATH alone turns symbols on (JSON key)" \
  jq -e '.symbols.modules_without_symbols > 0 and ([.functions[] | select(.symbol != null)] | length) == 0' "$tmp/real.json" >/dev/null

# ---- 1b. A symbol path entry that is not a folder. Of --symbols: every command with it fails before reading
# the trace (exit 1, the input status), one line naming the entry and why. Of ETLKIT_SYMBOL_PATH: one warning
# line, the other entries used. Empty entries are nothing.
: > "$tmp/afile"
for cmd in "profile" "profile --folded" "report -o $tmp/r0.html" "export --to csv -o $tmp/csv0" \
           "export --dataset --to csv -o $tmp/ds0" "export --to perfetto -o $tmp/r0.pb" "switches --json" \
           "waits --by stack" "waitchain --thread 4"; do
  $etlkit $cmd --symbols "$tmp/nosuch" "$real" > "$tmp/miss.out" 2> "$tmp/miss.err"
  rc=$?
  expect "$cmd --symbols MISSING: exit 1 (got $rc), nothing on stdout, no output file" \
    sh -c "[ $rc = 1 ] && [ ! -s '$tmp/miss.out' ] && [ ! -e '$tmp/r0.html' ] && [ ! -e '$tmp/csv0' ] && [ ! -e '$tmp/ds0' ] &&
           [ ! -e '$tmp/r0.pb' ]"
  c1=${cmd%% *}
  expect "$cmd --symbols MISSING: the one line ($(head -c 200 "$tmp/miss.err"))" \
    sh -c "[ \"\$(cat '$tmp/miss.err')\" = 'etlkit $c1: --symbols: $tmp/nosuch: No such file or directory' ]"
done
"$etlkit" profile "$real" --folded --symbols "$tmp/empty;$tmp/afile" > /dev/null 2> "$tmp/miss.err"
expect "--symbols with a file among the folders: exit 1, the entry and why" \
  sh -c "[ $? = 1 ] && [ \"\$(cat '$tmp/miss.err')\" = 'etlkit profile: --symbols: $tmp/afile: Not a directory' ]"
"$etlkit" profile "$real" --folded --symbols ";$tmp/empty;;" > "$tmp/real.empties" 2>/dev/null
expect "--symbols with empty entries: exit 0" [ $? = 0 ]
same "--symbols with empty entries: as one folder" "$tmp/real.folded" "$tmp/real.empties"
ETLKIT_SYMBOL_PATH="$tmp/nosuch;$tmp/empty" "$etlkit" profile "$real" --folded > "$tmp/real.env" 2> "$tmp/env.err"
expect "ETLKIT_SYMBOL_PATH with a missing entry: exit 0" [ $? = 0 ]
same "ETLKIT_SYMBOL_PATH with a missing entry: the other entries used" "$tmp/real.folded" "$tmp/real.env"
expect "ETLKIT_SYMBOL_PATH with a missing entry: one warning line naming it" \
  sh -c "[ \"\$(grep -c nosuch '$tmp/env.err')\" = 1 ] && grep -Fqx 'etlkit profile: ETLKIT_SYMBOL_PATH: $tmp/nosuch: No such file or directory (passed over)' '$tmp/env.err'"
# A symbol server's element (srv*CACHE*URL; on POSIX ':' separates when there is no ';', never a URL's "://"): a
# cache folder not made yet is one warning, not a failure (etlkit downloads nothing); the URL is no folder. A
# missing folder after it still fails the command (each entry freed once: ASan checks).
"$etlkit" profile "$real" --folded --symbols "srv*$tmp/nocache*https://msdl.microsoft.com/download/symbols:$tmp/empty" \
  > "$tmp/real.srv" 2> "$tmp/srv.err"
expect "--symbols srv*MISSING*URL: exit 0" [ $? = 0 ]
same "--symbols srv*MISSING*URL: the folded stacks" "$tmp/real.folded" "$tmp/real.srv"
expect "--symbols srv*MISSING*URL: one warning naming the cache, none for the URL ($(head -c 300 "$tmp/srv.err"))" \
  sh -c "[ \"\$(grep -c 'passed over' '$tmp/srv.err')\" = 1 ] &&
         grep -Fq '$tmp/nocache: No such file or directory (a symbol server' '$tmp/srv.err'"
"$etlkit" profile "$real" --folded --symbols "srv*$tmp/nocache*https://x.invalid/s;$tmp/nosuch" > /dev/null 2> "$tmp/srv2.err"
expect "--symbols srv*MISSING*URL;MISSING: exit 1 naming the folder ($(head -c 300 "$tmp/srv2.err"))" \
  sh -c "[ $? = 1 ] && grep -Fq -- '--symbols: $tmp/nosuch: No such file or directory' '$tmp/srv2.err'"

if [ "${ETLKIT_TARGET:-}" = windows ]; then
  echo "symbols.sh: names and the hung llvm-pdbutil (a shell script) skipped on Windows under wine (etlkit.exe cannot run Debian's llvm-pdbutil; unit/test_symbols stops a silent child there)"
  finish
fi
for t in clang lld-link llvm-readobj; do
  command -v $t >/dev/null 2>&1 || { echo "symbols.sh: names skipped: no $t (scripts/deps.sh test installs clang, lld, llvm)"; finish; }
done
command -v llvm-pdbutil >/dev/null 2>&1 || command -v llvm-pdbutil-14 >/dev/null 2>&1 ||
  { echo "symbols.sh: names skipped: no llvm-pdbutil (scripts/deps.sh test installs llvm)"; finish; }

# ---- 2. The DLLs: exported functions (their RVAs from the export table), no C runtime.
cat > "$tmp/mod.c" <<'EOF'
#define F(name, k) __declspec(dllexport) int name(int x) { int s = k; for (int i = 0; i < x; i++) s += i * k; return s; }
F(FN_A, 3)
F(FN_B, 5)
F(FN_C, 7)
EOF
build() { # build NAME A B C: NAME.dll and NAME.pdb in $tmp/out
  clang --target=x86_64-pc-windows-msvc -O0 -g -gcodeview -DFN_A="$2" -DFN_B="$3" -DFN_C="$4" -c "$tmp/mod.c" \
    -o "$tmp/$1.obj" 2>/dev/null &&
  lld-link /dll /noentry /debug /nodefaultlib "/out:$tmp/out/$1.dll" "/pdb:$tmp/out/$1.pdb" "$tmp/$1.obj" >/dev/null 2>&1
}
mkdir "$tmp/out"
build app Cache_Lock Cache_Unlock Worker_Run && build other Other_A Other_B Other_C &&
  build bad Bad_A Bad_B Bad_C && build pe Pe_Open Pe_Read Pe_Close ||
  { echo "FAIL: building the test DLLs with clang and lld-link" >&2; exit 1; }

# ident NAME: "TDS SIZE GUID AGE" from llvm-readobj (GUID as xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, AGE decimal)
ident() {
  llvm-readobj --file-headers --coff-debug-directory "$tmp/out/$1.dll" | awk '
    /TimeDateStamp:/ && !tds { tds = $NF; gsub(/[()]/, "", tds) }
    /SizeOfImage:/ { size = $2 }
    /PDBGUID:/ { s = $0; sub(/.*\(/, "", s); sub(/\).*/, "", s); n = split(s, b, " ")
      g = b[4] b[3] b[2] b[1] "-" b[6] b[5] "-" b[8] b[7] "-" b[9] b[10] "-" b[11] b[12] b[13] b[14] b[15] b[16] }
    /PDBAge:/ { age = $2 }
    END { print tds, size, g, age }'
}
# exports NAME: "RVA NAME" per exported function, RVA in decimal
exports() {
  llvm-readobj --coff-exports "$tmp/out/$1.dll" | awk '/Name: ./ { n = $2 } /RVA:/ && n { print $2, n; n = "" }' |
    while read -r rva name; do printf '%d %s\n' "$rva" "$name"; done
}
# store key of a GUID and age: the GUID's 32 hex digits uppercase, then the age in hex
key() { printf '%s%X' "$(echo "$1" | tr -d - | tr a-f A-F)" "$2"; }

modules=""
i=0
for m in app other bad pe; do
  set -- $(ident $m); tds=$1; size=$2; guid=$3; age=$4
  [ -n "$guid" ] || { echo "FAIL: no RSDS record read from $m.dll" >&2; exit 1; }
  base=$(printf '0x%X' $((0x180000000 + i * 0x10000000)))
  exports $m > "$tmp/$m.exports"
  rvas=$(awk '{ printf "%s0x%x", (NR > 1 ? "," : ""), $1 + 4 }' "$tmp/$m.exports")
  logged=$guid
  case $m in
    app) mkdir -p "$tmp/store/app.pdb/$(key $guid $age)"; cp "$tmp/out/app.pdb" "$tmp/store/app.pdb/$(key $guid $age)/" ;;
    bad) logged=00112233-4455-6677-8899-aabbccddeeff  # its PDB under the logged identity, and flat: both refused
         mkdir -p "$tmp/store/bad.pdb/$(key $logged $age)"; cp "$tmp/out/bad.pdb" "$tmp/store/bad.pdb/$(key $logged $age)/"
         mkdir -p "$tmp/flat"; cp "$tmp/out/bad.pdb" "$tmp/flat/" ;;
    pe) logged=none
        dir="$tmp/store/pe.dll/$(printf '%08X%x' "$tds" "$size")"; mkdir -p "$dir" "$tmp/flat"
        cp "$tmp/out/pe.dll" "$dir/"; cp "$tmp/out/pe.pdb" "$tmp/flat/" ;;
  esac
  modules="$modules${modules:+;}$m.dll,$base,$size,$tds,$logged,$age,C:\\build\\$m.pdb,$rvas"
  echo "$m $base $size" >> "$tmp/bases"
  i=$((i + 1))
done

"$etlkit" synth --quiet --stacks --processes 12 --threads 60 --duration 1 --seed 11 --modules "$modules" \
  -o "$tmp/t.etl" --truth "$tmp/t.jsonl" || { echo "FAIL: synth --modules" >&2; exit 1; }
path="$tmp/store;$tmp/flat"

# label.awk: lab(address) is the label an address should get ("" for one in no test module): app.dll and
# pe.dll by name, other.dll and bad.dll module+offset.
cat > "$tmp/label.awk" <<'EOF'
BEGIN { while ((getline l < bases) > 0) { split(l, f, " "); n++; m[n] = f[1]; b[n] = f[2] + 0; s[n] = f[3] + 0
          while ((getline e < (dir "/" f[1] ".exports")) > 0) { split(e, x, " "); name[f[1], x[1] + 4] = x[2] } } }
function lab(a,   k, r) {
  for (k = 1; k <= n; k++) if (a >= b[k] && a < b[k] + s[k]) {
    r = a - b[k]
    return (m[k] == "app" || m[k] == "pe") ? m[k] ".dll!" name[m[k], r] : sprintf("%s.dll+0x%x", m[k], r) }
  return "" }
EOF
printf '%s\n' '{ l = lab($1 + 0); if (l != "") print l }' > "$tmp/each.awk"
printf '%s\n' '{ for (i = 1; i <= NF; i++) if (lab($i + 0) == "app.dll!Cache_Lock") { c++; break } } END { print c + 0 }' \
  > "$tmp/lock.awk"
# label_of: decimal addresses in, their labels out (nothing for frames in no test module)
label_of() { awk -v bases="$tmp/bases" -v dir="$tmp" -f "$tmp/label.awk" -f "$tmp/each.awk"; }

# ---- 3. --folded: the test modules' frames, weighted by samples, equal the truth's.
jq -r 'select(.type == "sample") | (.stack // [.ip])[]' "$tmp/t.jsonl" | label_of | sort | uniq -c |
  awk '{ print $2, $1 }' > "$tmp/want.frames"
"$etlkit" profile "$tmp/t.etl" --folded --symbols "$path" > "$tmp/t.folded" 2> "$tmp/t.err"
expect "profile --folded --symbols exits 0" [ $? = 0 ]
awk -F';' '{ c = $NF; sub(/.* /, "", c); sub(/ [0-9]+$/, "", $NF)
    for (i = 3; i <= NF; i++) if ($i ~ /^(app|other|bad|pe)\.dll[!+]/) w[$i] += c }
  END { for (k in w) print k, w[k] }' "$tmp/t.folded" | sort > "$tmp/got.frames"
expect "the truth has frames of every test module" [ "$(cut -c1-3 "$tmp/want.frames" | sort -u | tr -d '\n')" = "appbadothpe." ]
same "profile --folded --symbols: the test modules' frames equal the truth's" "$tmp/want.frames" "$tmp/got.frames"
expect "no name for the module without a PDB nor for the mismatched PDB" \
  sh -c "! grep -Eq '(other|bad)\\.dll!' '$tmp/t.folded'"
expect "stderr: other.dll and bad.dll without symbols" grep -Eq 'without symbols: .*(other\.dll.*bad\.dll|bad\.dll.*other\.dll)' "$tmp/t.err"
# Without llvm-pdbutil a module with no debug identity is still told so (the tool would not name it either), not
# "no llvm-pdbutil" for those met after the first PDB found (h-explore20 F5).
env -u ETLKIT_LLVM_PDBUTIL PATH=/nonexistent "$etlkit" profile "$tmp/t.etl" --folded --symbols "$path" >/dev/null \
  2> "$tmp/notool.err"
n_tool=$(grep -o 'no debug identity: [0-9]*' "$tmp/t.err"); n_notool=$(grep -o 'no debug identity: [0-9]*' "$tmp/notool.err")
expect "no llvm-pdbutil: as many modules without identity ($n_tool; without the tool: $n_notool)" \
  sh -c "[ -n '$n_tool' ] && [ '$n_tool' = '$n_notool' ] && grep -q 'no llvm-pdbutil: ' '$tmp/notool.err'"
# each PDB found but refused is one line: the module, the file, both identities (h-explore9 F6); a PDB not found
# (other.dll) is only counted
set -- $(ident bad); bad_guid=$(echo "$3" | tr a-f A-F); bad_age=$4
for f in "store/bad\.pdb/00112233445566778899AABBCCDDEEFF$(printf %X $bad_age)/bad\.pdb" "flat/bad\.pdb"; do
  expect "stderr: bad.dll's $f refused, both identities said ($(grep -m1 'bad\.dll: ' "$tmp/t.err" | head -c 300))" \
    grep -q "^etlkit profile: symbols: bad\.dll: .*$f: another build's PDB: {$bad_guid} age $bad_age, the image's {00112233-4455-6677-8899-AABBCCDDEEFF} age $bad_age\$" "$tmp/t.err"
done
expect "stderr: no line for other.dll (no PDB) nor app.dll (its PDB used)" \
  sh -c "[ \"\$(grep -c 'profile: symbols: ' '$tmp/t.err')\" = 2 ]"

# ---- 4. --json: each function row of the test modules names what the truth does, with its source line.
"$etlkit" profile "$tmp/t.etl" --json --symbols "$path" > "$tmp/t.json" 2>/dev/null
jq -r '.functions[] | select(.module | test("^(app|other|bad|pe)\\.dll$")) |
  "\(.module) \(.offset) \(.symbol) \(.function) \(.line != null)"' "$tmp/t.json" | sort > "$tmp/got.fn"
awk -v bases="$tmp/bases" -v dir="$tmp" '
  BEGIN { while ((getline l < bases) > 0) { split(l, f, " ")
    while ((getline e < (dir "/" f[1] ".exports")) > 0) { split(e, x, " ")
      r = sprintf("0x%x", x[1] + 4)
      if (f[1] == "app" || f[1] == "pe") print f[1] ".dll", r, x[2], f[1] ".dll!" x[2] "+0x4", "true"
      else print f[1] ".dll", r, "null", f[1] ".dll+" r, "false" } } }' | sort > "$tmp/all.fn"
expect "profile --json --symbols: every function row of the test modules is one the truth names" \
  sh -c "[ -s '$tmp/got.fn' ] && [ -z \"\$(comm -23 '$tmp/got.fn' '$tmp/all.fn')\" ]"
expect "profile --json: symbols.without says no PDB for other.dll, a mismatch for bad.dll" \
  jq -e '[.symbols.without[] | "\(.module):\(.why)"] | (index("other.dll:no PDB") != null) and (index("bad.dll:PDB mismatch") != null)' "$tmp/t.json" >/dev/null
# one llvm-pdbutil run per PDB file read, however many samples: app.pdb, pe.pdb, bad.pdb twice (store, flat: both refused)
expect "round trips: one per PDB file ($(jq .symbols.round_trips "$tmp/t.json"))" jq -e '.symbols.round_trips == 4' "$tmp/t.json" >/dev/null

# ---- 5. --butterfly by name: the samples whose stack holds Cache_Lock.
want=$(jq -r 'select(.type == "sample") | [(.stack // [.ip])[] | tostring] | join(" ")' "$tmp/t.jsonl" |
  awk -v bases="$tmp/bases" -v dir="$tmp" -f "$tmp/label.awk" -f "$tmp/lock.awk")
"$etlkit" profile "$tmp/t.etl" --butterfly 'app.dll!Cache_Lock' --json --symbols "$path" > "$tmp/bf.json" 2>/dev/null
expect "--butterfly app.dll!Cache_Lock: total $(jq .total "$tmp/bf.json"), truth $want" jq -e ".total == $want and $want > 0" "$tmp/bf.json" >/dev/null

# ---- 6. The export's stack.symbol column: each frame of a test module labelled as its address says.
"$etlkit" export "$tmp/t.etl" --to csv -o "$tmp/csv" --symbols "$path" --quiet --tables stack 2>/dev/null
tr -d '\r' < "$tmp/csv/stack.csv" > "$tmp/stack.csv" # CSV's lines end in CRLF
expect "export --symbols: the stack table has a symbol column" sh -c "head -1 '$tmp/stack.csv' | grep -q ',symbol\$'"
awk -F, 'NR > 1 && $6 ~ /^(app|other|bad|pe)\.dll[!+]/ { print $4, $6 }' "$tmp/stack.csv" | sort -u > "$tmp/got.rows"
while read -r hex lab; do printf '%d %s\n' "$hex" "$lab"; done < "$tmp/got.rows" > "$tmp/got.dec"
awk '{ print $1 }' "$tmp/got.dec" | label_of > "$tmp/want.labels"
awk '{ sub(/\+0x4$/, "", $2); print $2 }' "$tmp/got.dec" > "$tmp/got.labels"
expect "export: the stack table has frames of the test modules" [ -s "$tmp/got.labels" ]
same "export: stack.symbol names each test module's frame as the truth" "$tmp/want.labels" "$tmp/got.labels"
"$etlkit" export "$tmp/t.etl" --to csv -o "$tmp/csv2" --quiet --tables stack 2>/dev/null
expect "export without --symbols: the symbol column is empty" \
  sh -c "tr -d '\\r' < '$tmp/csv2/stack.csv' | awk -F, 'NR > 1 && \$6 != \"\" { exit 1 }'"

# Every row of the stack table is named, the switches' stacks' rows (ids first) as the samples'.
expect "export --symbols: every stack row has a symbol" \
  sh -c "awk -F, 'NR > 1 && \$6 == \"\" { exit 1 }' '$tmp/stack.csv'"
# A dataset of the trace names them the same (its partition is the single export without trace_id).
"$etlkit" export "$tmp/t.etl" --dataset --to csv -o "$tmp/ds" --symbols "$path" --quiet --tables stack 2>/dev/null
expect "export --dataset --symbols: the partition's symbol column equals the single export's" \
  sh -c "cut -d, -f2- '$tmp/csv/stack.csv' | cmp -s - '$tmp/ds/stack/trace_id=t/part-0.csv'"

# ---- 6b. Perfetto's samples: each frame's function name is its function (module!function, as --folded), so the
# samples by their leaf function (perfetto_samples.awk: as trace_processor resolves the interned callstacks) equal
# --folded's leaves; module+0xoff for the modules without symbols. --symbols is refused for ftrace (no stacks).
pdir="$(cd "$(dirname "$0")/../export" && pwd)"
if command -v protoc >/dev/null 2>&1; then
  "$etlkit" export "$tmp/t.etl" --to perfetto -o "$tmp/t.pb" --symbols "$path" --quiet 2>/dev/null
  expect "export --to perfetto --symbols exits 0" [ $? = 0 ]
  protoc --proto_path="$pdir" --decode=perfetto.protos.Trace etw.proto < "$tmp/t.pb" > "$tmp/t.pbtxt"
  awk -f "$pdir/perfetto_samples.awk" "$tmp/t.pbtxt" | grep -E '^((app|other|bad|pe)\.dll|ERROR)' | sort > "$tmp/got.leaf"
  awk -F';' '{ c = $NF; sub(/.* /, "", c); leaf = $NF; sub(/ [0-9]+$/, "", leaf); sub(/\+0x[0-9a-f]+$/, "", leaf)
      if (leaf ~ /^(app|other|bad|pe)\.dll/) w[leaf] += c } END { for (k in w) print k, w[k] }' "$tmp/t.folded" |
    sort > "$tmp/want.leaf"
  expect "perfetto --symbols: the test modules' leaves are named" grep -q '^app\.dll!' "$tmp/got.leaf"
  same "perfetto --symbols: samples by leaf function equal --folded's" "$tmp/want.leaf" "$tmp/got.leaf"
else
  echo "symbols.sh: the Perfetto check skipped: no protoc"
fi
"$etlkit" export "$tmp/t.etl" --to ftrace -o "$tmp/t.txt" --symbols "$path" 2>/dev/null
expect "export --to ftrace --symbols: a usage error" [ $? = 64 ]

# ---- 7. The report's flame graph names them too.
"$etlkit" report "$tmp/t.etl" -o "$tmp/r.html" --symbols "$path" --quiet 2>/dev/null
expect "report --symbols: the flame graph holds app.dll!Cache_Lock" grep -q 'app.dll!Cache_Lock' "$tmp/r.html"

# ---- 7b. ETLKIT_SYMBOL_PATH with a missing entry and the good ones: names as --symbols, one warning.
ETLKIT_SYMBOL_PATH="$tmp/nosuch;$path" "$etlkit" profile "$tmp/t.etl" --folded > "$tmp/t.envmiss" 2> "$tmp/t.envmiss.err"
expect "ETLKIT_SYMBOL_PATH with a missing entry: exit 0" [ $? = 0 ]
same "ETLKIT_SYMBOL_PATH with a missing entry: the frames named as with --symbols" "$tmp/t.folded" "$tmp/t.envmiss"
expect "ETLKIT_SYMBOL_PATH with a missing entry: one warning line" \
  sh -c "[ \"\$(grep -c 'passed over' '$tmp/t.envmiss.err')\" = 1 ] && grep -q 'ETLKIT_SYMBOL_PATH: $tmp/nosuch: ' '$tmp/t.envmiss.err'"

# ---- 7c. An llvm-pdbutil that hangs (writes nothing) is stopped after ETLKIT_SYMBOL_TIMEOUT seconds: the command
# ends in seconds, app.dll's frames stay module+offset, and stderr names the PDB and the limit once.
mkdir "$tmp/only"; cp -r "$tmp/store/app.pdb" "$tmp/only/"
printf '#!/bin/sh\nexec sleep 60\n' > "$tmp/hang"; chmod +x "$tmp/hang"
t0=$(date +%s)
ETLKIT_LLVM_PDBUTIL="$tmp/hang" ETLKIT_SYMBOL_TIMEOUT=1 "$etlkit" profile "$tmp/t.etl" --folded --symbols "$tmp/only" \
  > "$tmp/hang.folded" 2> "$tmp/hang.err"
rc=$?; t1=$(date +%s)
expect "a hung llvm-pdbutil: exit 0 (got $rc)" [ $rc = 0 ]
expect "a hung llvm-pdbutil: done in $((t1 - t0)) s (limit 1 s)" [ $((t1 - t0)) -le 10 ]
expect "a hung llvm-pdbutil: app.dll's frames module+offset" \
  sh -c "grep -q 'app\.dll+0x' '$tmp/hang.folded' && ! grep -q 'app\.dll!' '$tmp/hang.folded'"
expect "a hung llvm-pdbutil: one line naming the PDB and the limit ($(head -c 300 "$tmp/hang.err"))" \
  sh -c "[ \"\$(grep -c 'wrote nothing' '$tmp/hang.err')\" = 1 ] &&
         grep -q '^etlkit profile: symbols: app\.dll: .*only/app\.pdb/[0-9A-F]*/app\.pdb: llvm-pdbutil wrote nothing for 1 s and was stopped' '$tmp/hang.err'"
expect "a hung llvm-pdbutil: app.dll counted as without symbols (PDB unreadable)" \
  grep -q 'without symbols: .*app\.dll.*PDB unreadable' "$tmp/hang.err"
# ... and in a dataset's job (its own symbolizer): the trace exported, one line naming the trace and the PDB.
ETLKIT_LLVM_PDBUTIL="$tmp/hang" ETLKIT_SYMBOL_TIMEOUT=1 "$etlkit" export "$tmp/t.etl" --dataset --to csv -o "$tmp/dsh" \
  --symbols "$tmp/only" --tables stack > /dev/null 2> "$tmp/dsh.err"
rc=$?
expect "a hung llvm-pdbutil in a dataset: exit 0 (got $rc), the stack table written" \
  sh -c "[ $rc = 0 ] && [ -s '$tmp/dsh/stack/trace_id=t/part-0.csv' ]"
expect "a hung llvm-pdbutil in a dataset: one line naming the trace and the PDB ($(head -c 300 "$tmp/dsh.err"))" \
  sh -c "[ \"\$(grep -c 'wrote nothing' '$tmp/dsh.err')\" = 1 ] &&
         grep -q '^etlkit export: $tmp/t\.etl: symbols: app\.dll: .*only/app\.pdb/[0-9A-F]*/app\.pdb: llvm-pdbutil wrote nothing for 1 s' '$tmp/dsh.err'"
# ---- 7d. A PDB cut short (an interrupted copy): app.dll module+offset, and one line naming the module, the file and
# what its header says (llvm-pdbutil's own message goes to the null device).
mkdir "$tmp/cut"; cp -r "$tmp/store/app.pdb" "$tmp/cut/"
for f in "$tmp"/cut/app.pdb/*/app.pdb; do head -c 8192 "$f" > "$f.part"; mv "$f.part" "$f"; done
"$etlkit" profile "$tmp/t.etl" --folded --symbols "$tmp/cut" > "$tmp/cut.folded" 2> "$tmp/cut.err"
rc=$?
expect "a cut PDB: exit 0 (got $rc), app.dll's frames module+offset" \
  sh -c "[ $rc = 0 ] && grep -q 'app\.dll+0x' '$tmp/cut.folded' && ! grep -q 'app\.dll!' '$tmp/cut.folded'"
expect "a cut PDB: one line naming app.dll, the file and why ($(grep 'profile: symbols:' "$tmp/cut.err" | head -c 300))" \
  sh -c "[ \"\$(grep -c 'profile: symbols:' '$tmp/cut.err')\" = 1 ] &&
         grep -Eq '^etlkit profile: symbols: app\.dll: .*cut/app\.pdb/[0-9A-F]+/app\.pdb: unreadable: llvm-pdbutil exit [0-9]+: 8192 bytes where its header says [0-9]+ blocks of 4096 \([0-9]+ bytes\): cut or damaged\$' '$tmp/cut.err'"
expect "a cut PDB: app.dll counted as without symbols (PDB unreadable)" \
  grep -q 'without symbols: .*app\.dll.*PDB unreadable' "$tmp/cut.err"
ETLKIT_SYMBOL_TIMEOUT=soon "$etlkit" profile "$tmp/t.etl" --folded --symbols "$path" > "$tmp/t.badenv" 2> "$tmp/t.badenv.err"
same "ETLKIT_SYMBOL_TIMEOUT that is no number: names all the same" "$tmp/t.folded" "$tmp/t.badenv"
expect "ETLKIT_SYMBOL_TIMEOUT that is no number: one line says so" grep -q "^etlkit profile: ETLKIT_SYMBOL_TIMEOUT: 'soon' is not a whole number of seconds from 1 to 1000000: 120 s\$" "$tmp/t.badenv.err"

# ---- 8. The scheduler's stacks (switches, waits --by, waitchain) named the same way, checked against the
# truth's CSwitch and ReadyThread walks by sched_stacks_check.py --names (app.dll and pe.dll frames
# module!function+0xOFF at the export's RVA + OFF, other.dll and bad.dll module+offset).
command -v python3 >/dev/null 2>&1 || { echo "symbols.sh: scheduler stacks skipped: no python3"; finish; }
check="$(cd "$(dirname "$0")" && pwd)/sched_stacks_check.py"
for m in app pe; do awk -v m=$m '{ print m ".dll", $1, $2 }' "$tmp/$m.exports"; done > "$tmp/names"
expect "the truth's CSwitch and ReadyThread walks have frames of every test module" [ "$(jq -r \
  'select(.type == "stack") | .stack[]' "$tmp/t.jsonl" | label_of | sed 's/[!+].*//' | sort -u | tr '\n' ' ')" = \
  "app.dll bad.dll other.dll pe.dll " ]
"$etlkit" switches "$tmp/t.etl" --json --symbols "$path" > "$tmp/sw.json" 2> "$tmp/sw.err"
expect "switches --json --symbols exits 0" [ $? = 0 ]
"$etlkit" switches "$tmp/t.etl" --csv --symbols "$path" > "$tmp/sw.csv" 2>/dev/null
expect "switches --json and --csv --symbols: every row's two stacks the truth's, named" \
  python3 "$check" --names "$tmp/names" switches "$tmp/t.jsonl" "$tmp/sw.json" "$tmp/sw.csv"
expect "switches --symbols: stderr counts one module without PDB (other.dll), one mismatched (bad.dll)" \
  grep -Eq 'without symbols: .*no PDB: 1; PDB mismatch: 1\)' "$tmp/sw.err"
ETLKIT_SYMBOL_PATH="$path" "$etlkit" switches "$tmp/t.etl" --json > "$tmp/sw.env" 2>/dev/null
same "switches: ETLKIT_SYMBOL_PATH names as --symbols does" "$tmp/sw.json" "$tmp/sw.env"

# waits --by: with symbols the same nodes and times as without, app.dll's and pe.dll's by function.
for by in stack readying-stack; do
  for form in "--json" "--flat --json" "--top 100000" "--flat --top 100000"; do
    "$etlkit" waits "$tmp/t.etl" --by $by $form > "$tmp/wp" 2>/dev/null
    "$etlkit" waits "$tmp/t.etl" --by $by $form --symbols "$path" > "$tmp/ws" 2>/dev/null
    expect "waits --by $by $form --symbols: the nodes and times without symbols, named by function" \
      python3 "$check" --names "$tmp/names" relabel "$tmp/wp" "$tmp/ws"
  done
done
"$etlkit" waits "$tmp/t.etl" --by stack --json --symbols "$path" > "$tmp/ws.json" 2>/dev/null
expect "waits --by stack --json: the symbols key counts other.dll (no PDB) and bad.dll (mismatch)" \
  jq -e '[.symbols.without[] | "\(.module):\(.why)"] | (index("other.dll:no PDB") != null) and (index("bad.dll:PDB mismatch") != null)' "$tmp/ws.json" >/dev/null
expect "waits --by stack: app.dll!Cache_Lock a node, no offset" grep -q ' app\.dll!Cache_Lock$' "$tmp/ws"

# waitchain: the longest waiter's hops, blocking and readier stacks, named.
"$etlkit" waits "$tmp/t.etl" --json > "$tmp/w.json"
tid=$(python3 -c "import json,sys; w=json.load(open(sys.argv[1])); print(max(w['threads'], key=lambda t: t['wait_ns'])['tid'])" "$tmp/w.json")
base=$(python3 -c "import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if not r.get('head'): print(r['switch_in_ts'] - r['switch_in_ns'] // 100); break" "$tmp/sw.json")
"$etlkit" waitchain "$tmp/t.etl" --thread "$tid" --frames 0 --json --symbols "$path" > "$tmp/wc.json" 2>/dev/null
expect "waitchain --symbols --json (tid $tid): the hops' stacks the truth's, named" \
  python3 "$check" --names "$tmp/names" waitchain "$tmp/t.jsonl" "$tmp/wc.json" 999 "$base"
expect "waitchain --json: the symbols key counts the lookups of its frames" \
  jq -e '.symbols.lookups > 0 and .symbols.round_trips > 0 and .symbols.modules_without_symbols > 0' "$tmp/wc.json" >/dev/null
"$etlkit" waitchain "$tmp/t.etl" --thread "$tid" --frames 0 --symbols "$path" > "$tmp/wc.txt" 2>/dev/null
expect "waitchain --symbols: text names where hops blocked or were readied" \
  grep -Eq '(blocked in|readied by .* in): .*(app|pe)\.dll![A-Za-z_]+\+0x4' "$tmp/wc.txt"
expect "waitchain --symbols: no app.dll or pe.dll frame left as module+offset" \
  sh -c "! grep -Eq '(app|pe)\.dll\+0x' '$tmp/wc.txt'"
finish
