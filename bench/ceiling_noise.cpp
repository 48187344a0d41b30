// The noise floor of `kvplan bench`'s '% read ceiling', many times over:
// what a kernel that streams as fast as the ceiling loop itself would score
// (kernels::MeasureNoiseFloor, the figure `kvplan bench` prints once per
// run). Each "shape" is the ceiling loop over 256 MiB timed as the bench
// times a kernel step (the ceiling read beside it, the caches flushed, then
// the step), median of 7 per-step ratios. Prints each shape's figure and
// their spread (docs/perf.md).
//   cmake --build --preset release --target kvplan_bench_ceiling_noise
//   ./build/release/kvplan_bench_ceiling_noise [SHAPES]
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "measure/ceilings.h"

int main(int argc, char** argv) {
  using namespace kvplan::kernels;
  const int shapes = argc > 1 ? std::max(1, std::atoi(argv[1])) : 25;
  const uint64_t llc = LastLevelCacheBytes();
  const uint64_t ceiling_bytes = std::clamp<uint64_t>(8 * llc, 256ull << 20, 1ull << 30);
  ReadCeilingMeter ceiling(ceiling_bytes, 0);
  ceiling.Measure(3);
  std::vector<double> figures;
  fmt::print(
      "a {} MiB streaming read timed as a bench step, % of the {} MiB read ceiling beside it:\n",
      kNoiseFloorStepBytes >> 20, ceiling_bytes >> 20);
  for (int s = 0; s < shapes; ++s) {
    figures.push_back(
        MeasureNoiseFloor(ceiling, kNoiseFloorStepBytes, 0, 7));  // what kvplan bench prints
    fmt::print("{:.0f} ", 100 * figures.back());
    std::fflush(stdout);
  }
  std::sort(figures.begin(), figures.end());
  const size_t n = figures.size();
  fmt::print(
      "\n{} shapes: median {:.0f} %, quartiles {:.0f}-{:.0f} %, range {:.0f}-{:.0f} %, "
      "below 90 %: {}\n",
      n, 100 * Median(figures), 100 * figures[n / 4], 100 * figures[(3 * n) / 4],
      100 * figures.front(), 100 * figures.back(),
      std::count_if(figures.begin(), figures.end(), [](double f) { return f < 0.9; }));
}
