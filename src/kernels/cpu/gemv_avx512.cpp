// The AVX-512 rows of GemvF16 (gemv_simd.inc on 512-bit vectors; avx512f +
// f16c), compiled by a target pragma so the rest of the binary stays
// baseline x86-64 (called only after CpuHasAvx512()). Four rows per block at
// every batch width: with 32 registers, 4 rows x 4 vectors of x keep 16
// accumulators, so each x vector loaded serves four rows where the AVX2 path
// (16 registers) serves two or three. Why it exists: the weights curve is
// measured at 2048 columns while the validation model's matrices have 1024
// and 2816, so the GEMV's speed must not depend much on the column count;
// with four rows per block at every batch it depends on it less than the
// AVX2 path's does.
// GCC 12's AVX-512 intrinsics trip its own -Wuninitialized inside the header
// (GCC bug 105593; see src/kernels/cpu/tile_avx512.cpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/gemv.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma,f16c")

namespace kvplan::kernels::detail {
namespace {

// The width layer comes before the code built on it.
// clang-format off
#include "kernels/simd/avx2.inc"
#include "kernels/simd/avx512.inc"
#include "kernels/cpu/gemv_simd.inc"
// clang-format on

struct Vec512 : Avx512 {
  template <int B>
  static constexpr int kRows = 4;
};

}  // namespace

void GemvRowsAvx512(const uint16_t* w, int64_t r0, int64_t r1, int64_t rows, int64_t cols,
                    const float* x, int64_t batch, float* y) {
  RowsSimd<Vec512>(w, r0, r1, rows, cols, x, batch, y);
}

}  // namespace kvplan::kernels::detail

#pragma GCC pop_options
