// The AVX-512 rows of GemvF16 (gemv_simd.inc on 512-bit vectors; avx512f +
// f16c), compiled by a target pragma so the rest of the binary stays
// baseline x86-64 (called only after CpuHasAvx512()). Four rows per block at
// every batch width: with 32 registers, 4 rows x 4 vectors of x keep 16
// accumulators, so each x vector loaded serves four rows where the AVX2 path
// (16 registers) serves two or three. Why it exists: on the AVX2 path
// the GEMV's speed at batches 2-4 depended on the column count by up to a
// quarter (one thread, 11 MiB: batch 4 read 11.8-12.3 GB/s at 1024-2048
// columns, 10.4-10.5 at 2816-4096; batch 2 13.3 at 2048, 15.4-15.9 at 1024
// and 2816), so the weights curve, measured at 2048 columns, mispredicted the
// validation model's 1024- and 2816-column matrices by as much. Here the
// spread is 5-13 % (batch 4 11.4-13.1, batch 2 13.7-15.1), batches 3-4 at
// 2816 columns and more are 1.18-1.27x faster, batch 2 at 1024 and 2816
// columns 0.90x, batch 1 0.97-1.00x (scripts/gemv-ab.sh, Intel Xeon;
// docs/perf.md "2026-12-03 (13:10-15:00 UTC)"). (Then the AVX2 path took two
// rows from batch 2; it takes three at batches 3-4 since 2026-12-04.)
// GCC 12's AVX-512 intrinsics trip its own -Wuninitialized inside the header
// (GCC bug 105593; see src/kernels/cpu/tile_avx512.cpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "demo/gemv.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma,f16c")

namespace kvplan::demo::detail {
namespace {

#include "demo/gemv_simd.inc"

struct Vec512 {
  using F = __m512;
  static constexpr int64_t kW = 16;
  template <int B>
  static constexpr int kRows = 4;
  static F Zero() { return _mm512_setzero_ps(); }
  static F Load(const float* p) { return _mm512_loadu_ps(p); }
  static F Fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F WidenHalf(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static float Sum(F v) { return _mm512_reduce_add_ps(v); }
};

}  // namespace

void GemvRowsAvx512(const uint16_t* w, int64_t r0, int64_t r1, int64_t rows, int64_t cols,
                    const float* x, int64_t batch, float* y) {
  RowsSimd<Vec512>(w, r0, r1, rows, cols, x, batch, y);
}

}  // namespace kvplan::demo::detail

#pragma GCC pop_options
