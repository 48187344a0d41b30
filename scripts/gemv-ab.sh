#!/usr/bin/env bash
# Paired comparison of the latency validation's fp16 GEMV (src/demo/gemv*.cpp)
# at a git revision (default HEAD) against the working tree, in ONE process:
# the old sources are compiled into a renamed namespace, both are linked into
# one driver (scripts/gemv-ab/main.cpp) and timed turn about, caches flushed
# before each call, over 1024-4096 columns and batches 1-4. How the GEMV
# changes of docs/perf.md were judged. Needs the release build (its kernels
# and core libraries): bash scripts/bootstrap.sh.
#   scripts/gemv-ab.sh [REV] [THREADS] [MIB]     e.g. scripts/gemv-ab.sh HEAD 1 11
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rev=${1:-HEAD}
threads=${2:-1}
mib=${3:-11}
build="$root/build/release"
[[ -f "$build/src/kernels/libkvplan_kernels.a" ]] ||
  { echo "scripts/gemv-ab.sh: no release build at $build (run scripts/bootstrap.sh)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p "$out/old/demo"
for f in gemv.h gemv.cpp gemv_avx2.cpp gemv_avx512.cpp gemv_simd.inc; do
  if git -C "$root" cat-file -e "$rev:src/demo/$f" 2>/dev/null; then
    git -C "$root" show "$rev:src/demo/$f" > "$out/old/demo/$f"
  fi
done
flags=(-O3 -DNDEBUG -std=c++20 -fopenmp)  # as the release preset builds src/demo
objs=()
for f in "$out"/old/demo/*.cpp; do
  g++ "${flags[@]}" -I"$out/old" -I"$root/src" -Dkvplan=kvplan_old -c "$f" -o "$out/old_$(basename "$f" .cpp).o"
  objs+=("$out/old_$(basename "$f" .cpp).o")
done
for f in "$root"/src/demo/gemv*.cpp; do
  g++ "${flags[@]}" -I"$root/src" -c "$f" -o "$out/new_$(basename "$f" .cpp).o"
  objs+=("$out/new_$(basename "$f" .cpp).o")
done
libs=$(find "$build" -name '*.a' ! -name 'libkvplan_demo.a' | tr '\n' ' ')
# shellcheck disable=SC2086
g++ "${flags[@]}" -I"$root/src" "$root/scripts/gemv-ab/main.cpp" "${objs[@]}" \
  -Wl,--start-group $libs -Wl,--end-group -lfmt -lyaml-cpp -o "$out/gemv-ab"
echo "fp16 GEMV: $rev (old) vs working tree (new); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
"$out/gemv-ab" "$threads" "$mib"
