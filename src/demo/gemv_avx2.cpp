// The AVX2 + FMA + F16C rows of GemvF16, compiled by a target pragma so the
// rest of the binary stays baseline x86-64 (called only after CpuHasAvx2()).
#include <immintrin.h>

#include "demo/gemv.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace kvplan::demo::detail {
namespace {

inline float Sum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

}  // namespace

void GemvRowsAvx2(const uint16_t* w, int64_t r0, int64_t r1, int64_t rows, int64_t cols,
                  const float* x, int64_t batch, float* y) {
  for (int64_t r = r0; r < r1; ++r) {
    const uint16_t* row = w + r * cols;
    // Two accumulators per vector hide the FMA latency at batch 1.
    __m256 a0[4], a1[4];
    for (int b = 0; b < 4; ++b) a0[b] = a1[b] = _mm256_setzero_ps();
    for (int64_t c = 0; c < cols; c += 16) {
      const __m256 w0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + c)));
      const __m256 w1 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + c + 8)));
      for (int64_t b = 0; b < batch; ++b) {
        const float* xb = x + b * cols + c;
        a0[b] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(xb), a0[b]);
        a1[b] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(xb + 8), a1[b]);
      }
    }
    for (int64_t b = 0; b < batch; ++b) y[b * rows + r] = Sum8(_mm256_add_ps(a0[b], a1[b]));
  }
}

}  // namespace kvplan::demo::detail

#pragma GCC pop_options
