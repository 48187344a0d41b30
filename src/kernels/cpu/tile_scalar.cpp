// The portable path: plain loops (the compiler may use the baseline SSE2),
// elements widened with the exact fp_convert.h functions, std::exp.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/tile.h"
#include "kernels/fp_convert.h"

namespace kvplan::kernels::cpu {

namespace {

// Widens n rows of d elements (with no scale) into dst [n][d] floats; one
// switch per tile, the exact inline conversions per element.
void Widen(const void* src, int64_t n, int64_t d, KvDtype dtype, float* dst) {
  const int64_t count = n * d;
  switch (dtype) {
    case KvDtype::kFp32:
      for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<const float*>(src)[i];
      return;
    case KvDtype::kFp16:
      for (int64_t i = 0; i < count; ++i)
        dst[i] = HalfToFloat(static_cast<const uint16_t*>(src)[i]);
      return;
    case KvDtype::kBf16:
      for (int64_t i = 0; i < count; ++i)
        dst[i] = Bf16ToFloat(static_cast<const uint16_t*>(src)[i]);
      return;
    case KvDtype::kInt8:
      for (int64_t i = 0; i < count; ++i)
        dst[i] = static_cast<float>(static_cast<const int8_t*>(src)[i]);
      return;
    case KvDtype::kFp8E4M3:
      for (int64_t i = 0; i < count; ++i)
        dst[i] = Fp8E4M3ToFloat(static_cast<const uint8_t*>(src)[i]);
      return;
  }
}

// q . k with eight interleaved partial sums: as accurate as the SIMD path's
// lanes (a single running sum loses ~sqrt(d) more bits) and vectorisable.
float Dot(const float* q, const float* k, int64_t d) {
  float part[8] = {};
  int64_t i = 0;
  for (; i + 8 <= d; i += 8) {
    for (int j = 0; j < 8; ++j) part[j] += q[i + j] * k[i + j];
  }
  for (; i < d; ++i) part[i % 8] += q[i] * k[i];
  return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

}  // namespace

void ProcessRunScalar(const float* q, int64_t group, int64_t d, KvDtype dtype, const Run& run,
                      RunState& st, Scratch& scratch) {
  const int64_t tile = TileTokens(d);
  const uint64_t esize = ElementBytes(dtype);
  for (int64_t t0 = 0; t0 < run.n; t0 += tile) {
    const int64_t n = std::min(tile, run.n - t0);
    const auto* kraw =
        static_cast<const unsigned char*>(run.k) + static_cast<uint64_t>(t0 * d) * esize;
    const auto* vraw =
        static_cast<const unsigned char*>(run.v) + static_cast<uint64_t>(t0 * d) * esize;
    const float* k = reinterpret_cast<const float*>(kraw);
    const float* v = reinterpret_cast<const float*>(vraw);
    if (dtype != KvDtype::kFp32) {
      Widen(kraw, n, d, dtype, scratch.k);
      Widen(vraw, n, d, dtype, scratch.v);
      k = scratch.k;
      v = scratch.v;
    }
    for (int64_t g = 0; g < group; ++g) {
      const float* qg = q + g * d;
      float* s = scratch.s + g * tile;
      float tile_max = -INFINITY;
      for (int64_t t = 0; t < n; ++t) {
        const float dot = Dot(qg, k + t * d, d);
        s[t] = run.k_scale ? dot * run.k_scale[t0 + t] : dot;
        tile_max = std::max(tile_max, s[t]);
      }
      const float m_new = std::max(st.m[g], tile_max);
      const float alpha = std::exp(st.m[g] - m_new);  // 0 for the first tile (m = -inf)
      float sum = 0;
      for (int64_t t = 0; t < n; ++t) {
        s[t] = std::exp(s[t] - m_new);
        sum += s[t];
        if (run.v_scale) s[t] *= run.v_scale[t0 + t];
      }
      st.m[g] = m_new;
      st.l[g] = st.l[g] * alpha + sum;
      float* acc = st.acc + g * d;
      if (alpha != 1.0f) {
        for (int64_t i = 0; i < d; ++i) acc[i] *= alpha;
      }
      for (int64_t t = 0; t < n; ++t) {
        for (int64_t i = 0; i < d; ++i) acc[i] += s[t] * v[t * d + i];
      }
    }
  }
}

}  // namespace kvplan::kernels::cpu
