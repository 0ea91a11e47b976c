#!/bin/sh
# dist.sh BUILD [WINDOWS_BUILD] - the release archives in dist/: etlkit-VERSION-linux-x86_64.tar.gz from
# BUILD/etlkit and, when WINDOWS_BUILD is given, etlkit-VERSION-windows-x86_64.zip from its etlkit.exe;
# each with the man page, the README (and the licence once the project has one), and a .sha256 file
# (sha256sum -c checks it). The version is CMakeLists.txt's project() version, the one place it is set.
# Reproducible: files sorted, owner 0, times from the last commit (SOURCE_DATE_EPOCH when set).
set -eu
build=$1; win=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^project(etlkit VERSION \([0-9][0-9.]*\).*/\1/p' "$here/CMakeLists.txt")
[ -n "$version" ] || { echo "dist: no version in CMakeLists.txt" >&2; exit 1; }
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$here" log -1 --format=%ct 2>/dev/null || date +%s)}
out=$here/dist; mkdir -p "$out"
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT

docs() { # docs DIR: what every archive carries beside the program
  cp "$here/README.md" "$here/docs/etlkit.1" "$1/"
  for l in LICENSE LICENSE.md COPYING; do [ -f "$here/$l" ] && cp "$here/$l" "$1/"; done
  return 0
}
sum() { (cd "$out" && sha256sum "$1" > "$1.sha256" && echo "dist: $out/$1 ($(wc -c < "$1") bytes)"); }

name=etlkit-$version-linux-x86_64
mkdir "$stage/$name"
[ -x "$build/etlkit" ] || { echo "dist: $build/etlkit is missing (make build)" >&2; exit 1; }
cp "$build/etlkit" "$stage/$name/"; strip "$stage/$name/etlkit"
docs "$stage/$name"
find "$stage/$name" -exec touch -h -d "@$epoch" {} +
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -cf - "$name" | gzip -9n > "$out/$name.tar.gz"
sum "$name.tar.gz"

if [ -n "$win" ]; then
  name=etlkit-$version-windows-x86_64
  mkdir "$stage/$name"
  [ -f "$win/etlkit.exe" ] || { echo "dist: $win/etlkit.exe is missing (make windows)" >&2; exit 1; }
  cp "$win/etlkit.exe" "$stage/$name/"
  docs "$stage/$name"
  find "$stage/$name" -exec touch -h -d "@$epoch" {} +
  when=$(date -u -d "@$epoch" '+%Y-%m-%d %H:%M:%S')
  (cd "$stage" && find "$name" -type f | sort > list && cmake -E tar cf "$out/$name.zip" --format=zip --mtime="$when UTC" --files-from=list)
  sum "$name.zip"
fi
