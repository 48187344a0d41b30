// The AVX-512 loops of the ceilings (the FMA peak and the read), compiled for avx512f by a target
// pragma (called only on CPUs that have it; see tile_avx2.cpp for why not
// -mavx512f).
// GCC 12's AVX-512 intrinsics fill their unused operands with
// _mm*_undefined_*(), which its own -Wuninitialized then reports inside the
// header (GCC bug 105593): silenced for this file, before the header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "measure/ceilings.h"

#pragma GCC push_options
#pragma GCC target("avx512f")

namespace kvplan::kernels::detail {

double FmaLoopAvx512(int64_t iterations, float* sink) {
  // Twelve independent chains cover the FMA latency (4 cycles) on two
  // 512-bit ports, with room to spare. Each starts from its own value: from
  // equal ones GCC proves the chains equal and keeps one, and the loop would
  // run one FMA per iteration while counting twelve.
  __m512 a0 = _mm512_set1_ps(0.10f), a1 = _mm512_set1_ps(0.11f), a2 = _mm512_set1_ps(0.12f),
         a3 = _mm512_set1_ps(0.13f), a4 = _mm512_set1_ps(0.14f), a5 = _mm512_set1_ps(0.15f),
         a6 = _mm512_set1_ps(0.16f), a7 = _mm512_set1_ps(0.17f), a8 = _mm512_set1_ps(0.18f),
         a9 = _mm512_set1_ps(0.19f), a10 = _mm512_set1_ps(0.20f), a11 = _mm512_set1_ps(0.21f);
  const __m512 m = _mm512_set1_ps(0.9999999f), c = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
    a0 = _mm512_fmadd_ps(a0, m, c);
    a1 = _mm512_fmadd_ps(a1, m, c);
    a2 = _mm512_fmadd_ps(a2, m, c);
    a3 = _mm512_fmadd_ps(a3, m, c);
    a4 = _mm512_fmadd_ps(a4, m, c);
    a5 = _mm512_fmadd_ps(a5, m, c);
    a6 = _mm512_fmadd_ps(a6, m, c);
    a7 = _mm512_fmadd_ps(a7, m, c);
    a8 = _mm512_fmadd_ps(a8, m, c);
    a9 = _mm512_fmadd_ps(a9, m, c);
    a10 = _mm512_fmadd_ps(a10, m, c);
    a11 = _mm512_fmadd_ps(a11, m, c);
  }
  const __m512 s =
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                                  _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7))),
                    _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
  *sink += _mm512_reduce_add_ps(s);
  return static_cast<double>(iterations) * 12 * 16 * 2;
}

uint64_t SumSliceAvx512(const uint64_t* p, uint64_t n, bool prefetch) {
  // As SumSliceAvx2, with 512-bit loads: 32 words (four lines) per step.
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  const auto* ahead = reinterpret_cast<const char*>(p) + kReadPrefetchBytes;
  uint64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    if (prefetch) {
      for (int line = 0; line < 4; ++line) _mm_prefetch(ahead + i * 8 + 64 * line, _MM_HINT_T0);
    }
    a0 = _mm512_add_epi64(a0, _mm512_loadu_si512(p + i));
    a1 = _mm512_add_epi64(a1, _mm512_loadu_si512(p + i + 8));
    a2 = _mm512_add_epi64(a2, _mm512_loadu_si512(p + i + 16));
    a3 = _mm512_add_epi64(a3, _mm512_loadu_si512(p + i + 24));
  }
  // The eight lanes summed as unsigned words: GCC's _mm512_reduce_add_epi64
  // adds them as signed long long, which overflows (UBSan reports it).
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, _mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3)));
  uint64_t total = 0;
  for (uint64_t lane : lanes) total += lane;
  for (; i < n; ++i) total += p[i];
  return total;
}

}  // namespace kvplan::kernels::detail

#pragma GCC pop_options
