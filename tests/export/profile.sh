#!/bin/sh
# profile.sh ETLKIT DATA SAMPLES WORK - the sampled profile's tables (image, stack, sample) of
# `etlkit export`, read back with the sqlite3 shell and checked against `etlkit profile --json` on
# the real sample that has samples (perfview-x64-compressed.etl): the samples by module, thread
# and process, --range, every stack and image a row names exists, the frames of each stack; the
# CSV files hold the same rows; a trace without samples nor images has the tables, empty.
set -u
etlkit=$1; data=$2; samples=$3; work=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
passes=0; fails=0
ok() { passes=$((passes+1)); }
bad() { echo "FAIL: $*"; fails=$((fails+1)); }
check() { # check NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then ok; else bad "$1: got '$3', expected '$2'"; fi
}
q() { sqlite3 -batch -noheader -separator ' ' "$@"; }
pv=$samples/perfview-x64-compressed.etl
if [ ! -f "$pv" ]; then echo "SKIP: no $pv"; exit 77; fi

"$etlkit" export "$pv" --to sqlite -o pv.sqlite --quiet; check "export" 0 $?
"$etlkit" profile "$pv" --json > prof.json; check "profile --json" 0 $?

# Totals, then the samples by module (the image holding the IP), thread and process.
check "samples" "$(jq .samples prof.json)" "$(q pv.sqlite 'SELECT COUNT(*) FROM sample')"
check "with_stack" "$(jq .with_stack prof.json)" "$(q pv.sqlite 'SELECT COUNT(*) FROM sample WHERE walked = 1')"
check "unknown samples" "$(jq .unknown_samples prof.json)" "$(q pv.sqlite 'SELECT COUNT(*) FROM sample WHERE image_id IS NULL')"
jq -r '.modules[] | "\(.module) \(.samples)"' prof.json | sort > want.mod
q pv.sqlite "SELECT COALESCE(i.name, 'Unknown'), COUNT(*) FROM sample s LEFT JOIN image i USING (image_id) GROUP BY 1" |
  sort > got.mod
cmp -s want.mod got.mod && ok || { bad "samples by module differ from profile --json"; diff want.mod got.mod | head; }
[ "$(wc -l < want.mod)" -gt 3 ] && ok || bad "modules: too few to mean anything"
jq -r '.threads[] | "\(.tid) \(.pid // "null") \(.samples)"' prof.json | sort > want.thr
q pv.sqlite "SELECT tid, COALESCE(pid, 'null'), COUNT(*) FROM sample GROUP BY tid, pid" | sort > got.thr
cmp -s want.thr got.thr && ok || { bad "samples by thread differ"; diff want.thr got.thr | head; }
jq -r '.processes[] | "\(.pid // "null") \(.samples)"' prof.json | sort > want.proc
q pv.sqlite "SELECT COALESCE(pid, 'null'), COUNT(*) FROM sample GROUP BY pid" | sort > got.proc
cmp -s want.proc got.proc && ok || { bad "samples by process differ"; diff want.proc got.proc | head; }

# References: every stack a sample names, every image a frame or a sample names.
check "samples' stacks in stack" 0 "$(q pv.sqlite 'SELECT COUNT(*) FROM sample WHERE stack_id NOT IN (SELECT stack_id FROM stack)')"
check "frames' images in image" 0 \
  "$(q pv.sqlite 'SELECT COUNT(*) FROM stack WHERE image_id IS NOT NULL AND image_id NOT IN (SELECT image_id FROM image)')"
check "samples' images in image" 0 \
  "$(q pv.sqlite 'SELECT COUNT(*) FROM sample WHERE image_id IS NOT NULL AND image_id NOT IN (SELECT image_id FROM image)')"
check "no stack without a sample" 0 "$(q pv.sqlite 'SELECT COUNT(*) FROM (SELECT DISTINCT stack_id FROM stack) WHERE stack_id NOT IN (SELECT stack_id FROM sample)')"
# A stack's depths are 0..n-1; a sample without a walk has its IP as its one frame.
check "depths contiguous" 0 "$(q pv.sqlite 'SELECT COUNT(*) FROM (SELECT stack_id, COUNT(*) n, MAX(depth) m, MIN(depth) z FROM stack GROUP BY stack_id) WHERE n != m + 1 OR z != 0')"
check "unwalked: the IP alone" 0 "$(q pv.sqlite 'SELECT COUNT(*) FROM sample s JOIN stack k USING (stack_id) WHERE s.walked = 0 AND (k.depth != 0 OR k.address != s.ip OR k.image_id IS NOT s.image_id)')"
[ "$(q pv.sqlite 'SELECT MAX(depth) FROM stack')" -gt 10 ] && ok || bad "stacks: no deep stack"
# The frames' images start at or below their addresses (hex text, compared padded to 16 digits).
check "frames above their image's base" 0 "$(q pv.sqlite "SELECT COUNT(*) FROM stack k JOIN image i USING (image_id)
  WHERE substr('0000000000000000' || substr(k.address, 3), -16) < substr('0000000000000000' || substr(i.base, 3), -16)")"
# utid: the thread instance of the sample's TID (NULL only for the idle thread and unseen TIDs).
check "utid's tid" 0 "$(q pv.sqlite 'SELECT COUNT(*) FROM sample s JOIN thread t USING (utid) WHERE t.tid != s.tid')"
check "idle: no utid" 0 "$(q pv.sqlite 'SELECT COUNT(*) FROM sample WHERE tid = 0 AND utid IS NOT NULL')"
check "images: load before unload" 0 "$(q pv.sqlite 'SELECT COUNT(*) FROM image WHERE load_ns > unload_ns')"
[ "$(q pv.sqlite 'SELECT COUNT(*) FROM image WHERE kernel = 1')" -gt 0 ] && ok || bad "no kernel image"

# --range: the samples in the window, as profile --range counts them.
"$etlkit" export "$pv" --to sqlite -o range.sqlite --range 2 5 --quiet; check "export --range" 0 $?
check "--range samples" "$("$etlkit" profile "$pv" --range 2 5 --json | jq .samples)" \
  "$(q range.sqlite 'SELECT COUNT(*) FROM sample')"
check "--range window" 0 "$(q range.sqlite 'SELECT COUNT(*) FROM sample WHERE ns < 2000000000 OR ns >= 5000000000')"

# CSV: the same rows (a header row, a trace_id column first).
"$etlkit" export "$pv" --to csv -o csv --quiet; check "export csv" 0 $?
for t in image stack sample; do
  check "csv $t rows" "$(q pv.sqlite "SELECT COUNT(*) FROM $t")" "$(($(wc -l < csv/$t.csv) - 1))"
done
check "csv sample header" "trace_id,ts,ns,cpu,utid,tid,pid,stack_id,walked,ip,image_id" "$(head -1 csv/sample.csv | tr -d '\r')"
# --tables: only the sample table filled.
"$etlkit" export "$pv" --to sqlite -o only.sqlite --tables sample --quiet; check "--tables sample" 0 $?
check "--tables sample: samples" "$(jq .samples prof.json)" "$(q only.sqlite 'SELECT COUNT(*) FROM sample')"
check "--tables sample: no images" 0 "$(q only.sqlite 'SELECT COUNT(*) FROM image')"

# Perfetto: PerfSample packets with interned callstacks, decoded by protoc with etw.proto and
# checked as trace_processor resolves them (perfetto_samples.awk): the samples by their leaf
# frame's module equal profile --json's modules.
if command -v protoc >/dev/null 2>&1; then
  "$etlkit" export "$pv" --to perfetto -o pv.pb --quiet; check "export perfetto" 0 $?
  protoc --proto_path="$here" --decode=perfetto.protos.Trace etw.proto < pv.pb > pv.txt; check "protoc --decode" 0 $?
  awk -f "$here/perfetto_samples.awk" pv.txt | sort > got.pf
  grep '^ERROR' got.pf && bad "perfetto: interning broken"
  grep -v '^ERROR' got.pf > got.pfmod
  cmp -s want.mod got.pfmod && ok || { bad "perfetto: samples by module differ"; diff want.mod got.pfmod | head; }
  check "perfetto: one perf_sample per sample" "$(jq .samples prof.json)" "$(grep -c '^  perf_sample {' pv.txt)"
  "$etlkit" export "$data/synth-64-qpc-full.etl" --to perfetto -o synth.pb --quiet; check "synth perfetto" 0 $?
  check "synth perfetto: no samples" 0 "$(protoc --proto_path="$here" --decode=perfetto.protos.Trace etw.proto < synth.pb | grep -c 'perf_sample {')"
else
  echo "protoc not found: the Perfetto checks skipped"
fi

# No samples nor images (a synthesized scheduler trace): the tables are there, empty.
"$etlkit" export "$data/synth-64-qpc-full.etl" --to sqlite -o synth.sqlite --quiet; check "synth export" 0 $?
check "synth: empty tables" "0 0 0" "$(q synth.sqlite 'SELECT (SELECT COUNT(*) FROM image), (SELECT COUNT(*) FROM stack), (SELECT COUNT(*) FROM sample)')"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
