#!/bin/sh
# opts.sh ETLKIT - every subcommand's options as its --help lists them (cli/opts.c): each listed
# option is accepted, long and short, as --opt value and as --opt=value alike; an option another
# command lists but this one does not is refused as unknown; and one real run per command gives
# the same answer with --opt=value as with --opt value. The lists come from --help itself.
set -u
etlkit=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") # absolute: the checks run in a directory of their own
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
expect() { # expect NAME CONDITION...
  name=$1; shift
  if "$@"; then passes=$((passes+1)); else echo "FAIL: $name" >&2; fails=$((fails+1)); fi
}
# run NAME ARGS...: the command's stdout, stderr and status into $tmp/NAME.{out,err,rc}
run() {
  n=$1; shift
  "$etlkit" "$@" >"$tmp/$n.out" 2>"$tmp/$n.err"; echo $? >"$tmp/$n.rc"
}
same() { cmp -s "$tmp/$1.out" "$tmp/$2.out" && cmp -s "$tmp/$1.err" "$tmp/$2.err" && cmp -s "$tmp/$1.rc" "$tmp/$2.rc"; }
said() { grep -q -- "$2" "$tmp/$1.err"; }
notsaid() { ! grep -q -- "$2" "$tmp/$1.err"; }

cmds=$("$etlkit" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
expect "the command list" [ "$(echo "$cmds" | wc -l)" -eq 15 ]

# The option lines of a command's --help: "SHORT LONG NARGS" (SHORT - when none), --help left out.
options() {
  "$etlkit" "$1" --help | awk '
    /^  (-[a-zA-Z], )?--[a-z]/ {
      left = substr($0, 3); i = index(left, "  "); if (i) left = substr(left, 1, i - 1)
      n = split(left, w, " "); short = "-"; k = 1
      if (w[1] ~ /^-[a-zA-Z],$/) { short = substr(w[1], 1, 2); k = 2 }
      if (w[k] != "--help") print short, w[k], n - k
    }'
}
for c in $cmds; do options "$c" >"$tmp/opts.$c"; done
# A value such as @v@ may be a good output name: whatever gets written lands here.
mkdir "$tmp/cwd" && cd "$tmp/cwd" || exit 1
cat "$tmp"/opts.* | awk '{ print $2 }' | sort -u >"$tmp/all"

for c in $cmds; do
  run help "$c" --help
  expect "$c --help: exit 0" [ "$(cat "$tmp/help.rc")" = 0 ]
  expect "$c --help: its usage line" grep -q "^Usage: etlkit $c " "$tmp/help.out"
  expect "$c --help: options listed" [ -s "$tmp/opts.$c" ]
  while read -r short long nargs; do
    case $nargs in
      0) run a "$c" "$long" -- /nonexistent.etl
         expect "$c $long: accepted" notsaid a "unknown option"
         run b "$c" "$long=1" /nonexistent.etl
         expect "$c $long=1: takes no value" said b "$long takes no value" ;;
      1) run a "$c" "$long"
         expect "$c $long: accepted, its value asked for" said a "$long needs "
         run a "$c" "$long" '@v@' /nonexistent.etl
         run b "$c" "$long=@v@" /nonexistent.etl
         expect "$c $long=VALUE as $long VALUE" same a b
         expect "$c $long VALUE: accepted" notsaid a "unknown option" ;;
      2) run a "$c" "$long" 1 '@v@' /nonexistent.etl
         run b "$c" "$long=1" '@v@' /nonexistent.etl
         expect "$c $long=A B as $long A B" same a b
         expect "$c $long A B: accepted, its values checked" said a "$long needs " ;;
    esac
    if [ "$short" != - ]; then
      if [ "$nargs" = 0 ]; then run a "$c" "$short"; else run a "$c" "$short" '@v@' /nonexistent.etl; fi
      expect "$c $short: accepted" notsaid a "unknown option"
    fi
  done <"$tmp/opts.$c"
  # Exactly its table: what other commands list and it does not is unknown to it.
  awk '{ print $2 }' "$tmp/opts.$c" | sort -u | comm -13 - "$tmp/all" >"$tmp/others"
  while read -r long; do
    run a "$c" "$long" /nonexistent.etl
    expect "$c $long: unknown here" said a "unknown option '$long'"
    expect "$c $long: a usage error" [ "$(cat "$tmp/a.rc")" = 64 ]
  done <"$tmp/others"
done

# One real run per command: --opt=value gives the answer --opt value gives.
t=$tmp/t.etl
"$etlkit" synth --quiet --duration 0.2 --pmc 2 -o "$t" || { echo "FAIL: synth" >&2; exit 1; }
real() { # real COMMAND OPTION VALUE [ARGS...]
  c=$1; o=$2; v=$3; shift 3
  run a "$c" "$@" "$o" "$v"
  run b "$c" "$@" "$o=$v"
  expect "$c $o=$v: the same answer as $o $v" same a b
  expect "$c $o $v: ran" notsaid a "Try 'etlkit"
}
real info --threads 2 "$t"
real dump --limit 50 "$t" --format jsonl
real cpu --top 3 "$t"
real waits --longest 2 "$t" --json
real switches --process System "$t" --csv
real export --to ftrace "$t" -o -
real waitchain --depth 1 "$t" --process System --json
real wakeups --top 2 "$t"
real spinlocks --acquire-rate 2000 "$t" --json
real pmc --counters cycles,instructions "$t"
real profile --by process,module "$t" --json
real compare --top 3 "$t" "$t" --json
real report --title T "$t" -o -
"$etlkit" synth --quiet --duration 0.05 --cpus 2 -o "$tmp/s1.etl"
"$etlkit" synth --quiet --duration=0.05 --cpus=2 --output="$tmp/s2.etl"
expect "synth --opt=value: the same trace" cmp -s "$tmp/s1.etl" "$tmp/s2.etl"
# (under one name: the header holds the file's name)
"$etlkit" convert "$t" -o "$tmp/c.etl" --cswitch compact -q && mv "$tmp/c.etl" "$tmp/c1.etl"
"$etlkit" convert "$t" --output="$tmp/c.etl" --cswitch=compact -q
expect "convert --opt=value: the same trace" cmp -s "$tmp/c.etl" "$tmp/c1.etl"

echo "opts.sh: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
