#include "kernels/cpu/gemv.h"

#include <omp.h>

#include <algorithm>

#include "kernels/cpu/decode_cpu.h"
#include "kernels/fp_convert.h"

namespace kvplan::kernels {

void GemvF16(const uint16_t* w, int64_t rows, int64_t cols, const float* x, int64_t batch, float* y,
             int threads) {
  static const bool avx2 = kernels::CpuHasAvx2();
  static const bool avx512 = kernels::CpuHasAvx512();
  const bool simd = avx2 && cols % 16 == 0;
  const int nt = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(nt)
  for (int64_t chunk = 0; chunk < (rows + 63) / 64; ++chunk) {
    const int64_t r0 = chunk * 64, r1 = std::min(rows, r0 + 64);
    for (int64_t b0 = 0; b0 < batch; b0 += 4) {
      const int64_t nb = std::min<int64_t>(4, batch - b0);
      if (simd) {
        (avx512 ? detail::GemvRowsAvx512 : detail::GemvRowsAvx2)(w, r0, r1, rows, cols,
                                                                 x + b0 * cols, nb, y + b0 * rows);
        continue;
      }
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t b = b0; b < b0 + nb; ++b) {
          float acc = 0;
          for (int64_t c = 0; c < cols; ++c) {
            acc += kernels::HalfToFloat(w[r * cols + c]) * x[b * cols + c];
          }
          y[b * rows + r] = acc;
        }
      }
    }
  }
}

}  // namespace kvplan::kernels
