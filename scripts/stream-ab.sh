#!/usr/bin/env bash
# Streaming A/B of a CPU-kernel change inside ONE process, step by step.
#
# Separate processes on a shared host run in fast or slow modes for their
# whole life (the same 256 MiB step: 16.4 ms in one, 20.8 ms in the next),
# which buries a 5 % effect; scripts/kernel-ab.sh compares in L2, which
# does not show what a change does to streaming from memory. This script
# copies the working tree to build/stream-ab/tree, applies
# scripts/stream-ab/harness.patch (every second kernel step of 2^20
# elements or more runs with the global `kvplan_ab_variant` = 1, and each
# step prints its wall time) and VARIANT.patch (your change, written to run
# only while `kvplan_ab_variant` is 1; declare `extern int kvplan_ab_variant;`
# at file scope: for tile_simd.inc, which is included inside a namespace, in
# tile.h, as nta-variant.patch does), builds kvplan there (incrementally
# after the first time), and runs `kvplan bench --shape S --repeats N` per shape twice, base first
# and variant first. Caches are flushed and the read ceiling re-read before
# every step, as in any bench run. Prints, per shape and order, the median
# over adjacent pairs of variant time / base time (< 1: the variant is
# faster). scripts/stream-ab/null-variant.patch changes nothing and reads
# 0.97-1.02 here (docs/perf.md), so trust only what shows in both orders on
# most shapes. REPEATS (default 41) steps per run; shapes default to the
# bench's 256 MiB fp16 group 1 and 4, fp32, int8 and paged ones.
#
#   scripts/stream-ab.sh VARIANT.patch [SHAPE ...]
#   e.g. scripts/stream-ab.sh scripts/stream-ab/nta-variant.patch \
#          dtype=fp16,context=64K,kv_heads=8,group=4
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: scripts/stream-ab.sh VARIANT.patch [SHAPE ...]" >&2; exit 2; }
variant=$(realpath "$1")
shift
shapes=("$@")
if [ ${#shapes[@]} -eq 0 ]; then
  shapes=(dtype=fp16,context=64K,kv_heads=8,group=1 dtype=fp16,context=64K,kv_heads=8,group=4
          dtype=fp32,context=32K,kv_heads=8,group=1 dtype=int8,context=128K,kv_heads=8,group=1
          dtype=fp16,context=64K,kv_heads=8,group=1,block=16)
fi
repeats=${REPEATS:-41}
dir="$root/build/stream-ab"
mkdir -p "$dir/tree"
# The working tree's files (uncommitted edits included), timestamps kept so
# the build after the first recompiles only what changed or is patched.
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
   while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
   xargs -0 cp -p --parents -t "$dir/tree")
cd "$dir/tree"
# Files a previous run patched were just restored with their old times,
# older than the objects built from the patched text: touch them.
[ -f "$dir/patched" ] && xargs -r touch < "$dir/patched"
sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$root/scripts/stream-ab/harness.patch" "$variant" > "$dir/patched"
patch -s -p1 --no-backup-if-mismatch < "$root/scripts/stream-ab/harness.patch"
patch -s -p1 --no-backup-if-mismatch < "$variant"
cmake -S . -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release > "$dir/configure.log"
cmake --build "$dir/build" --target kvplan > "$dir/build.log" || { tail -20 "$dir/build.log" >&2; exit 1; }
echo "stream A/B: $(basename "$variant") vs the working tree, $repeats steps per run, $(nproc) threads; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
for s in "${shapes[@]}"; do
  for first in base variant; do
    printf '%-52s %-13s ' "$s" "$first first"
    if [ "$first" = variant ]; then export KVPLAN_AB_FIRST=1; else unset KVPLAN_AB_FIRST; fi
    KVPLAN_AB=1 "$dir/build/kvplan" bench --shape "$s" --repeats "$repeats" 2>&1 >/dev/null |
      python3 "$root/scripts/stream-ab/pairs.py"
  done
done
