#!/bin/sh
# waitchain_device.sh ETLKIT - waitchain reads FILE once per level, so FILE must be a regular file: what it
# refuses (exit 64, unread) the message names as it is. `waitchain /dev/null` said "standard input or a pipe
# will not do" for a device (final33). A directory is an I/O error (exit 1) as in every command.
set -u
etlkit=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
bad() { echo "waitchain_device: $*" >&2; fails=$((fails + 1)); }
# run NAME STATUS PATTERN ANTIPATTERN ARGS...: the exit status, a line of stderr matching PATTERN, none ANTIPATTERN.
run() {
  name=$1 want=$2 pat=$3 anti=$4; shift 4
  timeout 60 "$etlkit" waitchain "$@" --thread 4 </dev/null >/dev/null 2>"$dir/err"; rc=$?
  [ $rc -eq "$want" ] || bad "$name: exit $rc, not $want: $(head -1 "$dir/err")"
  grep -q -- "$pat" "$dir/err" || bad "$name: no '$pat' in: $(head -1 "$dir/err")"
  [ -z "$anti" ] || ! grep -q -- "$anti" "$dir/err" || bad "$name: '$anti' in: $(head -1 "$dir/err")"
}
run "a device" 64 "'/dev/null' is not (a pipe will not do, nor a device)" "standard input" /dev/null
run "standard input" 64 "standard input will not do" "" -
mkfifo "$dir/fifo.etl" && run "a pipe" 64 "is not (a pipe will not do" "standard input" "$dir/fifo.etl"
run "a directory" 1 "is a directory" "" "$dir"
[ $fails -eq 0 ] && echo "waitchain_device: all checks passed"
[ $fails -eq 0 ]
