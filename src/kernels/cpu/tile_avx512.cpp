// The AVX-512 path: the tile code of tile_simd.inc on 512-bit vectors (16
// floats), twice the FMA width of the AVX2 path, which matters where the
// kernel is compute-limited: GQA groups 4-8 and the widening of int8 and fp8.
// Built as tile_avx2.cpp is (target pragma, internal linkage, headers first);
// only called after CpuHasAvx512() and for head_dim % 16 == 0.
// GCC 12's AVX-512 intrinsics fill their unused operands with
// _mm*_undefined_*(), which its own -Wuninitialized then reports inside the
// header (GCC bug 105593): silenced for this file, before the header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "kernels/cpu/tile.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx2,fma,f16c")

namespace kvplan::kernels::cpu {
namespace {

// The width layer comes before the code built on it.
// clang-format off
#include "kernels/simd/avx2.inc"
#include "kernels/simd/avx512.inc"
#include "kernels/cpu/tile_simd.inc"
// clang-format on

struct Vec512 : Avx512 {
  // Lane j of the result is the sum of x[j]'s lanes: a transposing tree,
  // each level adding two shuffles of a pair (45 instructions and uops for
  // the 16 sums, where four Reduce4 take 52 instructions, 76 uops).
  static F Sum16(const F (&x)[16]) {
    F y[8], z[4], w[2];
    // Per 128-bit block [x0, x1, x0, x1], then [x0, x1, x2, x3], partial sums.
    for (int i = 0; i < 8; ++i) {
      y[i] = _mm512_add_ps(_mm512_unpacklo_ps(x[2 * i], x[2 * i + 1]),
                           _mm512_unpackhi_ps(x[2 * i], x[2 * i + 1]));
    }
    for (int i = 0; i < 4; ++i) {
      z[i] = _mm512_add_ps(_mm512_shuffle_ps(y[2 * i], y[2 * i + 1], 0x44),
                           _mm512_shuffle_ps(y[2 * i], y[2 * i + 1], 0xEE));
    }
    // Then the four blocks of each group of four sums added across blocks.
    constexpr int kEven = _MM_SHUFFLE(2, 0, 2, 0), kOdd = _MM_SHUFFLE(3, 1, 3, 1);
    for (int i = 0; i < 2; ++i) {
      w[i] = _mm512_add_ps(_mm512_shuffle_f32x4(z[2 * i], z[2 * i + 1], kEven),
                           _mm512_shuffle_f32x4(z[2 * i], z[2 * i + 1], kOdd));
    }
    return _mm512_add_ps(_mm512_shuffle_f32x4(w[0], w[1], kEven),
                         _mm512_shuffle_f32x4(w[0], w[1], kOdd));
  }
  // The mask of the first `count` (0-16) lanes.
  static __mmask16 FirstLanes(int64_t count) { return static_cast<__mmask16>((1u << count) - 1); }
  // The first `count` lanes of x to p.
  static void StoreFirst(float* p, int64_t count, F x) {
    _mm512_mask_storeu_ps(p, FirstLanes(count), x);
  }

  // Each lane j of x combined (the max, else the sum) with lanes j + H,
  // j + 2H, ... mod 16: every lane then holds its head's result (heads in
  // lanes j mod H).
  template <bool kMax>
  static F Combine(F a, F b) {
    return kMax ? _mm512_max_ps(a, b) : _mm512_add_ps(a, b);
  }
  template <int H, bool kMax>
  static F AcrossTokens(F x) {
    x = Combine<kMax>(x, _mm512_shuffle_f32x4(x, x, _MM_SHUFFLE(1, 0, 3, 2)));
    if constexpr (H == 4) x = Combine<kMax>(x, _mm512_shuffle_f32x4(x, x, _MM_SHUFFLE(2, 3, 0, 1)));
    return x;
  }

  // exp(x) for x <= 0: Exp of tile_simd.inc on sixteen lanes.
  static F Exp(F x) {
    using C = ExpConsts;
    x = _mm512_max_ps(x, _mm512_set1_ps(C::kFloor));
    const F n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(C::kLog2e)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    F r = _mm512_fnmadd_ps(n, _mm512_set1_ps(C::kLn2Hi), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(C::kLn2Lo), r);
    F p = _mm512_set1_ps(C::kPoly[0]);
    for (int i = 1; i < 6; ++i) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(C::kPoly[i]));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    const __m512i e =
        _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
  }

  // The online-softmax step of H = 4 or 8 heads at once over a tile's
  // scores in lanes, p [n][H] (16 / H tokens per vector; the last vector of
  // a tile masked): what SoftmaxStep does per head, with each head's max,
  // sum and rescale factor in lanes h, h + H, ... of one vector.
  template <int H, KvDtype T>
  static void SoftmaxHeads(float* p, int64_t n, const Run& run, int64_t t0, float* m, float* l,
                           float* acc, int64_t d, float fk, float fv) {
    static_assert(H == 4 || H == 8);
    constexpr bool kScaled = T == KvDtype::kInt8 || T == KvDtype::kFp8E4M3;
    constexpr int64_t P = 16 / H;  // tokens per vector
    const int64_t vecs = (n + P - 1) / P;
    const auto lanes = [&](int64_t i) { return FirstLanes(std::min(P, n - P * i) * H); };
    const __mmask16 heads = FirstLanes(H);
    // Lane j: token j / H of the vector (for its scale), head j % H.
    const __m512i iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i token = _mm512_srli_epi32(iota, H == 8 ? 3 : 2);
    const __m512i head = _mm512_and_si512(iota, _mm512_set1_epi32(H - 1));
    // The scales of the vector's tokens in their heads' lanes, times f.
    const auto scales = [&](const float* sc, int64_t i, float f) {
      const F x = _mm512_maskz_loadu_ps(FirstLanes(std::min(P, n - P * i)), sc + t0 + P * i);
      return _mm512_mul_ps(_mm512_permutexvar_ps(token, x), _mm512_set1_ps(f));
    };
    const F neg_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    F mx = neg_inf;
    for (int64_t i = 0; i < vecs; ++i) {
      const __mmask16 k = lanes(i);
      F x = _mm512_mask_loadu_ps(neg_inf, k, p + 16 * i);
      if constexpr (kScaled) {
        x = _mm512_mask_mul_ps(x, k, x, scales(run.k_scale, i, fk));
        _mm512_mask_storeu_ps(p + 16 * i, k, x);
      }
      mx = _mm512_max_ps(mx, x);
    }
    const F m_old = _mm512_permutexvar_ps(head, _mm512_maskz_loadu_ps(heads, m));
    const F m_new = _mm512_max_ps(m_old, AcrossTokens<H, true>(mx));
    // Exactly 1 where a head's max did not move; ~1e-38 on the first tile
    // (m = -inf), where l and acc are 0.
    const F alpha = Exp(_mm512_sub_ps(m_old, m_new));
    F sum = _mm512_setzero_ps();
    for (int64_t i = 0; i < vecs; ++i) {
      const __mmask16 k = lanes(i);
      F e = Exp(_mm512_sub_ps(_mm512_mask_loadu_ps(neg_inf, k, p + 16 * i), m_new));
      sum = _mm512_mask_add_ps(sum, k, sum, e);
      if constexpr (kScaled) e = _mm512_mul_ps(e, scales(run.v_scale, i, fv));
      _mm512_mask_storeu_ps(p + 16 * i, k, e);
    }
    _mm512_mask_storeu_ps(m, heads, m_new);
    _mm512_mask_storeu_ps(l, heads,
                          _mm512_add_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(heads, l), alpha),
                                        AcrossTokens<H, false>(sum)));
    unsigned moved = _mm512_mask_cmp_ps_mask(heads, alpha, _mm512_set1_ps(1.0f), _CMP_NEQ_UQ);
    if (moved != 0) {
      alignas(64) float a[16];
      _mm512_store_ps(a, alpha);
      RescaleMoved<Vec512>(acc, d, a, moved);
    }
  }

  // fp8 also widens 32 elements at a time, out of order (Widen2): the bits
  // Widen makes, done on 32 16-bit halves at once (sign-extend, shift left
  // by 4, mask), then each half put above a zero half by one in-lane unpack
  // per 16 floats: 5 uops per 32 elements where two Widens take 6. The
  // order: lane j of lo holds element 8 (j / 4) + j % 4 of the 32, lane j
  // of hi element 8 (j / 4) + 4 + j % 4. What meets them is put in that order
  // too (q by HeadChunk, a tile's p.V sums by PVTile: PairOrder, and back
  // by PairUnorder).
  template <KvDtype T>
  static constexpr bool kWidenPairs = T == KvDtype::kFp8E4M3;
  template <KvDtype T>
  static void Widen2(const unsigned char* p, F& lo, F& hi) {
    static_assert(T == KvDtype::kFp8E4M3);
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m512i w = _mm512_and_si512(_mm512_slli_epi16(_mm512_cvtepi8_epi16(bytes), 4),
                                       _mm512_set1_epi16(static_cast<short>(0x87FF)));
    lo = _mm512_castsi512_ps(_mm512_unpacklo_epi16(_mm512_setzero_si512(), w));
    hi = _mm512_castsi512_ps(_mm512_unpackhi_epi16(_mm512_setzero_si512(), w));
  }
  struct PairIndex {
    alignas(64) int32_t lo[16], hi[16], first[16], second[16];
  };
  static constexpr PairIndex kPairIndex = [] {
    PairIndex x{};
    for (int j = 0; j < 16; ++j) {
      x.lo[j] = 8 * (j / 4) + j % 4;
      x.hi[j] = x.lo[j] + 4;
    }
    for (int e = 0; e < 32; ++e) {
      (e < 16 ? x.first : x.second)[e % 16] = (e % 8 < 4 ? 0 : 16) + 4 * (e / 8) + e % 4;
    }
    return x;
  }();
  // a, b: elements 0-15 and 16-31 of 32 in order; to Widen2's lo and hi.
  static void PairOrder(F& a, F& b) {
    const F lo = _mm512_permutex2var_ps(a, _mm512_load_si512(kPairIndex.lo), b);
    b = _mm512_permutex2var_ps(a, _mm512_load_si512(kPairIndex.hi), b);
    a = lo;
  }
  // The inverse: Widen2's lo and hi back to elements 0-15 and 16-31.
  static void PairUnorder(F& lo, F& hi) {
    const F a = _mm512_permutex2var_ps(lo, _mm512_load_si512(kPairIndex.first), hi);
    hi = _mm512_permutex2var_ps(lo, _mm512_load_si512(kPairIndex.second), hi);
    lo = a;
  }

  // 16 elements of a row, widened exactly to float, as Vec256::Widen does
  // 8 (fp8 times kWidenUnit, its subnormal codes as 0).
  template <KvDtype T>
  static F Widen(const unsigned char* p) {
    if constexpr (T == KvDtype::kFp32) {
      return _mm512_loadu_ps(reinterpret_cast<const float*>(p));
    } else if constexpr (T == KvDtype::kFp16) {
      return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    } else if constexpr (T == KvDtype::kBf16) {
      const __m512i w =
          _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
      return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
    } else if constexpr (T == KvDtype::kInt8) {
      return _mm512_cvtepi32_ps(
          _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
    } else {
      // e4m3 straight to fp32 bits, the value times 2^-120 (bias 7 vs 127):
      // each byte sign-extended to 32 bits and shifted left by 20 puts the
      // sign at bits 31..27, exponent and mantissa at 26..20; clearing bits
      // 30..27 leaves the float. Three uops per 16 elements, where the fp16
      // route (sign-extend to 16 bits, shift, mask, F16C conversions of two
      // uops) takes 8 per 32.
      // Exact for every normal code; a subnormal code (exponent 0) becomes
      // an fp32 denormal, which an FMA would take a microcode assist for
      // (many times slower), so this path runs fp8 with the
      // thread's denormals-are-zero and flush-to-zero modes on (FlushDenormals
      // in tile.h): subnormal codes, at most 7 * 2^-9 times the scale (under
      // 1/28000 of a row's largest value when the scale is amax / 448), count
      // as 0.
      const __m512i w = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
      return _mm512_castsi512_ps(_mm512_and_si512(_mm512_slli_epi32(w, 20),
                                                  _mm512_set1_epi32(static_cast<int>(0x87FFFFFF))));
    }
  }
};

}  // namespace

void ProcessRunAvx512(const float* q, int64_t group, int64_t d, KvDtype dtype, const Run& run,
                      RunState& state, Scratch& scratch) {
  const FlushDenormals daz(dtype == KvDtype::kFp8E4M3);
  ProcessRunSimd<Vec512>(q, group, d, dtype, run, state, scratch);
}

}  // namespace kvplan::kernels::cpu

#pragma GCC pop_options
