#!/usr/bin/env bash
# Runs the whole test suite on the release build (builds it first if needed).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/release/CMakeCache.txt ] || cmake --preset release >/dev/null
cmake --build --preset release
ctest --preset release "$@"
