#!/usr/bin/env bash
# Runs the whole test suite, as CI does:
#   0. the formatting check (scripts/format.sh --check: clang-format);
#   1. the release build's tests (ctest: doctest unit and CLI tests, goldens,
#      the bad-input corpus, the install/.deb test, the CLI under valgrind;
#      the GPU tests skip themselves where there is no GPU);
#   2. the same tests built with AddressSanitizer + UndefinedBehaviorSanitizer
#      (the `asan` preset), failing on any report;
#   3. every libFuzzer harness for 30 s (scripts/fuzz.sh; installs clang and
#      libclang-rt-14-dev if they are missing).
# Each build is made first if needed; the first failure stops the run.
#
#   scripts/test.sh            # all three (a clean machine: ~30-40 min on 2 cores)
#   scripts/test.sh --quick    # the release tests only (minutes)
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi

echo "== format (clang-format) =="
bash scripts/format.sh --check

echo "== tests (release) =="
[ -f build/release/CMakeCache.txt ] || cmake --preset release >/dev/null
cmake --build --preset release
ctest --preset release "$@"
[ "$quick" -eq 1 ] && exit 0

echo "== tests under ASan + UBSan (asan preset) =="
[ -f build/asan/CMakeCache.txt ] || cmake --preset asan >/dev/null
cmake --build --preset asan
ctest --preset asan "$@"

echo "== fuzz: every harness for 30 s =="
bash scripts/fuzz.sh 30
