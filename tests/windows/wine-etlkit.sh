#!/bin/sh
# wine-etlkit.sh WIN_BUILD - makes WIN_BUILD/etlkit, a script that runs WIN_BUILD/etlkit.exe under wine
# (64-bit) with the arguments, standard streams and exit status it is given: the Windows binary in the
# place of the Linux one for the CLI and golden tests (make test-windows). Its wine prefix is
# WIN_BUILD/wine, created here on first use (half a minute), so no test pays for it.
set -eu
dir=$(cd "$1" && pwd)
wine=$(command -v wine64 || command -v wine || echo /usr/lib/wine/wine64)
[ -x "$wine" ] || { echo "wine-etlkit.sh: no wine (apt-get install wine64)" >&2; exit 1; }
[ -f "$dir/etlkit.exe" ] || { echo "wine-etlkit.sh: no $dir/etlkit.exe (make windows)" >&2; exit 1; }
cat > "$dir/etlkit" <<EOS
#!/bin/sh
# etlkit.exe under wine: made by tests/windows/wine-etlkit.sh.
WINEPREFIX='$dir/wine' WINEDEBUG=-all WINEARCH=win64 exec '$wine' '$dir/etlkit.exe' "\$@"
EOS
chmod +x "$dir/etlkit"
if [ ! -f "$dir/wine/system.reg" ]; then
  echo "wine-etlkit.sh: creating the wine prefix $dir/wine" >&2
  WINEPREFIX="$dir/wine" WINEDEBUG=-all WINEARCH=win64 "$wine" wineboot --init >/dev/null 2>&1 || true
fi
# The first run after a boot starts wineserver: not in a test's time.
"$dir/etlkit" --version >/dev/null
