#!/bin/sh
# install.sh BUILD SOURCE - the library as a consumer gets it: `cmake --install` into a temporary
# prefix, the files and names a package needs (bin, headers, libetlkit.a, libetlkit.so with its
# SONAME and versioned links, etlkit.pc, the CMake package, the man page), only the public API
# exported, then examples/ built against the prefix moved elsewhere (both must be relocatable):
# with pkg-config, with find_package(etlkit) (shared and static), and run on traces, their
# answers compared with the CLI's.
set -u
build=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
passes=0; fails=0
ok() { passes=$((passes+1)); }
bad() { echo "FAIL: $*"; fails=$((fails+1)); }
expect() { n=$1; shift; if "$@"; then ok; else bad "$n"; fi; }

cmake --install "$build" --prefix "$tmp/p" >/dev/null || { echo "FAIL: cmake --install"; exit 1; }
libdir=$(cd "$tmp/p" && ls -d lib*/libetlkit.a | head -1 | xargs dirname)
version=$("$tmp/p/bin/etlkit" --version | awk '{print $2}')
major=${version%%.*}
for f in bin/etlkit include/etlkit/etlkit.h include/etlkit/sched.h "$libdir/libetlkit.a" \
         "$libdir/libetlkit.so.$version" "$libdir/pkgconfig/etlkit.pc" "$libdir/cmake/etlkit/etlkitConfig.cmake" \
         "$libdir/cmake/etlkit/etlkitConfigVersion.cmake" "$libdir/cmake/etlkit/etlkitTargets.cmake" \
         share/man/man1/etlkit.1; do
  expect "installed $f" [ -f "$tmp/p/$f" ]
done
expect "libetlkit.so -> libetlkit.so.$major" [ "$(readlink "$tmp/p/$libdir/libetlkit.so")" = "libetlkit.so.$major" ]
expect "libetlkit.so.$major -> libetlkit.so.$version" [ "$(readlink "$tmp/p/$libdir/libetlkit.so.$major")" = "libetlkit.so.$version" ]
soname=$(objdump -p "$tmp/p/$libdir/libetlkit.so.$version" | awk '$1 == "SONAME" {print $2}')
expect "SONAME libetlkit.so.$major (got $soname)" [ "$soname" = "libetlkit.so.$major" ]

# Only the public API: every function the installed headers declare (ETL_API), nothing else.
nm -D --defined-only "$tmp/p/$libdir/libetlkit.so" | awk '$2 == "T" {print $3}' | sort > "$tmp/exported"
grep -h '^ETL_API' "$tmp/p/include/etlkit/"*.h | sed 's/(.*//' | awk '{print $NF}' | tr -d '*' | sort -u > "$tmp/declared"
expect "exported = declared ($(wc -l < "$tmp/exported") vs $(wc -l < "$tmp/declared"): $(comm -3 "$tmp/exported" "$tmp/declared" | head -5 | tr '\n' ' '))" \
  cmp -s "$tmp/exported" "$tmp/declared"
# A public function declared without ETL_API would be neither: none may be.
grep -nE '^[a-z_][a-z0-9_ ]*[ *]etl_[a-z0-9_]+\(' "$tmp/p/include/etlkit/"*.h | grep -v -e ':ETL_API ' -e ':static ' > "$tmp/unmarked"
expect "every public function is ETL_API ($(head -3 "$tmp/unmarked" | tr '\n' ' '))" [ ! -s "$tmp/unmarked" ]
expect "the API is not empty" [ "$(wc -l < "$tmp/declared")" -gt 100 ]

# Relocatable: the prefix moved after the install.
mv "$tmp/p" "$tmp/moved"; p=$tmp/moved
export PKG_CONFIG_PATH="$p/$libdir/pkgconfig"
expect "pkg-config --modversion" [ "$(pkg-config --modversion etlkit)" = "$version" ]
expect "pkg-config's includedir is the moved prefix's" [ -f "$(pkg-config --variable=includedir etlkit)/etlkit/etlkit.h" ]
expect "pkg-config's libdir is the moved prefix's" [ -f "$(pkg-config --variable=libdir etlkit)/libetlkit.so.$major" ]
mkdir "$tmp/pc"
for e in read_records cpu_usage; do
  # shellcheck disable=SC2046
  expect "pkg-config build of $e" cc -std=c11 -Wall -Werror -o "$tmp/pc/$e" "$src/examples/$e.c" $(pkg-config --cflags --libs etlkit)
done
expect "the pkg-config build uses the moved libetlkit.so.$major" \
  sh -c "LD_LIBRARY_PATH='$p/$libdir' ldd '$tmp/pc/cpu_usage' | grep -q '$p/$libdir/libetlkit.so.$major'"
for kind in shared static; do
  st=OFF; [ $kind = static ] && st=ON
  if cmake -S "$src/examples" -B "$tmp/cm-$kind" -DCMAKE_PREFIX_PATH="$p" -DETLKIT_STATIC=$st >/dev/null 2>"$tmp/err" &&
     cmake --build "$tmp/cm-$kind" >/dev/null 2>>"$tmp/err"; then ok; else bad "find_package build ($kind)"; cat "$tmp/err"; fi
done

# The answers: the examples against the CLI, on a trace with switches and on real samples.
export LD_LIBRARY_PATH="$p/$libdir"
processes() { # the processes of `etlkit cpu --json` as "PID NAME CPU_NS" lines
  "$p/bin/etlkit" cpu --json --top 0 "$1" | grep -o '"pid":[0-9]*,"name":"[^"]*","cpu_ns":[0-9]*' |
    sed 's/"pid":\([0-9]*\),"name":"\([^"]*\)","cpu_ns":\([0-9]*\)/\1 \2 \3/'
}
for t in "$src/samples/synth-4cpu-1s.etl" "$src/tests/data/synth-64-qpc-compact.etl" "$src/samples/kernel-shutdown-x64.etl"; do
  tn=$(basename "$t")
  records=$("$p/bin/etlkit" info --json "$t" | grep -o '"records":[0-9]*' | head -1 | cut -d: -f2)
  for b in "$tmp/pc" "$tmp/cm-shared" "$tmp/cm-static"; do
    got=$("$b/read_records" "$t" | tail -1)
    expect "$tn: $(basename "$b") read_records: '$got', info says $records" [ "$got" = "records: $records" ]
    "$b/cpu_usage" "$t" > "$tmp/got" || bad "$tn: $(basename "$b") cpu_usage failed"
    processes "$t" > "$tmp/want"; cat "$tmp/want" >> "$tmp/all"
    expect "$tn: $(basename "$b") cpu_usage = etlkit cpu ($(diff "$tmp/want" "$tmp/got" | head -3 | tr '\n' ' '))" cmp -s "$tmp/want" "$tmp/got"
  done
done
[ -s "$tmp/all" ] || bad "no process compared"

echo "install: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
