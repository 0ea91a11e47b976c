#!/bin/sh
# dlls.sh EXE - the Windows binary is one file: it may import only DLLs every Windows has.
set -eu
bad=$(x86_64-w64-mingw32-objdump -p "$1" | sed -n 's/^[[:space:]]*DLL Name: //p' |
      grep -v -i -x -E 'kernel32\.dll|msvcrt\.dll|shell32\.dll|user32\.dll|advapi32\.dll|ws2_32\.dll' || true)
if [ -n "$bad" ]; then
  echo "dlls.sh: $1 needs DLLs that are not Windows' own:" $bad >&2
  exit 1
fi
echo "$1: one file (imports only Windows' own DLLs)"
