#!/bin/sh
# deps.sh [build|test] - installs the Debian packages etlkit needs, only those missing.
# "build" is what compiling the tool needs; "test" adds the test, sanitizer and fuzz tools;
# "windows" the cross-compiler, zlib for it and wine (make windows, make test-windows) and npm (SQLite's source).
set -eu
want="gcc make cmake pkg-config libsqlite3-dev libzstd-dev"
if [ "${1:-build}" = test ]; then
  want="$want libcmocka-dev libjansson-dev zlib1g-dev clang libclang-rt-14-dev sqlite3 protobuf-compiler chromium nodejs jq llvm lld python3"
fi
if [ "${1:-build}" = windows ]; then
  want="$want gcc-mingw-w64-x86-64 libz-mingw-w64-dev wine wine64"
  command -v npm >/dev/null 2>&1 || want="$want npm"
fi
missing=""
for p in $want; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps.sh: installing$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
