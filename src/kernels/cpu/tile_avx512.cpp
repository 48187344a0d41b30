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
#pragma GCC target("avx512f,avx2,fma,f16c")

namespace kvplan::kernels::cpu {
namespace {

#include "kernels/cpu/tile_simd.inc"

struct Vec512 {
  using F = __m512;
  static constexpr int64_t kW = 16;
  static F Zero() { return _mm512_setzero_ps(); }
  static F Load(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, F x) { _mm512_storeu_ps(p, x); }
  static F Fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F Bcast(const float* p) { return _mm512_set1_ps(*p); }
  // Each vector's halves added first, then the four 256-bit sums at once.
  static __m256 Fold(F a) {
    return _mm256_add_ps(_mm512_castps512_ps256(a),
                         _mm512_castps512_ps256(_mm512_shuffle_f32x4(a, a, 0xEE)));
  }
  static __m128 Reduce4(F a0, F a1, F a2, F a3) {
    return Reduce4x256(Fold(a0), Fold(a1), Fold(a2), Fold(a3));
  }
  static float Sum(F a) { return Hsum256(Fold(a)); }

  // Lane j of the result is the sum of x[j]'s lanes: a transposing tree,
  // each level adding two shuffles of a pair (45 instructions for the 16
  // sums, where four Reduce4 took 76).
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
  // The first `rows` (1 or 2) rows of eight lanes of x to p.
  static void StoreRows(float* p, int rows, F x) {
    _mm512_mask_storeu_ps(p, rows == 2 ? 0xFFFF : 0x00FF, x);
  }

  static __m256 Lo(F x) { return _mm512_castps512_ps256(x); }
  static __m256 Hi(F x) { return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)); }
  static F Twice(__m256 x) {
    const F y = _mm512_castps256_ps512(x);
    return _mm512_shuffle_f32x4(y, y, _MM_SHUFFLE(1, 0, 1, 0));
  }

  // exp(x) for x <= 0: Exp of tile_simd.inc on sixteen lanes.
  static F Exp(F x) {
    x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
    const F n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    F r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    F p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    const __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
  }

  // The online-softmax step of eight heads at once over a tile's scores in
  // lanes, p [n][8] (two tokens per vector; an odd n leaves half a vector,
  // masked): what SoftmaxStep does per head, with the eight maxima, sums
  // and rescale factors in the lanes of one 256-bit vector.
  template <KvDtype T>
  static void SoftmaxHeads8(float* p, int64_t n, const Run& run, int64_t t0, float* m, float* l,
                            float* acc, int64_t d) {
    constexpr bool kScaled = T == KvDtype::kInt8 || T == KvDtype::kFp8E4M3;
    const int64_t vecs = (n + 1) / 2;
    const auto lanes = [n](int64_t i) -> __mmask16 { return 2 * i + 1 < n ? 0xFFFF : 0x00FF; };
    // Token 2i's scale in lanes 0-7, token 2i+1's in lanes 8-15.
    const __m512i pair = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    const auto scales = [&](const float* sc, int64_t i) {
      const __mmask16 two = 2 * i + 1 < n ? 0x3 : 0x1;
      return _mm512_mul_ps(_mm512_permutexvar_ps(pair, _mm512_maskz_loadu_ps(two, sc + t0 + 2 * i)),
                           _mm512_set1_ps(Fp8Factor<T>()));
    };
    const F neg_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    F mx = neg_inf;
    for (int64_t i = 0; i < vecs; ++i) {
      const __mmask16 k = lanes(i);
      F x = _mm512_mask_loadu_ps(neg_inf, k, p + 16 * i);
      if constexpr (kScaled) {
        x = _mm512_mask_mul_ps(x, k, x, scales(run.k_scale, i));
        _mm512_mask_storeu_ps(p + 16 * i, k, x);
      }
      mx = _mm512_max_ps(mx, x);
    }
    const __m256 m_old = _mm256_loadu_ps(m);
    const __m256 m_new = _mm256_max_ps(m_old, _mm256_max_ps(Lo(mx), Hi(mx)));
    // Exactly 1 where a head's max did not move; ~1e-38 on the first tile
    // (m = -inf), where l and acc are 0.
    const __m256 alpha = ::kvplan::kernels::cpu::Exp(_mm256_sub_ps(m_old, m_new));
    const F mv = Twice(m_new);
    F sum = _mm512_setzero_ps();
    for (int64_t i = 0; i < vecs; ++i) {
      const __mmask16 k = lanes(i);
      F e = Exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, p + 16 * i), mv));
      sum = _mm512_mask_add_ps(sum, k, sum, e);
      if constexpr (kScaled) e = _mm512_mul_ps(e, scales(run.v_scale, i));
      _mm512_mask_storeu_ps(p + 16 * i, k, e);
    }
    _mm256_storeu_ps(m, m_new);
    _mm256_storeu_ps(l, _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(l), alpha), _mm256_add_ps(Lo(sum), Hi(sum))));
    unsigned moved = static_cast<unsigned>(
        _mm256_movemask_ps(_mm256_cmp_ps(alpha, _mm256_set1_ps(1.0f), _CMP_NEQ_UQ)));
    if (moved != 0) {
      alignas(32) float a[8];
      _mm256_store_ps(a, alpha);
      for (; moved != 0; moved &= moved - 1) {
        const int h = __builtin_ctz(moved);
        const F av = _mm512_set1_ps(a[h]);
        for (int64_t i = 0; i < d; i += 16) {
          _mm512_storeu_ps(acc + h * d + i, _mm512_mul_ps(_mm512_loadu_ps(acc + h * d + i), av));
        }
      }
    }
  }

  // 16 elements of a row, widened exactly to float, as Vec256::Widen does
  // 8 (fp8 as value/256 by the same bit trick, sixteen lanes at a time).
  template <KvDtype T>
  static F Widen(const unsigned char* p) {
    if constexpr (T == KvDtype::kFp32) {
      return _mm512_loadu_ps(reinterpret_cast<const float*>(p));
    } else if constexpr (T == KvDtype::kFp16) {
      return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    } else if constexpr (T == KvDtype::kBf16) {
      const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
      return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
    } else if constexpr (T == KvDtype::kInt8) {
      return _mm512_cvtepi32_ps(
          _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
    } else {
      const __m256i w = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
      return _mm512_cvtph_ps(_mm256_and_si256(_mm256_slli_epi16(w, 7),
                                              _mm256_set1_epi16(static_cast<short>(0xBFFF))));
    }
  }
};

}  // namespace

void ProcessRunAvx512(const float* q, int64_t group, int64_t d, KvDtype dtype, const Run& run,
                      RunState& state, Scratch& scratch) {
  ProcessRunSimd<Vec512>(q, group, d, dtype, run, state, scratch);
}

}  // namespace kvplan::kernels::cpu

#pragma GCC pop_options
