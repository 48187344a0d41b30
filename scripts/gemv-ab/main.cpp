// scripts/gemv-ab.sh's driver: the latency validation's fp16 GEMV
// (src/demo/gemv*.cpp) at a git revision ("old", compiled into namespace
// kvplan_old) against the working tree ("new"), timed turn about in one
// process, caches flushed before each call (by the validation's own
// flusher), over column counts 1024-4096 and batches 1-4, so a shared
// machine's drifting speed hits both alike. Prints
// each version's median GB/s and the median of the per-round speed ratios
// (new/old) with its interquartile range, and the largest difference between
// the two versions' outputs.
//   gemv-ab THREADS MIB
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "demo/gemv.h"
#include "kernels/bench/ceilings.h"
#include "kernels/cpu/decode_cpu.h"
#include "kernels/kv_cache.h"

// The old version's declaration, and what it calls in the kernels library
// (linked once, from the new tree), under the renamed namespace.
namespace kvplan_old::demo {
void GemvF16(const uint16_t* w, int64_t rows, int64_t cols, const float* x, int64_t batch, float* y,
             int threads);
}
namespace kvplan_old::kernels {
bool CpuHasAvx2() {
  return kvplan::kernels::CpuHasAvx2();
}
bool CpuHasAvx512() {
  return kvplan::kernels::CpuHasAvx512();
}
}  // namespace kvplan_old::kernels

namespace {
double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: gemv-ab THREADS MIB\n");
    return 2;
  }
  const int threads = std::atoi(argv[1]);
  const int64_t bytes = int64_t{std::atoi(argv[2])} << 20;
  constexpr int kRounds = 15;
  constexpr int64_t kCols[] = {1024, 2048, 2816, 4096};
  constexpr int kBatches[] = {1, 2, 3, 4};
  // Weights in the kernels' buffer (2 MiB pages where the kernel allows, as
  // the validation's own matrices): small normal fp16 values.
  kvplan::kernels::AlignedBuffer wb(static_cast<uint64_t>(bytes));
  auto* w = static_cast<uint16_t*>(wb.data());
  for (int64_t i = 0; i < bytes / 2; ++i) w[i] = static_cast<uint16_t>(0x3000 | (i * 7 & 0x3FF));
  std::vector<float> x(4 * 4096);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f + 0.001f * static_cast<float>(i % 97);
  const size_t y_size = static_cast<size_t>(4 * (bytes / 2 / kCols[0]));
  std::vector<float> y_old(y_size), y_new(y_size);
  // The caches evicted before each call as before each weights-curve point
  // of the validation (kernels/bench/ceilings.h).
  kvplan::kernels::CacheFlusher flusher;
  std::vector<double> old_gbps[4][4], new_gbps[4][4], ratio[4][4];
  double worst = 0;
  for (int round = 0; round < kRounds; ++round) {
    for (int ci = 0; ci < 4; ++ci) {
      for (int bi = 0; bi < 4; ++bi) {
        const int64_t cols = kCols[ci], rows = bytes / 2 / cols, batch = kBatches[bi];
        double seconds[2];
        for (int k = 0; k < 2; ++k) {
          const bool is_new = (k + round) % 2 == 1;  // each goes first in every other round
          flusher.Flush();
          const auto gemv = is_new ? kvplan::demo::GemvF16 : kvplan_old::demo::GemvF16;
          float* y = (is_new ? y_new : y_old).data();
          gemv(w, 64, cols, x.data(), batch, y, threads);  // code and threads warm
          const double t0 = Now();
          gemv(w, rows, cols, x.data(), batch, y, threads);
          seconds[is_new] = Now() - t0;
        }
        for (int64_t i = 0; i < batch * rows; ++i) {
          worst = std::max(worst, static_cast<double>(std::fabs(y_old[i] - y_new[i])));
        }
        const double gb = static_cast<double>(rows * cols * 2) / 1e9;
        old_gbps[ci][bi].push_back(gb / seconds[0]);
        new_gbps[ci][bi].push_back(gb / seconds[1]);
        ratio[ci][bi].push_back(seconds[0] / seconds[1]);
      }
    }
  }
  std::printf(
      "fp16 GEMV, %d thread(s), %lld MiB matrices, %d rounds; largest |new - old| output %.3g\n",
      threads, static_cast<long long>(bytes >> 20), kRounds, worst);
  std::printf("%5s %5s  %8s  %8s  %s\n", "cols", "batch", "old GB/s", "new GB/s",
              "new speed / old (IQR)");
  for (int ci = 0; ci < 4; ++ci) {
    for (int bi = 0; bi < 4; ++bi) {
      std::printf("%5lld %5d  %8.1f  %8.1f  %.2f (%.2f-%.2f)\n", static_cast<long long>(kCols[ci]),
                  kBatches[bi], Quantile(old_gbps[ci][bi], 0.5), Quantile(new_gbps[ci][bi], 0.5),
                  Quantile(ratio[ci][bi], 0.5), Quantile(ratio[ci][bi], 0.25),
                  Quantile(ratio[ci][bi], 0.75));
    }
  }
}
