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

#include "kernels/cpu/tile_simd.inc"

struct Vec256 {
  using F = __m256;
  static constexpr int64_t kW = 8;
  static F Zero() { return _mm256_setzero_ps(); }
  static F Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, F x) { _mm256_storeu_ps(p, x); }
  static F Fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F Bcast(const float* p) { return _mm256_broadcast_ss(p); }
  static __m128 Reduce4(F a0, F a1, F a2, F a3) { return Reduce4x256(a0, a1, a2, a3); }
  static float Sum(F a) { return Hsum256(a); }

  // No dtype widens two vectors more cheaply than one at a time here.
  template <KvDtype T>
  static constexpr bool kWidenPairs = false;
  template <KvDtype T>
  static void Widen2(const unsigned char* p, F& lo, F& hi) = delete;

  // 8 elements of a row, widened exactly to float. fp8 comes out as value/256
  // (see the note at Fp8Factor).
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
      // e4m3 -> fp16 bits: sign to bit 15, exponent and mantissa to bits 7..13.
      // That fp16 is the fp8 value times 2^-8 for normals and subnormals alike
      // (bias 15 vs 7), and F16C widens it exactly.
      // Each byte sign-extended to 16 bits (the load does it), then shifted
      // left by 7: the sign lands at bits 15 and 14, the exponent and mantissa
      // at 13..7; clearing bit 14 leaves the fp16. Two integer ops after the
      // load, where a zero-extending unpack and an arithmetic shift took three.
      const __m128i w = _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
      return _mm256_cvtph_ps(
          _mm_and_si128(_mm_slli_epi16(w, 7), _mm_set1_epi16(static_cast<short>(0xBFFF))));
    }
  }
};

}  // namespace

void ProcessRunAvx2(const float* q, int64_t group, int64_t d, KvDtype dtype, const Run& run,
                    RunState& state, Scratch& scratch) {
  ProcessRunSimd<Vec256>(q, group, d, dtype, run, state, scratch);
}

}  // namespace kvplan::kernels::cpu

#pragma GCC pop_options
