// The AVX-512 rows of GemvF16 (avx512f + f16c), compiled by a target pragma
// so the rest of the binary stays baseline x86-64 (called only after
// CpuHasAvx512()). Four rows per block at every batch width: with 32
// registers, 4 rows x 4 vectors of x keep 16 accumulators, so each x vector
// loaded serves four rows where the AVX2 path (16 registers) serves two from
// batch 2 on. Why it exists: on the AVX2 path the GEMV's speed at batches
// 2-4 depended on the column count by up to a quarter (one thread, 11 MiB:
// batch 4 read 11.8-12.3 GB/s at 1024-2048 columns, 10.4-10.5 at 2816-4096;
// batch 2 13.3 at 2048, 15.4-15.9 at 1024 and 2816), so the weights curve,
// measured at 2048 columns, mispredicted the validation model's 1024- and
// 2816-column matrices by as much. Here the spread is 5-13 % (batch 4
// 11.4-13.1, batch 2 13.7-15.1), batches 3-4 at 2816 columns and more are
// 1.18-1.27x faster, batch 2 at 1024 and 2816 columns 0.90x, batch 1 0.97-1.00x
// (scripts/gemv-ab.sh, Intel Xeon; docs/perf.md "2026-12-03 (13:10-15:00 UTC)").
// GCC 12's AVX-512 intrinsics trip its own -Wuninitialized inside
// the header (GCC bug 105593; see src/kernels/cpu/tile_avx512.cpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>

#include "demo/gemv.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma,f16c")

namespace kvplan::demo::detail {
namespace {

// Rows [r0, r1) for a batch of exactly B vectors, R = 4 rows at a time,
// 16 columns a step; the next block's rows prefetched a line at a time,
// spread over this block's steps, with the AVX2 path's hints (NTA on AMD,
// T0 elsewhere; gemv_avx2.cpp).
template <int B, bool kNta>
void Rows(const uint16_t* w, int64_t r0, int64_t r1, int64_t rows, int64_t cols, const float* x,
          float* y) {
  constexpr int R = 4;
  const int64_t steps = cols / 16;
  int64_t r = r0;
  for (; r + R <= r1; r += R) {
    const uint16_t* row = w + r * cols;
    const char* pf = reinterpret_cast<const char*>(row + R * cols);
    const char* pf_end = reinterpret_cast<const char*>(w + std::min(rows, r + 2 * R) * cols);
    const int64_t lines = pf_end > pf ? (pf_end - pf + 63) / 64 : 0;
    int64_t credit = 0;
    __m512 a[R][B];
    for (int i = 0; i < R; ++i) {
      for (int b = 0; b < B; ++b) a[i][b] = _mm512_setzero_ps();
    }
    for (int64_t c = 0; c < cols; c += 16) {
      for (credit += lines; credit >= steps; credit -= steps, pf += 64) {
        if constexpr (kNta) {
          _mm_prefetch(pf, _MM_HINT_NTA);
        } else {
          _mm_prefetch(pf, _MM_HINT_T0);
        }
      }
      __m512 wv[R];
      for (int i = 0; i < R; ++i) {
        wv[i] = _mm512_cvtph_ps(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + i * cols + c)));
      }
      for (int b = 0; b < B; ++b) {
        const __m512 xb = _mm512_loadu_ps(x + b * cols + c);
        for (int i = 0; i < R; ++i) a[i][b] = _mm512_fmadd_ps(wv[i], xb, a[i][b]);
      }
    }
    for (int i = 0; i < R; ++i) {
      for (int b = 0; b < B; ++b) y[b * rows + r + i] = _mm512_reduce_add_ps(a[i][b]);
    }
  }
  for (; r < r1; ++r) {
    const uint16_t* row = w + r * cols;
    __m512 a[B];
    for (int b = 0; b < B; ++b) a[b] = _mm512_setzero_ps();
    for (int64_t c = 0; c < cols; c += 16) {
      const __m512 w0 =
          _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + c)));
      for (int b = 0; b < B; ++b)
        a[b] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x + b * cols + c), a[b]);
    }
    for (int b = 0; b < B; ++b) y[b * rows + r] = _mm512_reduce_add_ps(a[b]);
  }
}

template <bool kNta>
void RowsForBatch(const uint16_t* w, int64_t r0, int64_t r1, int64_t rows, int64_t cols,
                  const float* x, int64_t batch, float* y) {
  switch (batch) {
    case 1:
      return Rows<1, kNta>(w, r0, r1, rows, cols, x, y);
    case 2:
      return Rows<2, kNta>(w, r0, r1, rows, cols, x, y);
    case 3:
      return Rows<3, kNta>(w, r0, r1, rows, cols, x, y);
    default:
      return Rows<4, kNta>(w, r0, r1, rows, cols, x, y);
  }
}

}  // namespace

void GemvRowsAvx512(const uint16_t* w, int64_t r0, int64_t r1, int64_t rows, int64_t cols,
                    const float* x, int64_t batch, float* y) {
  static const bool amd = __builtin_cpu_is("amd");
  if (amd) return RowsForBatch<true>(w, r0, r1, rows, cols, x, batch, y);
  return RowsForBatch<false>(w, r0, r1, rows, cols, x, batch, y);
}

}  // namespace kvplan::demo::detail

#pragma GCC pop_options
