#!/bin/sh
# install.sh BUILD SOURCE - the library as a consumer gets it: `cmake --install` into a temporary
# prefix, the files and names a package needs (bin, headers, libetlkit.a, libetlkit.so with its
# SONAME and versioned links, etlkit.pc, the CMake package, the man page), only the public API
# exported (by the .so, and global in the .a), every header compiled as C++, then examples/ built
# against the prefix moved elsewhere (both must be relocatable): with pkg-config, with
# find_package(etlkit) (shared and static, and static without pkg-config), and run on traces, their
# answers compared with the CLI's; a program with functions named as the library's internal ones
# (own_names.c) linked statically; find_package without SQLite's and zstd's libraries.
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
major=${version%.*} # the SONAME's number: 0.y before 1.0 (an ABI each)
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
# The static archive likewise: a global symbol outside the API (csv_field, fmt_dur...) would be taken by a
# program's own function of that name, silently. Allowed: etl_* and ETL_*, and only what the .so exports.
nm -g --defined-only "$tmp/p/$libdir/libetlkit.a" | awk 'NF == 3 {print $3}' | sort > "$tmp/archived"
grep -v -e '^etl_' -e '^ETL_' "$tmp/archived" > "$tmp/unprefixed"
expect "libetlkit.a defines no global symbol without etl_/ETL_ ($(wc -l < "$tmp/unprefixed"): $(head -5 "$tmp/unprefixed" | tr '\n' ' '))" \
  [ ! -s "$tmp/unprefixed" ]
expect "libetlkit.a's globals = libetlkit.so's exports ($(comm -3 "$tmp/archived" "$tmp/exported" | head -5 | tr '\n' ' '))" \
  cmp -s "$tmp/archived" "$tmp/exported"

# C++ programs: every header alone, the umbrella first, with each C++ compiler there is; then one linked.
for cxx in g++ clang++; do
  command -v $cxx >/dev/null || { echo "install: no $cxx: its C++ header check skipped"; continue; }
  for h in etlkit.h $(cd "$tmp/p/include/etlkit" && echo ./*.h); do
    h=${h#./}
    if printf '#include <etlkit/%s>\n' "$h" |
       $cxx -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I"$tmp/p/include" -x c++ - 2>"$tmp/err"; then ok; else
      bad "$cxx -std=c++17 -Wall -Wextra -Werror <etlkit/$h>: $(grep -m1 -e 'error' "$tmp/err")"
    fi
  done
done
printf '#include <etlkit/etlkit.h>\n#include <cstdio>\nint main() { std::printf("%%s\\n", etl_version()); }\n' > "$tmp/app.cpp"
if command -v g++ >/dev/null; then
  if g++ -std=c++17 -I"$tmp/p/include" "$tmp/app.cpp" -L"$tmp/p/$libdir" -letlkit -o "$tmp/app_cxx" 2>"$tmp/err"; then
    expect "a C++ program linked with libetlkit.so says the version" \
      sh -c "LD_LIBRARY_PATH='$tmp/p/$libdir' '$tmp/app_cxx' | grep -qx '$version'"
  else bad "a C++ program linked with libetlkit.so"; cat "$tmp/err"; fi
fi

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
# The static archive through pkg-config --static, with --gc-sections (the one prelinked object is compiled with a
# section per function: only what the program uses stays).
mkdir "$tmp/pc-static"
for e in read_records cpu_usage; do
  # shellcheck disable=SC2046
  expect "pkg-config --static build of $e (--gc-sections)" cc -std=c11 -Wall -Werror -Wl,--gc-sections -o "$tmp/pc-static/$e" \
    "$src/examples/$e.c" $(pkg-config --static --cflags --libs etlkit | sed 's/-letlkit\b/-l:libetlkit.a/')
done
text=$(size "$tmp/pc-static/read_records" | awk 'NR == 2 {print $1}')
expect "--gc-sections keeps what read_records uses only (text $text bytes; the whole library's is ~600 KB)" \
  [ "${text:-999999}" -lt 200000 ]
expect "the pkg-config build uses the moved libetlkit.so.$major" \
  sh -c "LD_LIBRARY_PATH='$p/$libdir' ldd '$tmp/pc/cpu_usage' | grep -q '$p/$libdir/libetlkit.so.$major'"
# static-nopc: etlkit::etlkit_static finds SQLite and zstd without pkg-config too.
for kind in shared static static-nopc; do
  set -- -DETLKIT_STATIC=OFF
  [ $kind = static ] && set -- -DETLKIT_STATIC=ON
  [ $kind = static-nopc ] && set -- -DETLKIT_STATIC=ON -DPKG_CONFIG_EXECUTABLE="$tmp/no-pkg-config"
  if cmake -S "$src/examples" -B "$tmp/cm-$kind" -DCMAKE_PREFIX_PATH="$p" "$@" >/dev/null 2>"$tmp/err" &&
     cmake --build "$tmp/cm-$kind" >/dev/null 2>>"$tmp/err"; then ok; else bad "find_package build ($kind)"; cat "$tmp/err"; fi
done

# A program's own csv_field, json_str, tbl_init and synth_write beside the static library's: the CSV header
# rows the library writes are its own (not "[mine:trace_id],..."), the program's functions are the program's.
own_names() { # own_names NAME BINARY
  rm -rf "$tmp/csv"
  out=$("$2" "$tmp/csv" 2>&1)
  expect "$1: own_names runs, its functions its own ($out)" [ "$out" = "[mine:x] 2 mine 3" ]
  head=$(head -1 "$tmp/csv/cswitch.csv" 2>/dev/null | tr -d '\r' | cut -d, -f1-4)
  expect "$1: the library's own csv_field wrote cswitch.csv's header ('$head')" [ "$head" = "trace_id,ts,ns,cpu" ]
}
# shellcheck disable=SC2046
if cc -std=c11 -Wall -Werror -o "$tmp/own_names_pc" "$src/tests/install/own_names.c" \
     $(pkg-config --static --cflags --libs etlkit | sed 's/-letlkit\b/-l:libetlkit.a/') 2>"$tmp/err"; then
  own_names "pkg-config --static" "$tmp/own_names_pc"
else bad "pkg-config --static build of own_names.c"; cat "$tmp/err"; fi
expect "own_names (pkg-config --static) does not need libetlkit.so" sh -c "! ldd '$tmp/own_names_pc' | grep -q libetlkit"
if cmake -S "$src/tests/install" -B "$tmp/own" -DCMAKE_PREFIX_PATH="$p" -DETLKIT_COMPONENTS=static >/dev/null 2>"$tmp/err" &&
   cmake --build "$tmp/own" >/dev/null 2>>"$tmp/err"; then
  own_names "etlkit::etlkit_static" "$tmp/own/own_names"
else bad "find_package build of own_names.c (etlkit::etlkit_static)"; cat "$tmp/err"; fi

# Without SQLite's and zstd's libraries (no pkg-config, the system prefixes ignored): COMPONENTS static fails at
# find_package saying why; the shared library alone still builds. Skipped where they are found elsewhere.
nodeps() { # nodeps DIR ARGS...: the consumer configured without them
  d=$1; shift
  cmake -S "$src/tests/install" -B "$d" -DCMAKE_PREFIX_PATH="$p" -DPKG_CONFIG_EXECUTABLE="$tmp/no-pkg-config" \
    "-DCMAKE_IGNORE_PREFIX_PATH=/usr;/usr/local;/" "$@" >"$tmp/out" 2>"$tmp/err"
}
nodeps "$tmp/nodeps-shared" -DETLKIT_LINK=etlkit::etlkit; st=$?
if ! grep -q 'ETLKIT_SQLITE3_LIBRARY:FILEPATH=/' "$tmp/nodeps-shared/CMakeCache.txt" 2>/dev/null; then
  expect "without SQLite and zstd: find_package(etlkit) for the shared library ($(head -3 "$tmp/err"))" [ $st -eq 0 ]
  expect "without SQLite and zstd: the shared library's consumer builds" sh -c "cmake --build '$tmp/nodeps-shared' >/dev/null"
  expect "without SQLite and zstd: find_package(etlkit) says why etlkit::etlkit_static is not there" \
    grep -q 'etlkit::etlkit_static is not defined: it links sqlite3 and zstd' "$tmp/out"
  nodeps "$tmp/nodeps-static" -DETLKIT_COMPONENTS=static; st=$?
  expect "without SQLite and zstd: find_package(etlkit COMPONENTS static) fails" [ $st -ne 0 ]
  expect "without SQLite and zstd: find_package(etlkit COMPONENTS static) says why ($(grep -m1 -A1 'Reason' "$tmp/err" | tr '\n' ' '))" \
    sh -c "tr -s ' \n' '  ' < '$tmp/err' | grep -q 'etlkit::etlkit_static is not defined: it links sqlite3 and zstd'"
else
  echo "install: SQLite found outside the ignored prefixes: the check without it skipped"
fi

# The answers: the examples against the CLI, on a trace with switches and on real samples.
export LD_LIBRARY_PATH="$p/$libdir"
processes() { # the processes of `etlkit cpu --json` as "PID NAME CPU_NS" lines
  "$p/bin/etlkit" cpu --json --top 0 "$1" | grep -o '"pid":[0-9]*,"name":"[^"]*","cpu_ns":[0-9]*' |
    sed 's/"pid":\([0-9]*\),"name":"\([^"]*\)","cpu_ns":\([0-9]*\)/\1 \2 \3/'
}
for t in "$src/samples/synth-4cpu-1s.etl" "$src/tests/data/synth-64-qpc-compact.etl" "$src/samples/kernel-shutdown-x64.etl"; do
  tn=$(basename "$t")
  records=$("$p/bin/etlkit" info --json "$t" | grep -o '"records":[0-9]*' | head -1 | cut -d: -f2)
  for b in "$tmp/pc" "$tmp/pc-static" "$tmp/cm-shared" "$tmp/cm-static" "$tmp/cm-static-nopc"; do
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
