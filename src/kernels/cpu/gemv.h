// y = W x for fp16 weights and a few fp32 vectors: the weight side of a
// synthetic decode step (each weight is read once per step for the whole
// batch, as a serving engine's batched GEMV/GEMM does). OpenMP over rows, so
// each thread streams one contiguous slice of W; AVX-512 when the CPU has it
// (gemv_avx512.cpp), else AVX2+FMA+F16C, else a portable loop.
#pragma once

#include <cstdint>

namespace kvplan::kernels {

/// y[b][r] = sum_c W[r][c] * x[b][c] for b < batch; W is [rows][cols] fp16
/// bits, x is [batch][cols], y is [batch][rows]. cols % 16 == 0 for the
/// AVX2 path (else the portable one runs). `threads` 0: OpenMP's default.
void GemvF16(const uint16_t* w, int64_t rows, int64_t cols, const float* x, int64_t batch, float* y,
             int threads = 0);

namespace detail {
/// Rows [r0, r1) of GemvF16 on the AVX2 path, batch <= 4.
void GemvRowsAvx2(const uint16_t* w, int64_t r0, int64_t r1, int64_t rows, int64_t cols,
                  const float* x, int64_t batch, float* y);
/// The same on the AVX-512 path (avx512f as well), 16 columns a step.
void GemvRowsAvx512(const uint16_t* w, int64_t r0, int64_t r1, int64_t rows, int64_t cols,
                    const float* x, int64_t batch, float* y);
}  // namespace detail

}  // namespace kvplan::kernels
