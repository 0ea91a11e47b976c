#!/bin/sh
# windows-test-deps.sh PREFIX - cmocka and jansson for the Windows unit tests (make test-windows), which
# Debian has no mingw build of: their Debian source packages (apt-get source, from the same archive
# and signed release files as every package, through a list of its own under PREFIX: the machine's
# apt configuration is not touched), cross-compiled with cmake/mingw-w64-x86_64.cmake into PREFIX as
# static libraries with their pkg-config files. Done once; zlib is Debian's libz-mingw-w64-dev.
set -eu
prefix=$1
here=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$prefix/lib/libcmocka.a" ] && [ -f "$prefix/lib/libjansson.a" ] && exit 0
mkdir -p "$prefix/src/lists/partial"
prefix=$(cd "$prefix" && pwd)
src=$prefix/src
cat > "$src/debian.sources" <<EOS
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
apt() {
  apt-get -qq -o Dir::Etc::SourceList="$src/debian.sources" -o Dir::Etc::SourceParts=/dev/null \
    -o Dir::State::Lists="$src/lists" -o Dir::Cache="$src/cache" -o APT::Sandbox::User=root "$@"
}
echo "windows-test-deps.sh: cmocka and jansson from Debian's sources into $prefix" >&2
mkdir -p "$src/cache/archives/partial"
apt update >/dev/null
(cd "$src" && apt source --download-only cmocka jansson >/dev/null)
build() { # NAME SOURCE-DIR CMAKE-OPTIONS...
  name=$1; dir=$2; shift 2
  cmake -S "$dir" -B "$src/build-$name" -DCMAKE_TOOLCHAIN_FILE="$here/cmake/mingw-w64-x86_64.cmake" \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$src/build-$name" -j2 >/dev/null
  cmake --install "$src/build-$name" >/dev/null
}
cd "$src"
rm -rf cmocka-*/ jansson-*/
tar --no-same-owner -xf cmocka_*.orig.tar.xz
tar --no-same-owner -xf jansson_*.orig.tar.gz
build cmocka cmocka-*/ -DWITH_STATIC_LIB=ON -DWITH_EXAMPLES=OFF -DUNIT_TESTING=OFF
# The static archive under the name -lcmocka finds (the tests link statically: one .exe each).
mv "$prefix/lib/libcmocka-static.a" "$prefix/lib/libcmocka.a"
rm -f "$prefix/lib/libcmocka.dll.a" "$prefix/bin/cmocka.dll"
build jansson jansson-*/ -DJANSSON_BUILD_DOCS=OFF -DJANSSON_EXAMPLES=OFF -DJANSSON_WITHOUT_TESTS=ON \
  -DJANSSON_BUILD_SHARED_LIBS=OFF
