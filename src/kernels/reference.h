// The float64 reference decode attention every kernel is validated against:
// plain loops over (b, qh, t, i), elements dequantized with DecodeElement()
// times the per-token-head scale, a two-pass softmax (max, then sum) in
// double. Slow and obviously correct; never timed.
#pragma once

#include <vector>

#include "kernels/decode.h"

namespace kvplan::kernels {

/// out[b][qh][i] of one decode step (see decode.h) in double precision;
/// args.out is ignored. Throws what ValidateDecodeArgs throws.
std::vector<double> DecodeAttentionReference(const DecodeArgs& args);

/// The largest violation of |got - ref| <= abs_tol + rel_tol * |ref| over
/// all elements, as (|got - ref| - rel_tol * |ref|) / abs_tol, so a value
/// <= 1 means every element is within tolerance. NaN in got counts as +inf.
double ToleranceRatio(const float* got, const std::vector<double>& ref, double abs_tol,
                      double rel_tol);

/// Tolerance of a kernel against the reference for a cache dtype. The
/// reference dequantizes exactly as a kernel must, so the error is only the
/// kernel's arithmetic: fp32 for fp32 caches, and up to the dtype's own
/// precision for kernels that compute in it (fp16/bf16 tensor-core products
/// on CUDA); int8/fp8 are scored like bf16. Outputs are O(1) (averages of
/// O(1) values), hence the absolute part.
struct Tolerance {
  double abs_tol;
  double rel_tol;
};
Tolerance ToleranceFor(KvDtype dtype);

}  // namespace kvplan::kernels
