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
  static F Set1(float x) { return _mm256_set1_ps(x); }
  static F Mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static __m128 Reduce4(F a0, F a1, F a2, F a3) { return Reduce4x256(a0, a1, a2, a3); }
  static float Sum(F a) { return Hsum256(a); }

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
      // shift, mask, one F16C conversion of two uops) took five: one thread's
      // fp8 tile in L2 1.30-1.35x faster at groups 1-4, 1.11x at 8
      // (scripts/kernel-ab.sh; docs/perf.md "2026-12-02").
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
