// The AVX2 + FMA + F16C path. Compiled for those extensions by a target
// pragma (not -mavx2), so the rest of the binary stays baseline x86-64; it
// is only called after CpuHasAvx2(). Everything here but the entry point has
// internal linkage, so no AVX2 copy of an inline function can leak into
// baseline code. Headers come before the pragma for the same reason.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/tile.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace kvplan::kernels::cpu {
namespace {

// 8 elements of a row, widened exactly to float. fp8 comes out as value/256
// (see the note at Fp8Factor).
template <KvDtype T>
inline __m256 Load8(const unsigned char* p) {
  if constexpr (T == KvDtype::kFp32) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  } else if constexpr (T == KvDtype::kFp16) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  } else if constexpr (T == KvDtype::kBf16) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  } else if constexpr (T == KvDtype::kInt8) {
    return _mm256_cvtepi32_ps(
        _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  } else {
    // e4m3 -> fp16 bits: sign to bit 15, exponent and mantissa to bits 7..14.
    // That fp16 is the fp8 value times 2^-8 for normals and subnormals alike
    // (bias 15 vs 7), and F16C widens it exactly.
    const __m128i x = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    const __m128i sign = _mm_slli_epi16(_mm_and_si128(x, _mm_set1_epi16(0x80)), 8);
    const __m128i rest = _mm_slli_epi16(_mm_and_si128(x, _mm_set1_epi16(0x7F)), 7);
    return _mm256_cvtph_ps(_mm_or_si128(sign, rest));
  }
}

// The factor the per-token scale carries to undo Load8's 2^-8 for fp8.
template <KvDtype T>
constexpr float Fp8Factor() {
  return T == KvDtype::kFp8E4M3 ? 256.0f : 1.0f;
}

// Widens `count` elements (a multiple of 8) to dst.
template <KvDtype T>
inline void Widen(const unsigned char* src, int64_t count, float* dst) {
  constexpr int64_t kBytes = static_cast<int64_t>(T == KvDtype::kFp32 ? 4 : (T == KvDtype::kFp16 || T == KvDtype::kBf16) ? 2 : 1);
  int64_t i = 0;
  for (; i + 32 <= count; i += 32) {
    const __m256 a = Load8<T>(src + i * kBytes);
    const __m256 b = Load8<T>(src + (i + 8) * kBytes);
    const __m256 c = Load8<T>(src + (i + 16) * kBytes);
    const __m256 d = Load8<T>(src + (i + 24) * kBytes);
    _mm256_storeu_ps(dst + i, a);
    _mm256_storeu_ps(dst + i + 8, b);
    _mm256_storeu_ps(dst + i + 16, c);
    _mm256_storeu_ps(dst + i + 24, d);
  }
  for (; i < count; i += 8) _mm256_storeu_ps(dst + i, Load8<T>(src + i * kBytes));
}

inline float Hsum(__m256 v) {
  __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}

// [sum(a0), sum(a1), sum(a2), sum(a3)].
inline __m128 Reduce4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
  return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

// exp(x) for x <= 0 (Cephes expf polynomial, ~2 ulp); below -87 gives ~1e-38.
inline __m256 Exp(__m256 x) {
  x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

// s[0..R) = q . k[0..R) for R consecutive rows of k ([R][d] floats): R
// independent FMA chains, each q vector loaded once for all R rows.
template <int R>
inline void ScoreRows(const float* q, const float* k, int64_t d, float* s) {
  static_assert(R % 4 == 0);
  __m256 a[R];
  for (int r = 0; r < R; ++r) a[r] = _mm256_setzero_ps();
  for (int64_t i = 0; i < d; i += 8) {
    const __m256 qv = _mm256_loadu_ps(q + i);
    for (int r = 0; r < R; ++r) a[r] = _mm256_fmadd_ps(_mm256_loadu_ps(k + r * d + i), qv, a[r]);
  }
  for (int r = 0; r < R; r += 4) _mm_storeu_ps(s + r, Reduce4(a[r], a[r + 1], a[r + 2], a[r + 3]));
}

// s[t] = q . k[t] for t < n; k is [n][d] floats. Eight rows at a time: eight
// independent FMA chains hide the FMA latency (two issue per cycle, four
// cycles each), and each q vector loaded serves eight rows.
inline void Scores(const float* q, const float* k, int64_t n, int64_t d, float* s) {
  int64_t t = 0;
  for (; t + 8 <= n; t += 8) ScoreRows<8>(q, k + t * d, d, s + t);
  for (; t + 4 <= n; t += 4) ScoreRows<4>(q, k + t * d, d, s + t);
  for (; t < n; ++t) {
    __m256 a = _mm256_setzero_ps();
    for (int64_t i = 0; i < d; i += 8) {
      a = _mm256_fmadd_ps(_mm256_loadu_ps(k + t * d + i), _mm256_loadu_ps(q + i), a);
    }
    s[t] = Hsum(a);
  }
}

// acc[0..d) += sum_t p[t] * v[t][0..d). 64 columns at a time, so eight
// independent accumulator chains keep both FMA ports busy.
inline void AccumulatePV(const float* p, const float* v, int64_t n, int64_t d, float* acc) {
  int64_t i = 0;
  for (; i + 64 <= d; i += 64) {
    __m256 c[8];
    for (int j = 0; j < 8; ++j) c[j] = _mm256_loadu_ps(acc + i + 8 * j);
    for (int64_t t = 0; t < n; ++t) {
      const __m256 pt = _mm256_broadcast_ss(p + t);
      const float* vt = v + t * d + i;
      for (int j = 0; j < 8; ++j) c[j] = _mm256_fmadd_ps(pt, _mm256_loadu_ps(vt + 8 * j), c[j]);
    }
    for (int j = 0; j < 8; ++j) _mm256_storeu_ps(acc + i + 8 * j, c[j]);
  }
  for (; i + 32 <= d; i += 32) {
    __m256 c0 = _mm256_loadu_ps(acc + i), c1 = _mm256_loadu_ps(acc + i + 8);
    __m256 c2 = _mm256_loadu_ps(acc + i + 16), c3 = _mm256_loadu_ps(acc + i + 24);
    for (int64_t t = 0; t < n; ++t) {
      const __m256 pt = _mm256_broadcast_ss(p + t);
      const float* vt = v + t * d + i;
      c0 = _mm256_fmadd_ps(pt, _mm256_loadu_ps(vt), c0);
      c1 = _mm256_fmadd_ps(pt, _mm256_loadu_ps(vt + 8), c1);
      c2 = _mm256_fmadd_ps(pt, _mm256_loadu_ps(vt + 16), c2);
      c3 = _mm256_fmadd_ps(pt, _mm256_loadu_ps(vt + 24), c3);
    }
    _mm256_storeu_ps(acc + i, c0);
    _mm256_storeu_ps(acc + i + 8, c1);
    _mm256_storeu_ps(acc + i + 16, c2);
    _mm256_storeu_ps(acc + i + 24, c3);
  }
  for (; i < d; i += 8) {
    __m256 c = _mm256_loadu_ps(acc + i);
    for (int64_t t = 0; t < n; ++t) {
      c = _mm256_fmadd_ps(_mm256_broadcast_ss(p + t), _mm256_loadu_ps(v + t * d + i), c);
    }
    _mm256_storeu_ps(acc + i, c);
  }
}

// Asks for [p, p + bytes) ahead of use, one request per 64-byte line, so the
// next tile streams in from memory while this one is computed on: the
// hardware prefetcher alone leaves the core waiting on two interleaved streams.
inline void Prefetch(const unsigned char* p, int64_t bytes) {
  for (int64_t off = 0; off < bytes; off += 64) _mm_prefetch(reinterpret_cast<const char*>(p + off), _MM_HINT_T0);
}

template <KvDtype T>
void Process(const float* q, int64_t group, int64_t d, const Run& run, RunState& st,
             Scratch& scratch) {
  constexpr int64_t kBytes = static_cast<int64_t>(T == KvDtype::kFp32 ? 4 : (T == KvDtype::kFp16 || T == KvDtype::kBf16) ? 2 : 1);
  constexpr bool kScaled = T == KvDtype::kInt8 || T == KvDtype::kFp8E4M3;
  const int64_t tile = TileTokens(d);
  for (int64_t t0 = 0; t0 < run.n; t0 += tile) {
    const int64_t n = std::min(tile, run.n - t0);
    const auto* kraw = static_cast<const unsigned char*>(run.k) + t0 * d * kBytes;
    const auto* vraw = static_cast<const unsigned char*>(run.v) + t0 * d * kBytes;
    // The next tile's lines are requested a share per query head, spread
    // over this tile's work: a burst of all of them at once overflows the
    // core's miss buffers, and with 4-8 heads of FMAs per tile the stream
    // would otherwise stall (measured: g4 at 60% of the g1 bandwidth).
    const int64_t next = t0 + tile < run.n ? std::min(tile, run.n - t0 - tile) * d * kBytes : 0;
    const int64_t share = (next / group + 63) / 64 * 64;
    const float* k = reinterpret_cast<const float*>(kraw);
    const float* v = reinterpret_cast<const float*>(vraw);
    if constexpr (T != KvDtype::kFp32) {
      Widen<T>(kraw, n * d, scratch.k);
      Widen<T>(vraw, n * d, scratch.v);
      k = scratch.k;
      v = scratch.v;
    }
    for (int64_t g = 0; g < group; ++g) {
      if (next > 0) {
        const int64_t off = g * share, len = std::min(share, next - off);
        if (len > 0) {
          Prefetch(kraw + tile * d * kBytes + off, len);
          Prefetch(vraw + tile * d * kBytes + off, len);
        }
      }
      float* s = scratch.s + g * tile;
      Scores(q + g * d, k, n, d, s);
      if constexpr (kScaled) {
        for (int64_t t = 0; t < n; ++t) s[t] *= run.k_scale[t0 + t] * Fp8Factor<T>();
      }
      float tile_max = s[0];
      for (int64_t t = 1; t < n; ++t) tile_max = std::max(tile_max, s[t]);
      const float m_new = std::max(st.m[g], tile_max);
      const float alpha = std::exp(st.m[g] - m_new);  // 0 for the first tile (m = -inf)
      const __m256 mv = _mm256_set1_ps(m_new);
      __m256 sumv = _mm256_setzero_ps();
      int64_t t = 0;
      for (; t + 8 <= n; t += 8) {
        const __m256 e = Exp(_mm256_sub_ps(_mm256_loadu_ps(s + t), mv));
        sumv = _mm256_add_ps(sumv, e);
        _mm256_storeu_ps(s + t, e);
      }
      float sum = Hsum(sumv);
      for (; t < n; ++t) {
        s[t] = std::exp(s[t] - m_new);
        sum += s[t];
      }
      if constexpr (kScaled) {
        for (t = 0; t < n; ++t) s[t] *= run.v_scale[t0 + t] * Fp8Factor<T>();
      }
      st.m[g] = m_new;
      st.l[g] = st.l[g] * alpha + sum;
      float* acc = st.acc + g * d;
      if (alpha != 1.0f) {
        const __m256 av = _mm256_set1_ps(alpha);
        for (int64_t i = 0; i < d; i += 8) {
          _mm256_storeu_ps(acc + i, _mm256_mul_ps(_mm256_loadu_ps(acc + i), av));
        }
      }
      AccumulatePV(s, v, n, d, acc);
    }
  }
}

}  // namespace

void ProcessRunAvx2(const float* q, int64_t group, int64_t d, KvDtype dtype, const Run& run,
                    RunState& state, Scratch& scratch) {
  switch (dtype) {
    case KvDtype::kFp32: return Process<KvDtype::kFp32>(q, group, d, run, state, scratch);
    case KvDtype::kFp16: return Process<KvDtype::kFp16>(q, group, d, run, state, scratch);
    case KvDtype::kBf16: return Process<KvDtype::kBf16>(q, group, d, run, state, scratch);
    case KvDtype::kInt8: return Process<KvDtype::kInt8>(q, group, d, run, state, scratch);
    case KvDtype::kFp8E4M3: return Process<KvDtype::kFp8E4M3>(q, group, d, run, state, scratch);
  }
}

}  // namespace kvplan::kernels::cpu

#pragma GCC pop_options
