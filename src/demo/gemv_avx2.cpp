// The AVX2 + FMA + F16C rows of GemvF16, compiled by a target pragma so the
// rest of the binary stays baseline x86-64 (called only after CpuHasAvx2()).
#include <immintrin.h>

#include <algorithm>

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

// Rows [r0, r1) for a batch of exactly B vectors: 4 rows at a time at batch
// 1, else 2, so each x vector loaded serves several weight rows and R x B
// independent FMA chains hide the FMA latency (two rows at batch 1, two
// chains, left the stream at 70% of the read ceiling at 1024 columns; 4
// rows reached 80-83%, 8 rows 79-82%, and 4 rows at batch 2 77-80% against
// 84-87% for 2: each row is its own stream for the hardware prefetcher).
// The next block of R rows (up to the matrix end, so across the 64-row
// chunks of one thread) is requested a line or a few at a time, spread
// evenly over this block's column steps. The hint depends on the vendor:
// on AMD (Zen 3) the non-temporal one (each weight is read once per step;
// batch 1 at 1024 columns: 83-89 % of the ceiling against 73-80 % with T0);
// elsewhere T0, as on an Intel Xeon NTA lines are lost before use (the
// decode kernel's fp32 steps took 1.7x as long with NTA there; see
// src/kernels/cpu/tile_simd.inc).
template <int B, bool kNta>
void Rows(const uint16_t* w, int64_t r0, int64_t r1, int64_t rows, int64_t cols, const float* x,
          float* y) {
  constexpr int R = B == 1 ? 4 : 2;
  const int64_t steps = cols / 8;
  int64_t r = r0;
  for (; r + R <= r1; r += R) {
    const uint16_t* row = w + r * cols;
    const char* pf = reinterpret_cast<const char*>(row + R * cols);
    const char* pf_end = reinterpret_cast<const char*>(w + std::min(rows, r + 2 * R) * cols);
    // Credits: each step earns `lines`, each line costs `steps`, so the
    // lines are spread evenly over the block (front-loading them at one a
    // step cost batch 4, which computes longer per byte, a tenth).
    const int64_t lines = pf_end > pf ? (pf_end - pf + 63) / 64 : 0;
    int64_t credit = 0;
    __m256 a[R][B];
    for (int i = 0; i < R; ++i) {
      for (int b = 0; b < B; ++b) a[i][b] = _mm256_setzero_ps();
    }
    for (int64_t c = 0; c < cols; c += 8) {
      for (credit += lines; credit >= steps; credit -= steps, pf += 64) {
        if constexpr (kNta) {
          _mm_prefetch(pf, _MM_HINT_NTA);
        } else {
          _mm_prefetch(pf, _MM_HINT_T0);
        }
      }
      __m256 wv[R];
      for (int i = 0; i < R; ++i) {
        wv[i] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i * cols + c)));
      }
      for (int b = 0; b < B; ++b) {
        const __m256 xb = _mm256_loadu_ps(x + b * cols + c);
        for (int i = 0; i < R; ++i) a[i][b] = _mm256_fmadd_ps(wv[i], xb, a[i][b]);
      }
    }
    for (int i = 0; i < R; ++i) {
      for (int b = 0; b < B; ++b) y[b * rows + r + i] = Sum8(a[i][b]);
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

// Rows for 1-4 sequences of the batch.
template <bool kNta>
void RowsForBatch(const uint16_t* w, int64_t r0, int64_t r1, int64_t rows, int64_t cols,
                  const float* x, int64_t batch, float* y) {
  switch (batch) {
    case 1: return Rows<1, kNta>(w, r0, r1, rows, cols, x, y);
    case 2: return Rows<2, kNta>(w, r0, r1, rows, cols, x, y);
    case 3: return Rows<3, kNta>(w, r0, r1, rows, cols, x, y);
    default: return Rows<4, kNta>(w, r0, r1, rows, cols, x, y);
  }
}

}  // namespace

void GemvRowsAvx2(const uint16_t* w, int64_t r0, int64_t r1, int64_t rows, int64_t cols,
                  const float* x, int64_t batch, float* y) {
  static const bool amd = __builtin_cpu_is("amd");
  if (amd) return RowsForBatch<true>(w, r0, r1, rows, cols, x, batch, y);
  return RowsForBatch<false>(w, r0, r1, rows, cols, x, batch, y);
}

}  // namespace kvplan::demo::detail

#pragma GCC pop_options
