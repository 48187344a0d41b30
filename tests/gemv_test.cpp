// The synthetic decode step's fp16 GEMV (src/demo/gemv*) against a double
// reference: every batch width the AVX2 path specialises (1-4) and one over
// it, an odd row count (the single-row tail after the row pairs), and a
// column count the AVX2 path does not take (the portable loop).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "demo/gemv.h"
#include "kernels/fp_convert.h"

using namespace kvplan;

TEST_CASE("fp16 GEMV matches a double reference for batches 1-5 and odd shapes") {
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{67, 256}, {64, 1024}, {5, 48}, {9, 40}}) {
    std::vector<uint16_t> w(static_cast<size_t>(rows * cols));
    for (size_t i = 0; i < w.size(); ++i) {
      w[i] = kernels::FloatToHalf(std::sin(0.7f * static_cast<float>(i)) * 0.25f);
    }
    for (int64_t batch = 1; batch <= 5; ++batch) {
      CAPTURE(rows);
      CAPTURE(cols);
      CAPTURE(batch);
      std::vector<float> x(static_cast<size_t>(batch * cols)), y(static_cast<size_t>(batch * rows), NAN);
      for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.3f * static_cast<float>(i)) + 0.1f;
      for (int threads : {1, 2}) {
        demo::GemvF16(w.data(), rows, cols, x.data(), batch, y.data(), threads);
        double worst = 0;
        for (int64_t b = 0; b < batch; ++b) {
          for (int64_t r = 0; r < rows; ++r) {
            double ref = 0, mag = 0;
            for (int64_t c = 0; c < cols; ++c) {
              const double p = static_cast<double>(kernels::HalfToFloat(w[r * cols + c])) * x[b * cols + c];
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
