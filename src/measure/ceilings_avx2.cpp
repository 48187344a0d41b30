// The AVX2 loops of the ceilings (the FMA peak and the read), compiled for
// avx2/fma by a target pragma (called only on CPUs that have them; see
// tile_avx2.cpp for why not -mavx2).
#include <immintrin.h>

#include "measure/ceilings.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma")

namespace kvplan::kernels::detail {

double FmaLoopAvx2(int64_t iterations, float* sink) {
  // Ten independent chains cover the FMA latency (4-5 cycles) on two ports.
  // Each starts from its own value (GCC merges chains that start equal into
  // one: see FmaLoopAvx512).
  __m256 a0 = _mm256_set1_ps(0.10f), a1 = _mm256_set1_ps(0.11f), a2 = _mm256_set1_ps(0.12f),
         a3 = _mm256_set1_ps(0.13f), a4 = _mm256_set1_ps(0.14f), a5 = _mm256_set1_ps(0.15f),
         a6 = _mm256_set1_ps(0.16f), a7 = _mm256_set1_ps(0.17f), a8 = _mm256_set1_ps(0.18f),
         a9 = _mm256_set1_ps(0.19f);
  const __m256 m = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iterations; ++i) {
    a0 = _mm256_fmadd_ps(a0, m, c);
    a1 = _mm256_fmadd_ps(a1, m, c);
    a2 = _mm256_fmadd_ps(a2, m, c);
    a3 = _mm256_fmadd_ps(a3, m, c);
    a4 = _mm256_fmadd_ps(a4, m, c);
    a5 = _mm256_fmadd_ps(a5, m, c);
    a6 = _mm256_fmadd_ps(a6, m, c);
    a7 = _mm256_fmadd_ps(a7, m, c);
    a8 = _mm256_fmadd_ps(a8, m, c);
    a9 = _mm256_fmadd_ps(a9, m, c);
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                           _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  s = _mm256_add_ps(s, _mm256_add_ps(a8, a9));
  float out[8];
  _mm256_storeu_ps(out, s);
  *sink += out[0];
  return static_cast<double>(iterations) * 10 * 8 * 2;
}

uint64_t SumSliceAvx2(const uint64_t* p, uint64_t n, bool prefetch) {
  // 256-bit loads, 16 words (two lines) per step into four independent
  // chains: few load instructions per line, so the core's load queue keeps
  // many lines in flight, which reads faster than the SSE2 word sum. The
  // prefetch variant asks kReadPrefetchBytes ahead (a prefetch never faults,
  // so running past the slice's end is harmless).
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  const auto* ahead = reinterpret_cast<const char*>(p) + kReadPrefetchBytes;
  uint64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    if (prefetch) {
      _mm_prefetch(ahead + i * 8, _MM_HINT_T0);
      _mm_prefetch(ahead + i * 8 + 64, _MM_HINT_T0);
    }
    a0 = _mm256_add_epi64(a0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 4)));
    a2 = _mm256_add_epi64(a2, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 8)));
    a3 = _mm256_add_epi64(a3, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 12)));
  }
  const __m256i s = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
  uint64_t out[4];
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), s);
  uint64_t total = out[0] + out[1] + out[2] + out[3];
  for (; i < n; ++i) total += p[i];
  return total;
}

}  // namespace kvplan::kernels::detail

#pragma GCC pop_options
