// The AVX2 + FMA + F16C rows of GemvF16 (gemv_simd.inc on 256-bit vectors),
// compiled by a target pragma so the rest of the binary stays baseline
// x86-64 (called only after CpuHasAvx2()).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/gemv.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace kvplan::kernels::detail {
namespace {

// The width layer comes before the code built on it.
// clang-format off
#include "kernels/simd/avx2.inc"
#include "kernels/cpu/gemv_simd.inc"
// clang-format on

struct Vec256 : Avx2 {
  // 4 rows at batch 1, 2 at batch 2, 3 at batches 3-4 (16 registers). At
  // batch 1, two rows (two chains) leave the stream well short of the read
  // ceiling, and 8 rows are no better than 4; at batch 2, 4 rows are slower
  // than 2 (each row is its own stream for the hardware prefetcher). At
  // batches 3-4, 3 rows (12 accumulators, 3 weight vectors and one of x)
  // read each x vector once per 3 rows instead of 2: where the batch's x no
  // longer stays in L1 beside the streaming weights (4 x 2048 columns of
  // fp32 fill a 32 KiB L1d) it comes from L2 once per block, and the GEMV's
  // speed then depends less on the column count, which the weights curve
  // (measured at one column count) does not know.
  template <int B>
  static constexpr int kRows = B == 1 ? 4 : (B >= 3 ? 3 : 2);
};

}  // namespace

void GemvRowsAvx2(const uint16_t* w, int64_t r0, int64_t r1, int64_t rows, int64_t cols,
                  const float* x, int64_t batch, float* y) {
  RowsSimd<Vec256>(w, r0, r1, rows, cols, x, batch, y);
}

}  // namespace kvplan::kernels::detail

#pragma GCC pop_options
