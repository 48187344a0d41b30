// The synthetic decode step's fp16 GEMV (src/kernels/cpu/gemv*) against a double
// reference: every batch width the AVX2 and AVX-512 paths specialise (1-4)
// and one over it, odd row counts (the single-row tails after the blocks of
// two, three and four rows), and a column count neither path takes (the
// portable loop). GemvF16 runs the widest path the CPU has; each SIMD path
// the CPU has is also run on its own.
#include "kernels/cpu/gemv.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "kernels/cpu/decode_cpu.h"
#include "kernels/fp_convert.h"

using namespace kvplan;

TEST_CASE("fp16 GEMV matches a double reference for batches 1-5 and odd shapes") {
  using Rows =
      void (*)(const uint16_t*, int64_t, int64_t, int64_t, int64_t, const float*, int64_t, float*);
  std::vector<std::pair<const char*, Rows>> paths = {{"GemvF16", nullptr}};
  if (kernels::CpuHasAvx2()) paths.emplace_back("avx2", kernels::detail::GemvRowsAvx2);
  if (kernels::CpuHasAvx512()) paths.emplace_back("avx512", kernels::detail::GemvRowsAvx512);
  for (const auto& [rows, cols] :
       {std::pair<int64_t, int64_t>{67, 256}, {64, 1024}, {5, 48}, {7, 32}, {9, 40}}) {
    std::vector<uint16_t> w(static_cast<size_t>(rows * cols));
    for (size_t i = 0; i < w.size(); ++i) {
      w[i] = kernels::FloatToHalf(std::sin(0.7f * static_cast<float>(i)) * 0.25f);
    }
    for (int64_t batch = 1; batch <= 5; ++batch) {
      CAPTURE(rows);
      CAPTURE(cols);
      CAPTURE(batch);
      std::vector<float> x(static_cast<size_t>(batch * cols)),
          y(static_cast<size_t>(batch * rows), NAN);
      for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.3f * static_cast<float>(i)) + 0.1f;
      for (const auto& [path, rows_fn] : paths) {
        // The SIMD rows alone (one thread) where their preconditions hold.
        if (rows_fn != nullptr && (cols % 16 != 0 || batch > 4)) continue;
        for (int threads : rows_fn != nullptr ? std::vector<int>{1} : std::vector<int>{1, 2}) {
          CAPTURE(path);
          CAPTURE(threads);
          std::fill(y.begin(), y.end(), NAN);
          if (rows_fn != nullptr) {
            rows_fn(w.data(), 0, rows, rows, cols, x.data(), batch, y.data());
          } else {
            kernels::GemvF16(w.data(), rows, cols, x.data(), batch, y.data(), threads);
          }
          double worst = 0;
          for (int64_t b = 0; b < batch; ++b) {
            for (int64_t r = 0; r < rows; ++r) {
              double ref = 0, mag = 0;
              for (int64_t c = 0; c < cols; ++c) {
                const double p =
                    static_cast<double>(kernels::HalfToFloat(w[r * cols + c])) * x[b * cols + c];
                ref += p;
                mag += std::fabs(p);
              }
              worst = std::max(worst, std::fabs(y[b * rows + r] - ref) / (mag * 1e-6 + 1e-30));
            }
          }
          CHECK(worst <= 1.0);  // within 1e-6 of the sum of |terms|: float accumulation only
        }
      }
    }
  }
}
