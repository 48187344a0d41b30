// The AVX2 + FMA + F16C path: the tile code of tile_simd.inc on 256-bit
// vectors. Compiled for those extensions by a target pragma (not -mavx2), so
// the rest of the binary stays baseline x86-64; it is only called after
// CpuHasAvx2(). Everything here but the entry point has internal linkage, so
// no AVX2 copy of an inline function can leak into baseline code. Headers
// come before the pragma for the same reason.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "kernels/cpu/tile.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace kvplan::kernels::cpu {
namespace {

// The width layer comes before the code built on it.
// clang-format off
#include "kernels/simd/avx2.inc"
#include "kernels/cpu/tile_simd.inc"
// clang-format on

struct Vec256 : Avx2 {
  // The online-softmax step of four heads at once over a tile's scores in
  // lanes, p [n][4]: what SoftmaxStep does per head, two tokens a vector
  // (each head's max and sum in lanes h and h + 4, then the two halves
  // combined), and a last odd token as one 128-bit vector.
  template <int H, KvDtype T>
  static void SoftmaxHeads(float* p, int64_t n, const Run& run, int64_t t0, float* m, float* l,
                           float* acc, int64_t d, float fk, float fv) {
    static_assert(H == 4);
    constexpr bool kScaled = T == KvDtype::kInt8 || T == KvDtype::kFp8E4M3;
    const int64_t pairs = n / 2;
    const bool odd = n % 2 != 0;
    // Token 2 i's scale in the low four lanes, token 2 i + 1's in the high
    // four, times f; and the odd last token's in four lanes.
    const auto scales = [&](const float* sc, int64_t i, float f) {
      const __m256 x =
          _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_broadcast_ss(sc + t0 + 2 * i)),
                               _mm_broadcast_ss(sc + t0 + 2 * i + 1), 1);
      return _mm256_mul_ps(x, _mm256_set1_ps(f));
    };
    const auto last_scale = [&](const float* sc, float f) {
      return _mm_mul_ps(_mm_broadcast_ss(sc + t0 + n - 1), _mm_set1_ps(f));
    };
    const auto exp4 = [](__m128 x) {
      return _mm256_castps256_ps128(Exp(_mm256_castps128_ps256(x)));
    };
    float* last = p + 8 * pairs;
    __m256 mx = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    for (int64_t i = 0; i < pairs; ++i) {
      __m256 x = _mm256_loadu_ps(p + 8 * i);
      if constexpr (kScaled) {
        x = _mm256_mul_ps(x, scales(run.k_scale, i, fk));
        _mm256_storeu_ps(p + 8 * i, x);
      }
      mx = _mm256_max_ps(mx, x);
    }
    __m128 tile_max = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
    if (odd) {
      __m128 x = _mm_loadu_ps(last);
      if constexpr (kScaled) {
        x = _mm_mul_ps(x, last_scale(run.k_scale, fk));
        _mm_storeu_ps(last, x);
      }
      tile_max = _mm_max_ps(tile_max, x);
    }
    const __m128 m_old = _mm_loadu_ps(m), m_new = _mm_max_ps(m_old, tile_max);
    // Exactly 1 where a head's max did not move; ~1e-38 on the first tile
    // (m = -inf), where l and acc are 0.
    const __m128 alpha = exp4(_mm_sub_ps(m_old, m_new));
    const __m256 mv = _mm256_set_m128(m_new, m_new);
    __m256 sum = _mm256_setzero_ps();
    for (int64_t i = 0; i < pairs; ++i) {
      __m256 e = Exp(_mm256_sub_ps(_mm256_loadu_ps(p + 8 * i), mv));
      sum = _mm256_add_ps(sum, e);
      if constexpr (kScaled) e = _mm256_mul_ps(e, scales(run.v_scale, i, fv));
      _mm256_storeu_ps(p + 8 * i, e);
    }
    __m128 sum4 = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
    if (odd) {
      __m128 e = exp4(_mm_sub_ps(_mm_loadu_ps(last), m_new));
      sum4 = _mm_add_ps(sum4, e);
      if constexpr (kScaled) e = _mm_mul_ps(e, last_scale(run.v_scale, fv));
      _mm_storeu_ps(last, e);
    }
    _mm_storeu_ps(m, m_new);
    _mm_storeu_ps(l, _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(l), alpha), sum4));
    unsigned moved =
        static_cast<unsigned>(_mm_movemask_ps(_mm_cmpneq_ps(alpha, _mm_set1_ps(1.0f))));
    if (moved != 0) {
      alignas(16) float a[4];
      _mm_store_ps(a, alpha);
      RescaleMoved<Vec256>(acc, d, a, moved);
    }
  }

  // No dtype widens two vectors at once here (see Vec512::Widen2).
  template <KvDtype T>
  static constexpr bool kWidenPairs = false;

  // 8 elements of a row, widened exactly to float; fp8 times kWidenUnit, and
  // its subnormal codes as 0.
  template <KvDtype T>
  static F Widen(const unsigned char* p) {
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
      // e4m3 straight to fp32 bits, as Vec512::Widen does (see there: the
      // value times 2^-120, subnormal codes 0 under FlushDenormals). Three
      // uops per 8 elements, where the fp16 route (sign-extend to 16 bits,
      // shift, mask, one F16C conversion of two uops) takes five; fp8 is
      // the dtype whose step is most bound by its widening.
      const __m256i w = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
      return _mm256_castsi256_ps(_mm256_and_si256(_mm256_slli_epi32(w, 20),
                                                  _mm256_set1_epi32(static_cast<int>(0x87FFFFFF))));
    }
  }
};

}  // namespace

void ProcessRunAvx2(const float* q, int64_t group, int64_t d, KvDtype dtype, const Run& run,
                    RunState& state, Scratch& scratch) {
  const FlushDenormals daz(dtype == KvDtype::kFp8E4M3);
  ProcessRunSimd<Vec256>(q, group, d, dtype, run, state, scratch);
}

}  // namespace kvplan::kernels::cpu

#pragma GCC pop_options
