#!/bin/sh
# spinpmc.sh ETLKIT - spinlocks and pmc on selections and damaged inputs (explore10 A, B, C, H, E): a number that
# cannot be computed is not printed as one, a bound is never narrower than the truth allows, damage is told.
set -u
etlkit=$1
here=$(dirname "$0")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
check() { # check NAME EXPECTED_STATUS ACTUAL_STATUS
  if [ "$2" = "$3" ]; then passes=$((passes+1)); else echo "FAIL: $1: exit $3, expected $2" >&2; fails=$((fails+1)); fi
}
expect() { # expect NAME CONDITION...
  name=$1; shift
  if "$@"; then passes=$((passes+1)); else echo "FAIL: $name" >&2; fails=$((fails+1)); fi
}
dmg() { python3 "$here/spinpmc_damage.py" "$etlkit" "$@" 2>/dev/null; }
a=$tmp/a.etl
"$etlkit" synth -q --pmc 4 --lock-rate 20000 --seed 3 --duration 1 -o "$a"; check "synth" 0 $?

# A: a selection's bounds come from every event of each CPU (its counter is shared by all threads), and say so.
"$etlkit" spinlocks "$a" --process 868 >"$tmp/out" 2>&1; check "spinlocks --process" 0 $?
expect "spinlocks --process: the bounds are a selection's" grep -q "^Note: the bounds of a selection of threads are wide" "$tmp/out"
"$etlkit" spinlocks "$a" --process 868 --json >"$tmp/out" 2>&1; check "spinlocks --process --json" 0 $?
expect "spinlocks --process --json: bounds_note" grep -q '"bounds_note":"the bounds of a selection of threads are wide' "$tmp/out"
"$etlkit" spinlocks "$a" --json >"$tmp/out" 2>&1; check "spinlocks --json" 0 $?
expect "spinlocks --json: no bounds_note" grep -q '"bounds_note":null' "$tmp/out"
"$etlkit" spinlocks "$a" >"$tmp/out" 2>&1
expect "spinlocks: no selection note" sh -c "! grep -q 'bounds of a selection' '$tmp/out'"

echo "spinpmc: $passes passed, $fails failed"
[ "$fails" = 0 ]
