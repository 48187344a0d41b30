#include "kernels/reference.h"

#include <cmath>
#include <limits>

#include "kernels/fp_convert.h"

namespace kvplan::kernels {

std::vector<double> DecodeAttentionReference(const DecodeArgs& a) {
  ValidateDecodeArgs(a);
  const DecodeShape& s = a.shape;
  const int64_t d = s.head_dim;
  const int64_t group = s.Group();
  const KvCacheView& c = a.cache;
  const int64_t esize = static_cast<int64_t>(ElementBytes(c.dtype));
  const auto* kbase = static_cast<const unsigned char*>(c.k);
  const auto* vbase = static_cast<const unsigned char*>(c.v);
  const double scale = a.Scale();
  std::vector<double> out(static_cast<size_t>(s.batch * s.q_heads * d), 0.0);
  for (int64_t b = 0; b < s.batch; ++b) {
    const int64_t n = a.seq_lens[b];
    if (n == 0) continue;
    for (int64_t qh = 0; qh < s.q_heads; ++qh) {
      const int64_t kvh = qh / group;
      const float* q = a.q + (b * s.q_heads + qh) * d;
      std::vector<double> score(static_cast<size_t>(n));
      double max_score = -std::numeric_limits<double>::infinity();
      for (int64_t t = 0; t < n; ++t) {
        const int64_t row = c.layout.Row(b, kvh, t, s.kv_heads);
        const double ks = HasScales(c.dtype) ? c.k_scale[row] : 1.0;
        double dot = 0;
        for (int64_t i = 0; i < d; ++i) {
          dot +=
              static_cast<double>(q[i]) * ks * DecodeElement(kbase + row * d * esize, i, c.dtype);
        }
        score[t] = scale * dot;
        max_score = std::max(max_score, score[t]);
      }
      double sum = 0;
      for (int64_t t = 0; t < n; ++t) {
        score[t] = std::exp(score[t] - max_score);
        sum += score[t];
      }
      double* o = out.data() + (b * s.q_heads + qh) * d;
      for (int64_t t = 0; t < n; ++t) {
        const int64_t row = c.layout.Row(b, kvh, t, s.kv_heads);
        const double w = score[t] / sum * (HasScales(c.dtype) ? c.v_scale[row] : 1.0);
        for (int64_t i = 0; i < d; ++i)
          o[i] += w * DecodeElement(vbase + row * d * esize, i, c.dtype);
      }
    }
  }
  return out;
}

double ToleranceRatio(const float* got, const std::vector<double>& ref, double abs_tol,
                      double rel_tol) {
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (std::isnan(got[i])) return std::numeric_limits<double>::infinity();
    const double excess = (std::fabs(got[i] - ref[i]) - rel_tol * std::fabs(ref[i])) / abs_tol;
    worst = std::max(worst, excess);
  }
  return worst;
}

Tolerance ToleranceFor(KvDtype dtype) {
  switch (dtype) {
    case KvDtype::kFp32:
      return {1e-4, 2e-4};
    case KvDtype::kFp16:
      return {1e-3, 2e-3};
    case KvDtype::kBf16:
    case KvDtype::kInt8:
    case KvDtype::kFp8E4M3:
      return {4e-3, 1e-2};
  }
  return {0, 0};
}

}  // namespace kvplan::kernels
