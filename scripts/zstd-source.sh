#!/bin/sh
# zstd-source.sh DIR - zstd's source tree in DIR/zstd for the Windows build, which compiles its lib/
# (common and compress: the Parquet export's compressor) into etlkit.exe: Debian has no mingw build
# of zstd. The source is Debian's own source package (apt-get source, from the same archive and signed
# release files as every package, through a list of its own under DIR: the machine's apt configuration
# is not touched), as scripts/windows-test-deps.sh fetches cmocka and jansson. Done once.
set -eu
dir=$1
[ -f "$dir/zstd/lib/zstd.h" ] && exit 0
mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
dir=$(cd "$dir" && pwd)
cat > "$dir/debian.sources" <<EOS
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
apt() {
  apt-get -qq -o Dir::Etc::SourceList="$dir/debian.sources" -o Dir::Etc::SourceParts=/dev/null \
    -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" -o APT::Sandbox::User=root "$@"
}
echo "zstd-source.sh: zstd from Debian's sources into $dir/zstd" >&2
apt update >/dev/null
(cd "$dir" && apt source --download-only libzstd >/dev/null)
cd "$dir"
rm -rf zstd zstd-*/
tar --no-same-owner -xf libzstd_*.orig.tar.xz
mv zstd-*/ zstd
