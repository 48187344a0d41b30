#!/usr/bin/env bash
# Where the CPU decode kernel's time goes: the AVX-512 tile code timed on one
# (sequence, KV head) run resident in L1, resident in L2 and streamed from
# memory, round-robin in one process (scripts/residency/probe.cpp). If the
# L2 figure is already close to the memory one, prefetching from memory is
# not what holds the kernel back. Needs a CPU with avx512f/avx512bw.
#   scripts/residency.sh [DTYPE] [GROUP] [THREADS] [ROUNDS]
#   e.g. scripts/residency.sh fp16 8 1 15
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
for flag in avx512f avx512bw; do
  grep -qw "$flag" /proc/cpuinfo ||
    { echo "scripts/residency.sh: this CPU has no $flag; the probe times the AVX-512 tile code" >&2; exit 2; }
done
out="$root/build/residency"
mkdir -p "$out"
flags=(-O3 -std=c++20 -fopenmp -DNDEBUG -I "$root/src")
g++ "${flags[@]}" -c "$root/src/kernels/cpu/tile_avx512.cpp" -o "$out/tile_avx512.o"
g++ "${flags[@]}" "$root/scripts/residency/probe.cpp" "$out/tile_avx512.o" -o "$out/probe"
"$out/probe" "${1:-fp16}" "${2:-8}" "${3:-1}" "${4:-15}"
