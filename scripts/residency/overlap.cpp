// How well can this machine overlap loads with arithmetic at all? A
// synthetic stream shaped like the decode kernel (K and V in alternating
// 4 KiB tiles, N FMAs and two fp16 widenings per 64-byte line: N = 24 is
// about fp16 group 8's arithmetic per byte) timed with its data in L1 and
// streamed from 2 x 256 MiB, under two prefetch patterns: "per line" (each
// line of the stream being read asks for the line `dist` ahead into L1 and
// the one 16 KiB ahead into L2) and "tile ahead" (during the K tile, every
// line of the next K and V tiles into L1 and 16 KiB on into L2). All
// threads. See docs/perf.md "2026-12-01 (22:40-23:40 UTC)".
//   g++ -O3 -march=native -fopenmp -std=c++20 scripts/residency/overlap.cpp -o build/overlap
//   build/overlap
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <vector>

namespace {

long g_dist = 1024;
volatile float g_sink;

template <int N>
inline void Line(const unsigned char* p, __m512 (&a)[16], __m512 q) {
  const __m512 x0 = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  const __m512 x1 = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)));
#pragma GCC unroll 32
  for (int j = 0; j < N; ++j) a[j % 16] = _mm512_fmadd_ps(j & 1 ? x1 : x0, q, a[j % 16]);
}

// kMode 0: per line; 1: tile ahead; 2: no software prefetch.
template <int N, int kMode>
__attribute__((noinline)) float Run(const unsigned char* k, const unsigned char* v, size_t bytes) {
  const char* kc = reinterpret_cast<const char*>(k);
  const char* vc = reinterpret_cast<const char*>(v);
  const long dist = g_dist;
  __m512 a[16];
  for (int i = 0; i < 16; ++i) a[i] = _mm512_set1_ps(0.001f * static_cast<float>(i));
  const __m512 q = _mm512_set1_ps(1.0001f);
  constexpr size_t kTile = 4096;
  for (size_t t = 0; t < bytes; t += kTile) {
    for (size_t o = t; o < t + kTile; o += 64) {
      if constexpr (kMode == 0) {
        _mm_prefetch(kc + o + dist, _MM_HINT_T0);
        _mm_prefetch(kc + o + 16384, _MM_HINT_T1);
      } else if constexpr (kMode == 1) {
        const size_t j = o + kTile;
        _mm_prefetch(kc + j, _MM_HINT_T0);
        _mm_prefetch(vc + j, _MM_HINT_T0);
        _mm_prefetch(kc + j + 16384 - kTile, _MM_HINT_T1);
        _mm_prefetch(vc + j + 16384 - kTile, _MM_HINT_T1);
      }
      Line<N>(k + o, a, q);
    }
    for (size_t o = t; o < t + kTile; o += 64) {
      if constexpr (kMode == 0) {
        _mm_prefetch(vc + o + dist, _MM_HINT_T0);
        _mm_prefetch(vc + o + 16384, _MM_HINT_T1);
      }
      Line<N>(v + o, a, q);
    }
  }
  __m512 s = a[0];
  for (int i = 1; i < 16; ++i) s = _mm512_add_ps(s, a[i]);
  return _mm512_reduce_add_ps(s);
}

template <class F>
double Median9(F f) {
  std::vector<double> t;
  for (int r = 0; r < 9; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[4];
}

template <int N>
void Row(const unsigned char* k, const unsigned char* v, size_t bytes, int threads) {
  const size_t small = 8192;  // 8 KiB of K and V per thread: L1
  const int reps = 4000;
  const double l1 = threads * 2.0 * small * reps / Median9([&] {
    float s = 0;
#pragma omp parallel num_threads(threads) reduction(+ : s)
    {
      const unsigned char* kk = k + omp_get_thread_num() * (size_t{1} << 20);
      const unsigned char* vv = v + omp_get_thread_num() * (size_t{1} << 20);
      for (int i = 0; i < reps; ++i) {
        asm volatile("" : "+r"(kk), "+r"(vv));
        s += Run<N, 2>(kk, vv, small);
      }
    }
    g_sink = s;
  }) / 1e9;
  double gbps[2];
  const auto stream = [&]<int kMode>() {
    return 2.0 * static_cast<double>(bytes) / Median9([&] {
      float s = 0;
#pragma omp parallel num_threads(threads) reduction(+ : s)
      {
        const size_t per = bytes / static_cast<size_t>(threads);
        const size_t off = static_cast<size_t>(omp_get_thread_num()) * per;
        s += Run<N, kMode>(k + off, v + off, per);
      }
      g_sink = s;
    }) / 1e9;
  };
  gbps[0] = stream.template operator()<0>();
  gbps[1] = stream.template operator()<1>();
  std::printf("N=%2d dist %5ld  in L1 %6.1f GB/s  streamed: per line %5.1f (%3.0f%%)  "
              "tile ahead %5.1f (%3.0f%%)\n",
              N, g_dist, l1, gbps[0], 100 * gbps[0] / l1, gbps[1], 100 * gbps[1] / l1);
}

}  // namespace

int main() {
  const size_t bytes = size_t{256} << 20;
  auto* k = static_cast<unsigned char*>(std::aligned_alloc(64, bytes + (size_t{1} << 20)));
  auto* v = static_cast<unsigned char*>(std::aligned_alloc(64, bytes + (size_t{1} << 20)));
  for (size_t i = 0; i < bytes + (size_t{1} << 20); ++i) {  // small fp16 values
    k[i] = static_cast<unsigned char>(std::rand() & 0x3b);
    v[i] = static_cast<unsigned char>(std::rand() & 0x3b);
  }
  const int threads = omp_get_max_threads();
  std::printf("%d threads\n", threads);
  for (long d : {512L, 1024L, 4096L}) {
    g_dist = d;
    Row<16>(k, v, bytes, threads);
    Row<24>(k, v, bytes, threads);
  }
  std::free(k);
  std::free(v);
  return 0;
}
