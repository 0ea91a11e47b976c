#!/bin/sh
# bench.sh ETLKIT DIR SIZES... - the ratio table of `make bench`: for each synthesized input
# (SIZE in M or G, full CSwitch events and compact batches, made in DIR on first use and
# kept), the raw read (cat FILE > /dev/null: the physical limit) and each etlkit command
# that exists: median wall time of RUNS (5) runs after a warm-up, MB/s, millions of
# records (or switches) per second, peak resident memory, and the ratio to the raw read of
# the same file in the same run; then the growth of each command's time from the smallest
# input to the others, which should follow the size. A measurement, never a test.
# Commands that take --threads run with 1 (named X) and with 2 (X@2). SKIP="export dump"
# leaves commands (or runs such as cpu@2) out, FORMS="full stacks" inputs; export runs on the
# smallest input only (EXPORT_ALL=1: on every one).
set -eu
etlkit=$1; dir=$2; shift 2
runs=${RUNS:-5}
mkdir -p "$dir"

now() { date +%s%N; }

# median of the numbers on stdin
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# run_one CMD...: wall ns and peak RSS KB of one run, as "ns kb"
run_one() {
  t0=$(now)
  kb=$( { /usr/bin/time -f "%M" sh -c "$* >/dev/null 2>&1" ; } 2>&1 | tail -1)
  t1=$(now)
  echo "$((t1 - t0)) $kb"
}

# measure NAME CMD...: warm-up, RUNS runs; prints "median_ns max_kb"
measure() {
  run_one "$@" >/dev/null
  i=0; : > "$dir/.times"; : > "$dir/.rss"
  while [ $i -lt "$runs" ]; do
    r=$(run_one "$@")
    echo "${r% *}" >> "$dir/.times"; echo "${r#* }" >> "$dir/.rss"
    i=$((i + 1))
  done
  echo "$(median < "$dir/.times") $(sort -n "$dir/.rss" | tail -1)"
}

has_cmd() { "$etlkit" --help 2>/dev/null | grep -q "^  $1 "; }

input() { # input SIZE FORM -> path (made on first use); FORM stacks: full CSwitch events, samples and stack walks
  f="$dir/bench-$1-$2.etl"
  if [ ! -f "$f" ]; then
    echo "bench: synthesizing $f" >&2
    if [ "$2" = stacks ]; then how="--cswitch full --stacks"; else how="--cswitch $2"; fi
    "$etlkit" synth --preset large --size "$1" $how -o "$f.tmp" --force 2>/dev/null && mv "$f.tmp" "$f"
  fi
  echo "$f"
}
# The profile's input exists only where synth can make it. FORMS="stacks" measures only those inputs.
forms="full compact"
"$etlkit" synth --help 2>/dev/null | grep -q -- --stacks && forms="$forms stacks"
forms=${FORMS:-$forms}

printf '%-26s %-12s %9s %9s %10s %9s %8s\n' "input" "command" "median s" "MB/s" "M rec/s" "peak MB" "x raw"
: > "$dir/.growth"
first_size=$1
for size in "$@"; do
  for form in $forms; do
    f=$(input "$size" "$form")
    bytes=$(stat -c %s "$f")
    json=$("$etlkit" info --json "$f")
    records=$(printf '%s' "$json" | grep -o '"records":[0-9]*' | head -1 | cut -d: -f2)
    sw=$(printf '%s' "$json" | grep -o '"cswitch_events":[0-9]*' | cut -d: -f2)
    csw=$(printf '%s' "$json" | grep -o '"compact_switches":[0-9]*' | cut -d: -f2)
    switches=$((sw + csw))
    raw=""
    runs_of="raw info info@2 dump cpu cpu@2 waits waits@2 switches spinlocks spinlocks@2 pmc pmc@2 export csv parquet"
    # The stacks input is for the profile (its samples and walks): within 3x info is the aim. folded: the
    # profile with every stack kept and written (profile --folded), what the flame graphs cost.
    [ "$form" = stacks ] && runs_of="raw info info@2 profile profile@2 folded folded@2"
    for run in $runs_of; do
      cmd=${run%@*}
      case " ${SKIP:-} " in *" $cmd "*|*" $run "*) continue ;; esac
      # X: one thread (--threads 1 where the command has it); X@2: two.
      threads=""
      help=$cmd; [ "$cmd" = folded ] && help=profile
      if [ "$cmd" != raw ] && "$etlkit" "$help" --help 2>/dev/null | grep -q -- --threads; then
        if [ "$run" = "$cmd" ]; then threads="--threads 1"; else threads="--threads ${run#*@}"; fi
      elif [ "$run" != "$cmd" ]; then
        continue
      fi
      case $cmd in
        raw) line="cat '$f'"; n=$records ;;
        info) line="'$etlkit' info $threads '$f'"; n=$records ;;
        dump) line="'$etlkit' dump --format jsonl '$f'"; n=$records ;;
        profile) has_cmd profile || continue; line="'$etlkit' profile $threads '$f'"; n=$records ;;
        folded) has_cmd profile || continue; line="'$etlkit' profile --folded $threads '$f'"; n=$records ;;
        export) has_cmd export || continue
                # minutes a GB (the index building): on the smallest input only, unless EXPORT_ALL=1
                [ "$size" = "$first_size" ] || [ -n "${EXPORT_ALL:-}" ] || continue
                line="'$etlkit' export '$f' $threads --to sqlite --force -o '$dir/bench.sqlite'"; n=$records ;;
        # export --to csv and --to parquet (issue 22's targets: parquet no slower, its files no larger than the .etl)
        csv|parquet) has_cmd export || continue
                [ "$size" = "$first_size" ] || [ -n "${EXPORT_ALL:-}" ] || continue
                line="'$etlkit' export '$f' --to $cmd --force --quiet -o '$dir/bench.$cmd'"; n=$records ;;
        *) has_cmd "$cmd" || continue; line="'$etlkit' $cmd $threads '$f'"; n=$switches ;;
      esac
      m=$(measure "$line")
      ns=${m% *}; kb=${m#* }
      [ "$cmd" = raw ] && raw=$ns
      awk -v name="$(basename "$f")" -v c="$run" -v ns="$ns" -v kb="$kb" -v b="$bytes" -v n="$n" -v raw="$raw" \
        'BEGIN { s = ns / 1e9; printf "%-26s %-12s %9.3f %9.0f %10.1f %9.1f %8.1f\n", name, c, s, b / 1e6 / s, n / 1e6 / s, kb / 1024, ns / raw }'
      [ "$cmd" = parquet ] && echo "  parquet files: $(du -sb "$dir/bench.parquet" | cut -f1) bytes, $(du -sb "$dir/bench.parquet" |
        awk -v b="$bytes" '{ printf "%.2f", $1 / b }')x the .etl"
      echo "$form $run $size $ns" >> "$dir/.growth"
    done
  done
done

# Growth: each command's time on every size against the smallest, beside the size ratio.
first=$1
if [ $# -gt 1 ]; then
  echo
  echo "growth (time / time at $first; linear = the size ratio)"
  awk -v first="$first" '
    function mb(s) { return s ~ /G$/ ? substr(s, 1, length(s) - 1) * 1024 : substr(s, 1, length(s) - 1) + 0 }
    { key = $1 " " $2; t[key, $3] = $4; sizes[$3] = 1; keys[key] = 1 }
    END {
      for (k in keys) {
        line = sprintf("%-20s", k)
        n = 0
        for (s in sizes) if (s != first && t[k, first] > 0 && t[k, s] > 0) {
          line = line sprintf("  %s: %.1fx (size %.1fx)", s, t[k, s] / t[k, first], mb(s) / mb(first))
          n++
        }
        if (n) print line
      }
    }' "$dir/.growth" | sort
fi
rm -f "$dir/.times" "$dir/.rss" "$dir/bench.sqlite"
rm -rf "$dir/bench.csv" "$dir/bench.parquet"
