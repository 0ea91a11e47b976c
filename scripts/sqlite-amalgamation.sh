#!/bin/sh
# sqlite-amalgamation.sh DIR - puts SQLite's public-domain amalgamation (sqlite3.c, sqlite3.h) in DIR
# for the Windows build: Debian has no mingw build of SQLite. The source is SQLite's own release
# tarball (sqlite-autoconf), shipped unmodified inside the npm package "sqlite3" (node-sqlite3's
# deps/); both archives are pinned by SHA-256 and checked on every run, before anything is used.
set -eu
dir=$1
NPM_PKG=sqlite3@6.0.1
NPM_TGZ=sqlite3-6.0.1.tgz
NPM_SHA256=ab8d044a93e05bd031d7ea75547c7fa60387cdc259d27f93c0e3e2832c4b1df9
SQLITE=sqlite-autoconf-3520000
SQLITE_SHA256=f6b50b0c103392af32a8be15b2b9d25959de9a00a70c3979128aafeaa5338b3f

check() { # FILE SHA256
  got=$(sha256sum "$1" | cut -d' ' -f1)
  [ "$got" = "$2" ] && return 0
  echo "sqlite-amalgamation.sh: $1: SHA-256 $got, expected $2: not used" >&2
  exit 1
}

mkdir -p "$dir"
cd "$dir"
if [ ! -f "$NPM_TGZ" ]; then
  command -v npm >/dev/null || { echo "sqlite-amalgamation.sh: npm is needed (apt-get install npm)" >&2; exit 1; }
  npm pack --silent "$NPM_PKG" >/dev/null
fi
check "$NPM_TGZ" "$NPM_SHA256"
tar --no-same-owner -xzf "$NPM_TGZ" "package/deps/$SQLITE.tar.gz"
check "package/deps/$SQLITE.tar.gz" "$SQLITE_SHA256"
tar --no-same-owner -xzf "package/deps/$SQLITE.tar.gz" "$SQLITE/sqlite3.c" "$SQLITE/sqlite3.h"
mv "$SQLITE/sqlite3.c" "$SQLITE/sqlite3.h" .
rm -rf package "$SQLITE"
