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
