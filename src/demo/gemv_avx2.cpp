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

namespace {

// Rows [r0, r1) for a batch of exactly B vectors: two rows at a time, so each
// x vector loaded serves two weight rows and 2 x B independent FMA chains
// keep both FMA ports busy (at B = 4, one row at a time left the batched
// GEMV compute-bound at a third of the memory stream).
template <int B>
void Rows(const uint16_t* w, int64_t r0, int64_t r1, int64_t rows, int64_t cols, const float* x,
          float* y) {
  int64_t r = r0;
  for (; r + 2 <= r1; r += 2) {
    const uint16_t* row0 = w + r * cols;
    const uint16_t* row1 = row0 + cols;
    __m256 a0[B], a1[B];
    for (int b = 0; b < B; ++b) a0[b] = a1[b] = _mm256_setzero_ps();
    // The next row pair, one 64-byte line per 32 columns: the core's window
    // fills with FMAs at B = 4, so the hardware prefetcher alone falls behind.
    const bool ahead = r + 4 <= r1;
    for (int64_t c = 0; c < cols; c += 8) {
      if (ahead && c % 32 == 0) {
        _mm_prefetch(reinterpret_cast<const char*>(row0 + 2 * cols + c), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(row1 + 2 * cols + c), _MM_HINT_T0);
      }
      const __m256 w0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row0 + c)));
      const __m256 w1 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row1 + c)));
      for (int b = 0; b < B; ++b) {
        const __m256 xb = _mm256_loadu_ps(x + b * cols + c);
        a0[b] = _mm256_fmadd_ps(w0, xb, a0[b]);
        a1[b] = _mm256_fmadd_ps(w1, xb, a1[b]);
      }
    }
    for (int b = 0; b < B; ++b) {
      y[b * rows + r] = Sum8(a0[b]);
      y[b * rows + r + 1] = Sum8(a1[b]);
    }
  }
  for (; r < r1; ++r) {
    const uint16_t* row = w + r * cols;
    __m256 a[B];
    for (int b = 0; b < B; ++b) a[b] = _mm256_setzero_ps();
    for (int64_t c = 0; c < cols; c += 8) {
      const __m256 w0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + c)));
      for (int b = 0; b < B; ++b) a[b] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + b * cols + c), a[b]);
    }
    for (int b = 0; b < B; ++b) y[b * rows + r] = Sum8(a[b]);
  }
}

}  // namespace

void GemvRowsAvx2(const uint16_t* w, int64_t r0, int64_t r1, int64_t rows, int64_t cols,
                  const float* x, int64_t batch, float* y) {
  switch (batch) {
    case 1: return Rows<1>(w, r0, r1, rows, cols, x, y);
    case 2: return Rows<2>(w, r0, r1, rows, cols, x, y);
    case 3: return Rows<3>(w, r0, r1, rows, cols, x, y);
    default: return Rows<4>(w, r0, r1, rows, cols, x, y);
  }
}

}  // namespace kvplan::demo::detail

#pragma GCC pop_options
