// The AVX2 + FMA + F16C rows of GemvF16 (gemv_simd.inc on 256-bit vectors),
// compiled by a target pragma so the rest of the binary stays baseline
// x86-64 (called only after CpuHasAvx2()).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "demo/gemv.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace kvplan::demo::detail {
namespace {

#include "demo/gemv_simd.inc"

struct Vec256 {
  using F = __m256;
  static constexpr int64_t kW = 8;
  // 4 rows at batch 1, 2 at batch 2, 3 at batches 3-4 (16 registers): two
  // rows at batch 1, two chains, left the stream at 70 % of the read ceiling
  // at 1024 columns; 4 rows reached 80-83 %, 8 rows 79-82 %, and 4 rows at
  // batch 2 77-80 % against 84-87 % for 2 (each row is its own stream for
  // the hardware prefetcher; the AMD Zen 3 build machine). At batches 3-4,
  // 3 rows (12 accumulators, 3 weight vectors and one of x) read each x
  // vector once per 3 rows instead of 2: where the batch's x no longer stays
  // in L1 beside the streaming weights (4 x 2048 columns of fp32 are a Zen 3
  // core's whole 32 KiB L1d) it comes from L2 once per block. On that Zen 3
  // (scripts/gemv-ab.sh against 2 rows, 11 MiB): batch 3 1.21-1.25x (two
  // threads) and 1.29-1.36x (one), batch 4 1.19-1.31x and 1.18-1.30x, and
  // batch 4's spread over 1024-4096 columns from 18-25 % to 6-9 %
  // (docs/perf.md "2026-12-04").
  template <int B>
  static constexpr int kRows = B == 1 ? 4 : (B >= 3 ? 3 : 2);
  static F Zero() { return _mm256_setzero_ps(); }
  static F Load(const float* p) { return _mm256_loadu_ps(p); }
  static F Fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F WidenHalf(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static float Sum(F v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
  }
};

}  // namespace

void GemvRowsAvx2(const uint16_t* w, int64_t r0, int64_t r1, int64_t rows, int64_t cols,
                  const float* x, int64_t batch, float* y) {
  RowsSimd<Vec256>(w, r0, r1, rows, cols, x, batch, y);
}

}  // namespace kvplan::demo::detail

#pragma GCC pop_options
