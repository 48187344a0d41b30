#!/usr/bin/env bash
# The one prepared check for a GPU machine (an H200 lent through the device
# tool): builds kvplan with the CUDA kernel, runs the gpu-labelled tests, the
# CUDA bench sweep (validated, then timed) and the PyTorch SDPA comparison on
# the same shapes, and prints a short table last. Budget: under 5 minutes.
#
# That machine has nvcc, CMake, ninja and PyTorch but none of kvplan's Debian
# packages and no network, so carry them: here, on the developer machine,
#   scripts/fetch-debs.sh                      # fills .debs/ (git-ignored)
# then call the device tool with
#   command: bash scripts/gpu-check.sh         carry: [".debs"]   timeout_s: 600
# Results land in $OUT (the tool's folder; build/gpu-check/out elsewhere):
# gpu-check.log, bench.json, sdpa.json, h200-profile.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
OUT=${OUT:-build/gpu-check/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/gpu-check.log") 2>&1
step() { echo; echo "== [$(( $(date +%s) - start ))s] $*"; }

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory --format=csv,noheader || true
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
nvcc --version | tail -n 2
cmake --version | head -n 1
"${CXX:-c++}" --version | head -n 1 || echo "no c++ on PATH (nvcc needs a host compiler)"

step "unpacking the carried Debian packages"
prefix=/tmp/kvplan-debs
ls .debs/*.deb >/dev/null 2>&1 || {
  echo "gpu-check: no .debs/*.deb: run scripts/fetch-debs.sh here first and pass carry [\".debs\"]"
  exit 2
}
rm -rf "$prefix" && mkdir -p "$prefix"
for deb in .debs/*.deb; do
  if command -v dpkg >/dev/null; then
    dpkg -x "$deb" "$prefix"
  else  # a .deb is an ar archive holding data.tar.*
    tmp=$(mktemp -d)
    (cd "$tmp" && ar x "$OLDPWD/$deb" && tar -xf data.tar.* -C "$prefix")
    rm -rf "$tmp"
  fi
done
lib="$prefix/usr/lib/x86_64-linux-gnu"
export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

step "configure and build (Release, sm_90a only, -j16)"
build=build/gpu-check
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DKVPLAN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90a -DKVPLAN_WERROR=OFF \
  -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
  -DCMAKE_PREFIX_PATH="$prefix/usr" \
  -Dfmt_DIR="$lib/cmake/fmt" -Dyaml-cpp_DIR="$lib/cmake/yaml-cpp" \
  -DCLI11_DIR="$prefix/usr/share/cmake/CLI11" -Ddoctest_DIR="$prefix/usr/lib/cmake/doctest" \
  >"$OUT/configure.log" || { cat "$OUT/configure.log"; exit 1; }
grep "kvplan:" "$OUT/configure.log" || true
cmake --build "$build" -j16 --target kvplan kvplan_tests

step "gpu tests (ctest -L gpu)"
ctest --test-dir "$build" -L gpu --output-on-failure

step "CUDA bench sweep"
kvplan="$build/kvplan"
"$kvplan" bench --device cuda --hardware h200 --format json --save "$OUT/h200-profile.yaml" --force \
  >"$OUT/bench.json"

step "PyTorch SDPA on the same shapes"
if python3 -c "import torch" 2>/dev/null; then
  python3 bench/torch_sdpa.py "$OUT/bench.json" --json "$OUT/sdpa.json"
else
  echo "torch not importable: SDPA comparison skipped"
fi

step "summary (targets: docs/perf.md, CUDA)"
python3 - "$OUT/bench.json" <<'EOF'
import json, sys
run = json.load(open(sys.argv[1]))
print(f"{run['machine']}: peak {run['peak_gbps']:.0f} GB/s (attributes), copy {run['copy_gbps']:.0f} GB/s")
# The issue's targets (fp16, 8 KV heads x 128), as fractions of the copy, for every GQA group.
targets = {("fp16", 1, 32768, "contiguous"): 0.85, ("fp16", 64, 1024, "contiguous"): 0.88,
           ("fp16", 1, 4096, "contiguous"): 0.60}
print(f"{'shape':<42} {'us':>8} {'GB/s':>6} {'%copy':>6} {'%peak':>6} {'target':>7}")
for r in run["results"]:
    key = (r["dtype"], r["batch"], r["context"], r["layout"])
    t = targets.get(key)
    mark = "" if t is None else (f"{100*t:.0f}% " + ("ok" if r["fraction_of_copy"] >= t else "MISS"))
    print(f"{r['label']:<42} {r['seconds']*1e6:>8.1f} {r['gbps']:>6.0f} "
          f"{100*r['fraction_of_copy']:>5.0f}% {100*r['fraction_of_peak']:>5.0f}% {mark:>7}")
EOF
echo "gpu-check: done in $(( $(date +%s) - start ))s; files in $OUT"
