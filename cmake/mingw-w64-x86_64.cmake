# mingw-w64-x86_64.cmake - cross-compiling etlkit for 64-bit Windows with Debian's mingw-w64
# (gcc-mingw-w64-x86-64): `make windows`, or cmake -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64.cmake.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(ETLKIT_MINGW_TRIPLET x86_64-w64-mingw32)
# The posix flavour: its winpthreads gives clock_gettime and nanosleep (cmd_synth, test_container); the
# library's threads are Windows' own (src/base/platform_win32.c).
find_program(CMAKE_C_COMPILER NAMES ${ETLKIT_MINGW_TRIPLET}-gcc-posix ${ETLKIT_MINGW_TRIPLET}-gcc REQUIRED)
find_program(CMAKE_RC_COMPILER NAMES ${ETLKIT_MINGW_TRIPLET}-windres)
set(CMAKE_FIND_ROOT_PATH /usr/${ETLKIT_MINGW_TRIPLET})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# ETLKIT_MINGW_DEPS: a prefix with more Windows libraries (the unit tests' cmocka and jansson, which
# scripts/windows-test-deps.sh builds there).
if(ETLKIT_MINGW_DEPS)
  list(APPEND CMAKE_FIND_ROOT_PATH ${ETLKIT_MINGW_DEPS})
  set(ETLKIT_MINGW_PC ${ETLKIT_MINGW_DEPS}/lib/pkgconfig:/usr/${ETLKIT_MINGW_TRIPLET}/lib/pkgconfig)
else()
  set(ETLKIT_MINGW_PC /usr/${ETLKIT_MINGW_TRIPLET}/lib/pkgconfig)
endif()
# pkg-config sees the target's .pc files only, never the build machine's Linux libraries.
set(ENV{PKG_CONFIG_LIBDIR} ${ETLKIT_MINGW_PC})
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")
# printf's %zu, %llu and %Lf as glibc's (msvcrt's own printf has none of them); one .exe, only
# Windows' own DLLs beside it (libgcc and winpthreads linked in).
add_compile_definitions(__USE_MINGW_ANSI_STDIO=1)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
# Tests run through wine (make test-windows).
find_program(ETLKIT_WINE NAMES wine64 wine PATHS /usr/lib/wine)
if(ETLKIT_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${ETLKIT_WINE})
endif()
