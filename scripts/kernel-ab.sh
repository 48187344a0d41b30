#!/usr/bin/env bash
# Paired comparison of the AVX2 decode tile code at a git revision (default
# HEAD) against the working tree, in ONE process: both versions are compiled
# into one binary (the old one in a renamed namespace) and timed turn about
# on a cache that stays in L2, by CPU time, so a shared machine's drifting
# speed affects both alike. Prints the median new/old speed ratio per dtype
# and GQA group. How the kernel changes of docs/perf.md were judged; a change
# to the L1 footprint or the order of the passes must be judged streaming
# too (kvplan bench --shape, binaries alternating): see docs/perf.md.
# TOKENS (default 256) x 128 columns of K and of V: 256 KiB in fp32, so the
# cache fits a 512 KiB L2 for every dtype (until 2026-11-30 the default was
# 1024, which in fp16 and fp32 filled or overflowed L2 and timed L3 too).
# SIMD=avx512 compares the AVX-512 tile code instead (tile_avx512.cpp; the
# CPU must have avx512f and avx512bw, and REV must have the file).
# MIB=128 times each shape streaming instead (still one thread, turn about):
# one run of 128 MiB of K and V on 2 MiB pages, twice per call, so a change
# to prefetching or to the L1 footprint can be judged against REV without a
# variant patch for scripts/stream-ab.sh (which times all threads).
#   scripts/kernel-ab.sh [REV] [TOKENS]      e.g. scripts/kernel-ab.sh HEAD~1 256
#   SIMD=avx512 scripts/kernel-ab.sh HEAD
#   DTYPES=fp16,bf16 GQA=8 SIMD=avx512 scripts/kernel-ab.sh HEAD   (a narrower sweep)
#   MIB=128 DTYPES=fp16 GQA=1,4 scripts/kernel-ab.sh HEAD~1        (streaming)
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
tokens=${2:-256}
simd=${SIMD:-avx2}
case "$simd" in
  avx2) tile=tile_avx2.cpp; define=() ;;
  avx512) tile=tile_avx512.cpp; define=(-DKVPLAN_AB_AVX512) ;;
  *) echo "kernel-ab.sh: SIMD must be avx2 or avx512, not '$simd'" >&2; exit 2 ;;
esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The old tile code with its own headers (tile.h and, since 2026-12-01, the
# width-generic tile_simd.inc), found first on the old side's include path.
mkdir -p "$out/old/kernels/cpu"
git cat-file -e "$rev:src/kernels/cpu/$tile" 2>/dev/null ||
  { echo "kernel-ab.sh: $rev has no src/kernels/cpu/$tile" >&2; exit 2; }
for f in "$tile" tile.h tile_simd.inc; do
  if git cat-file -e "$rev:src/kernels/cpu/$f" 2>/dev/null; then
    git show "$rev:src/kernels/cpu/$f" > "$out/old/kernels/cpu/$f"
  fi
done
flags=(-O3 -std=c++20 -Isrc -march=x86-64 -falign-functions=64 -falign-loops=32)  # as src/kernels/CMakeLists.txt
c++ -I"$out/old" "${flags[@]}" -Dkvplan=kvplan_old -c "$out/old/kernels/cpu/$tile" -o "$out/tile_old.o"
c++ -I"$out/old" "${flags[@]}" "${define[@]}" -Dkvplan=kvplan_old -DKVPLAN_AB_ENTRY=ab_old \
  -c scripts/kernel-ab/drv.cpp -o "$out/drv_old.o"
c++ "${flags[@]}" -c "src/kernels/cpu/$tile" -o "$out/tile_new.o"
c++ "${flags[@]}" "${define[@]}" -DKVPLAN_AB_ENTRY=ab_new -c scripts/kernel-ab/drv.cpp -o "$out/drv_new.o"
c++ "${flags[@]}" scripts/kernel-ab/main.cpp "$out"/*.o -o "$out/kernel-ab"
if [[ -n "${MIB:-}" ]]; then what="streaming $MIB MiB of K and V"; else what="$tokens tokens x 128 (in L2)"; fi
echo "$simd tile code: $rev (old) vs working tree (new); $what, one thread, CPU time; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
"$out/kernel-ab" "$tokens"
