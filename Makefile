# etlkit - convenience targets around CMake. `make demo` and `make test` are the
# README's Quick start: each installs what it needs (apt-get, only what is missing).

BUILD       ?= build
ASAN_BUILD  ?= build-asan
TSAN_BUILD  ?= build-tsan
FUZZ_BUILD  ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_LONG_SECONDS ?= 3600
JOBS        ?= $(shell nproc 2>/dev/null || echo 2)
SHARED      ?= $(CURDIR)/../shared
DEMO_TRACE  ?= samples/synth-4cpu-1s.etl
WIN_BUILD   ?= build-windows

.PHONY: all build demo test test-unit test-asan test-tsan fuzz fuzz-long bench bench-large bench-read unchanged dist deps deps-test clean \
        windows test-windows deps-windows

all: build

deps:
	@sh scripts/deps.sh build

deps-test:
	@sh scripts/deps.sh test

deps-windows:
	@sh scripts/deps.sh windows

build: deps
	cmake -S . -B $(BUILD) -DETLKIT_TESTS=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

# The main job on the bundled synthesized trace (a 1-second 4-CPU machine whose every switch is known; the
# bundled real trace has no context switches): who used the CPUs, who waited, and the page to share.
demo: build
	$(BUILD)/etlkit cpu --top 5 $(DEMO_TRACE)
	$(BUILD)/etlkit waits --top 3 --longest 3 $(DEMO_TRACE)
	$(BUILD)/etlkit report --force $(DEMO_TRACE) -o $(BUILD)/demo-report.html
	@echo "demo: the report is $(CURDIR)/$(BUILD)/demo-report.html (open it in a browser)"

# Everything CI runs: unit + golden + CLI + install tests, the same under ASan+UBSan, the fuzzers, then the
# Windows build under wine.
test: deps-test test-unit test-asan fuzz test-windows

test-unit:
	@echo "make: test-unit from $$(date +%T)"
	cmake -S . -B $(BUILD)-test -DETLKIT_TESTS=ON -DETLKIT_SHARED_DIR=$(SHARED) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD)-test -j$(JOBS)
	ctest --test-dir $(BUILD)-test --output-on-failure -j$(JOBS)

# -O1, as the sanitizers' authors advise: the same checks (asserts kept), the suite in a third of -O0's time.
test-asan:
	@echo "make: test-asan from $$(date +%T)"
	cmake -S . -B $(ASAN_BUILD) -DETLKIT_TESTS=ON -DETLKIT_SANITIZE=ON -DETLKIT_SHARED_DIR=$(SHARED) \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" >/dev/null
	cmake --build $(ASAN_BUILD) -j$(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j$(JOBS)

# Not in CI: the suite under ThreadSanitizer (the readers on as many threads as the CPUs available).
test-tsan:
	cmake -S . -B $(TSAN_BUILD) -DETLKIT_TESTS=ON -DETLKIT_SANITIZE=thread -DETLKIT_SHARED_DIR=$(SHARED) \
	  -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" >/dev/null
	cmake --build $(TSAN_BUILD) -j$(JOBS)
	TSAN_OPTIONS=halt_on_error=1 ctest --test-dir $(TSAN_BUILD) --output-on-failure -j$(JOBS) -E large

fuzz:
	@echo "make: fuzz from $$(date +%T)"
	cmake -S . -B $(FUZZ_BUILD) -DETLKIT_FUZZ=ON -DETLKIT_TESTS=OFF -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(FUZZ_BUILD) -j$(JOBS)
	sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(SHARED)/samples

# Not in CI: every fuzzer for FUZZ_LONG_SECONDS (an hour) each, corpora kept in $(FUZZ_BUILD)/fuzz-corpus.
fuzz-long:
	cmake -S . -B $(FUZZ_BUILD) -DETLKIT_FUZZ=ON -DETLKIT_TESTS=OFF -DCMAKE_C_COMPILER=clang \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(FUZZ_BUILD) -j$(JOBS)
	sh tests/fuzz/long.sh $(FUZZ_BUILD) $(FUZZ_LONG_SECONDS) $(SHARED)/samples

# Read throughput on the real samples and on 1 GiB synthesized traces, made on first use (not a test).
# The ratio table (bench/bench.sh): every command against `cat FILE > /dev/null` on synthesized
# 100 MB and 1 GB traces, full and compact, made in $(BUILD)/bench on first use. Not a test.
bench: build
	sh bench/bench.sh $(BUILD)/etlkit $(BUILD)/bench 100M 1G

# The same with a 4 GB input as well (the growth must stay linear).
bench-large: build
	sh bench/bench.sh $(BUILD)/etlkit $(BUILD)/bench 100M 1G 4G

# The library's read paths alone (open + index, file order, time order, decode) on the samples.
bench-read: build
	$(BUILD)/bench_read -n 3 $(SHARED)/samples/*.etl

# The release archives in dist/ (scripts/dist.sh): the Linux tarball and the Windows zip, each with a .sha256.
dist: build windows
	sh scripts/dist.sh $(BUILD) $(WIN_BUILD)

# A refactoring's proof: every answer of this tree's etlkit equals OLD's (an etlkit binary built from an
# earlier commit), byte for byte, on every command and output form (tests/cli/unchanged.sh).
unchanged: build
	@test -n "$(OLD)" || { echo "make unchanged OLD=/path/to/old/etlkit" >&2; exit 64; }
	sh tests/cli/unchanged.sh $(OLD) $(BUILD)/etlkit $(SHARED)/samples

# etlkit.exe for 64-bit Windows, cross-compiled with mingw-w64 (cmake/mingw-w64-x86_64.cmake), one file
# linking only Windows' own DLLs; SQLite compiled in from its amalgamation (scripts/sqlite-amalgamation.sh),
# zstd from Debian's source package (scripts/zstd-source.sh).
windows: deps-windows
	@echo "make: windows from $$(date +%T)"
	sh scripts/sqlite-amalgamation.sh $(WIN_BUILD)/sqlite
	sh scripts/zstd-source.sh $(WIN_BUILD)/zstd-src
	cmake -S . -B $(WIN_BUILD) -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64.cmake \
	  -DETLKIT_SQLITE_AMALGAMATION=$(CURDIR)/$(WIN_BUILD)/sqlite \
	  -DETLKIT_ZSTD_SOURCE=$(CURDIR)/$(WIN_BUILD)/zstd-src/zstd -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(WIN_BUILD) -j$(JOBS) --target etlkit_cli
	sh tests/windows/dlls.sh $(WIN_BUILD)/etlkit.exe

# The Windows build under wine (64-bit, its prefix in $(WIN_BUILD)/wine): the unit tests cross-compiled
# (cmocka and jansson built for Windows from Debian's sources: scripts/windows-test-deps.sh), then the
# CLI, golden and export tests, Linux's harnesses built in $(WIN_BUILD)/linux-tests with etlkit.exe in
# the place of etlkit (tests/windows/wine-etlkit.sh); what needs Linux skips, one line each. A test that fails
# is run again (three times at most): wine now and then fails to start a program (seen: a unit test that passes
# every time ended in 0.00 s with no output once in CI); a real failure fails all three.
WINE_ENV = WINEPREFIX=$(CURDIR)/$(WIN_BUILD)/wine WINEDEBUG=-all WINEARCH=win64
test-windows: deps-test windows
	@echo "make: test-windows from $$(date +%T)"
	sh scripts/windows-test-deps.sh $(WIN_BUILD)/deps
	sh tests/windows/wine-etlkit.sh $(WIN_BUILD)
	cmake -S . -B $(WIN_BUILD) -DETLKIT_TESTS=ON -DETLKIT_MINGW_DEPS=$(CURDIR)/$(WIN_BUILD)/deps \
	  -DETLKIT_SHARED_DIR=$(SHARED) >/dev/null
	cmake --build $(WIN_BUILD) -j$(JOBS)
	$(WINE_ENV) ctest --test-dir $(WIN_BUILD) --output-on-failure -j$(JOBS) -L unit --repeat until-pass:3
	cmake -S . -B $(WIN_BUILD)/linux-tests -DETLKIT_TESTS=ON -DETLKIT_SHARED_DIR=$(SHARED) \
	  -DETLKIT_TEST_CLI=$(CURDIR)/$(WIN_BUILD)/etlkit -DETLKIT_TEST_TARGET=windows -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(WIN_BUILD)/linux-tests -j$(JOBS)
	ctest --test-dir $(WIN_BUILD)/linux-tests --output-on-failure -j$(JOBS) -L 'golden|cli|export' -E 'export/unit' \
	  --repeat until-pass:3

clean:
	rm -rf $(BUILD) $(BUILD)-test $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD) $(WIN_BUILD)
