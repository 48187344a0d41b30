// The AVX2 + FMA + F16C path. Compiled for those extensions by a target
// pragma (not -mavx2), so the rest of the binary stays baseline x86-64; it
// is only called after CpuHasAvx2(). Everything here but the entry point has
// internal linkage, so no AVX2 copy of an inline function can leak into
// baseline code. Headers come before the pragma for the same reason.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdlib>

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
    // e4m3 -> fp16 bits: sign to bit 15, exponent and mantissa to bits 7..13.
    // That fp16 is the fp8 value times 2^-8 for normals and subnormals alike
    // (bias 15 vs 7), and F16C widens it exactly.
    // Each byte sign-extended to 16 bits (the load does it), then shifted
    // left by 7: the sign lands at bits 15 and 14, the exponent and mantissa
    // at 13..7; clearing bit 14 leaves the fp16. Two integer ops after the
    // load, where a zero-extending unpack and an arithmetic shift took three.
    const __m128i w = _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    return _mm256_cvtph_ps(_mm_and_si128(_mm_slli_epi16(w, 7), _mm_set1_epi16(static_cast<short>(0xBFFF))));
  }
}

// The factor the per-token scale carries to undo Load8's 2^-8 for fp8.
template <KvDtype T>
constexpr float Fp8Factor() {
  return T == KvDtype::kFp8E4M3 ? 256.0f : 1.0f;
}

inline float Hsum(__m256 v) {
  __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}

inline float Hmax(__m256 v) {
  __m128 x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_max_ps(x, _mm_movehl_ps(x, x));
  x = _mm_max_ss(x, _mm_movehdup_ps(x));
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

template <KvDtype T>
constexpr int64_t kElementBytes =
    T == KvDtype::kFp32 ? 4 : (T == KvDtype::kFp16 || T == KvDtype::kBf16) ? 2 : 1;

// Software prefetch of the next tile, spread over this tile's arithmetic.
// The core has only a couple of dozen miss buffers: a burst of a whole
// tile's lines at once stalls it until they drain (measured: a fifth of the
// single-thread time sat on such a burst), while the hardware prefetcher
// alone leaves gaps in two interleaved streams. So each Tick() (about eight
// FMAs of work) requests the next `per` lines of K and the same of V, as
// few as cover the next tile within this tile's ticks. The state is two
// pointers and two integers, cheap enough to stay in registers.
//
// The hint (PrefetchHint): T0 for fp16, bf16 and int8 caches, NTA for fp32
// and fp8. Every cached byte is read once per step, which argued for NTA,
// and runs in separate processes once measured NTA ahead (91 % of the read
// ceiling against 86 %); timed in one process, the two hints alternating
// step by step in both orders (docs/perf.md, 2026-11-30 06:45-07:50), T0 took
// 3-14 % off the step at every fp16, bf16 and int8 shape of 256 MiB (most at
// fp16 group 4), none for fp32 (-5..+7 %) and made fp8 4-7 % slower.
using Hint = decltype(_MM_HINT_T0);  // an enum in GCC's headers, an int in clang's
template <KvDtype T>
constexpr Hint PrefetchHint() {
  return T == KvDtype::kFp32 || T == KvDtype::kFp8E4M3 ? _MM_HINT_NTA : _MM_HINT_T0;
}

template <Hint kHint>
class Pacer {
 public:
  Pacer() = default;
  // [k, k + bytes) and [v, v + bytes), over about `ticks` ticks.
  Pacer(const unsigned char* k, const unsigned char* v, int64_t bytes, int64_t ticks)
      : k_(k), v_(v), end_(bytes) {
    const int64_t lines = (bytes + 63) / 64;
    const int64_t per = ticks < 1 ? lines : (lines + ticks - 1) / ticks;
    step_ = 64 * (per < 1 ? 1 : per);
  }
  inline void Tick() {
    if (off_ < end_) {
      for (int64_t o = off_; o < off_ + step_; o += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(k_ + o), kHint);
        _mm_prefetch(reinterpret_cast<const char*>(v_ + o), kHint);
      }
      off_ += step_;
    }
  }

 private:
  const unsigned char *k_ = nullptr, *v_ = nullptr;
  int64_t off_ = 0, end_ = 0, step_ = 64;
};

// The scores of H query heads (q [H][d], already scaled) against R
// consecutive rows of k ([R][d] elements of T): s[h * stride + r]. Each K
// vector is loaded and widened once for all H heads; H x R = 8 independent
// FMA chains hide the FMA latency (two issue per cycle, 4-5 cycles each).
// One tick per 8 columns.
template <KvDtype T, int64_t D, int H, int R>
inline void ScoreTile(const float* q, const unsigned char* k, int64_t d_run, float* s,
                      int64_t stride, auto& pf) {
  constexpr int64_t B = kElementBytes<T>;
  const int64_t d = D > 0 ? D : d_run;
  __m256 a[H][R];
  for (int h = 0; h < H; ++h) {
    for (int r = 0; r < R; ++r) a[h][r] = _mm256_setzero_ps();
  }
  for (int64_t i = 0; i < d; i += 8) {
    if constexpr (H == 1 && T != KvDtype::kFp32) {
      // Each K vector used as soon as it is widened: holding all R = 8 of
      // them as well as the 8 accumulators and q needed 17 registers, and one
      // spilled (scripts/kernel-ab.sh: +11-51 % for group 1). fp32, which
      // has nothing to widen, keeps the other order (16 % slower this way).
      const __m256 qv = _mm256_loadu_ps(q + i);
      for (int r = 0; r < R; ++r) a[0][r] = _mm256_fmadd_ps(Load8<T>(k + (r * d + i) * B), qv, a[0][r]);
    } else if constexpr (R == 3) {
      // 12 chains (4 heads x 3 rows): q of each head read as an FMA operand,
      // each K vector widened once and used at once, so 12 accumulators and
      // the K vector fit the 16 registers.
      for (int r = 0; r < R; ++r) {
        const __m256 kv = Load8<T>(k + (r * d + i) * B);
        for (int h = 0; h < H; ++h) a[h][r] = _mm256_fmadd_ps(kv, _mm256_loadu_ps(q + h * d + i), a[h][r]);
      }
    } else {
      __m256 kv[R];
      for (int r = 0; r < R; ++r) kv[r] = Load8<T>(k + (r * d + i) * B);
      for (int h = 0; h < H; ++h) {
        const __m256 qv = _mm256_loadu_ps(q + h * d + i);
        for (int r = 0; r < R; ++r) a[h][r] = _mm256_fmadd_ps(kv[r], qv, a[h][r]);
      }
    }
    pf.Tick();
  }
  if constexpr (R == 3 && H == 4) {
    // The 12 sums as three vectors of four, in head-major order, then each
    // head's three to its row of s.
    alignas(16) float x[12];
    _mm_store_ps(x, Reduce4(a[0][0], a[0][1], a[0][2], a[1][0]));
    _mm_store_ps(x + 4, Reduce4(a[1][1], a[1][2], a[2][0], a[2][1]));
    _mm_store_ps(x + 8, Reduce4(a[2][2], a[3][0], a[3][1], a[3][2]));
    for (int h = 0; h < H; ++h) {
      for (int r = 0; r < R; ++r) s[h * stride + r] = x[h * R + r];
    }
  } else if constexpr (R == 2 && H % 2 == 0) {
    // Two rows of two heads per reduction: [h r0, h r1, h+1 r0, h+1 r1].
    for (int h = 0; h < H; h += 2) {
      const __m128 x = Reduce4(a[h][0], a[h][1], a[h + 1][0], a[h + 1][1]);
      _mm_storel_pi(reinterpret_cast<__m64*>(s + h * stride), x);
      _mm_storeh_pi(reinterpret_cast<__m64*>(s + (h + 1) * stride), x);
    }
  } else {
    for (int h = 0; h < H; ++h) {
      if constexpr (R % 4 == 0) {
        for (int r = 0; r < R; r += 4) {
          _mm_storeu_ps(s + h * stride + r, Reduce4(a[h][r], a[h][r + 1], a[h][r + 2], a[h][r + 3]));
        }
      } else {
        for (int r = 0; r < R; ++r) s[h * stride + r] = Hsum(a[h][r]);
      }
    }
  }
}

// acc[h][0..cols) += sum_t p[t][h] * v[t][0..cols) for H heads (p [n][H],
// so the H weights of a token are adjacent: H broadcasts from one line,
// where H lines the same offset apart would queue on one L1 bank; acc and
// the rows of v, elements of T, `ld` apart). C column
// vectors per head at a time, H x C = 8 accumulator chains; each V vector is
// loaded and widened once for all H heads. One tick per token per 8 C
// columns. D: cols = ld = D known at compile time (0: at run time).
template <KvDtype T, int64_t D, int H, int C>
inline void PVTile(const float* p, const unsigned char* v, int64_t n,
                   int64_t cols_run, int64_t ld_run, float* acc, auto& pf) {
  constexpr int64_t B = kElementBytes<T>;
  const int64_t cols = D > 0 ? D : cols_run, ld = D > 0 ? D : ld_run;
  int64_t i = 0;
  for (; i + 8 * C <= cols; i += 8 * C) {
    __m256 c[H][C];
    for (int h = 0; h < H; ++h) {
      for (int j = 0; j < C; ++j) c[h][j] = _mm256_loadu_ps(acc + h * ld + i + 8 * j);
    }
    for (int64_t t = 0; t < n; ++t) {
      if constexpr (H == 1 && T != KvDtype::kFp32) {
        // As in ScoreTile: each V vector used at once, so nothing spills.
        const __m256 pt = _mm256_broadcast_ss(p + t);
        for (int j = 0; j < C; ++j) {
          c[0][j] = _mm256_fmadd_ps(pt, Load8<T>(v + (t * ld + i + 8 * j) * B), c[0][j]);
        }
      } else {
        __m256 vv[C];
        for (int j = 0; j < C; ++j) vv[j] = Load8<T>(v + (t * ld + i + 8 * j) * B);
        for (int h = 0; h < H; ++h) {
          const __m256 pt = _mm256_broadcast_ss(p + t * H + h);
          for (int j = 0; j < C; ++j) c[h][j] = _mm256_fmadd_ps(pt, vv[j], c[h][j]);
        }
      }
      pf.Tick();
    }
    for (int h = 0; h < H; ++h) {
      for (int j = 0; j < C; ++j) _mm256_storeu_ps(acc + h * ld + i + 8 * j, c[h][j]);
    }
  }
  if constexpr (C > 1) {
    // The columns left over when cols is not a multiple of 8 C (head_dim 80, 96).
    if (i < cols) PVTile<T, 0, H, 1>(p, v + i * B, n, cols - i, ld, acc + i, pf);
  }
}

// The online-softmax step of one head over a tile's n scores s (scaled by
// the K scales first): new max, acc and l rescaled, s turned into the
// weights p (times the V scales).
template <KvDtype T>
inline void SoftmaxStep(float* s, int64_t n, const Run& run, int64_t t0, float& m, float& l,
                        float* acc, int64_t d) {
  constexpr bool kScaled = T == KvDtype::kInt8 || T == KvDtype::kFp8E4M3;
  if constexpr (kScaled) {
    for (int64_t t = 0; t < n; ++t) s[t] *= run.k_scale[t0 + t] * Fp8Factor<T>();
  }
  // The max and the rescale factor in registers: a libm call here made the
  // compiler save and restore every live vector register around it.
  __m256 mx = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  int64_t t = 0;
  for (; t + 8 <= n; t += 8) mx = _mm256_max_ps(mx, _mm256_loadu_ps(s + t));
  float tile_max = Hmax(mx);
  for (; t < n; ++t) tile_max = std::max(tile_max, s[t]);
  const float m_new = std::max(m, tile_max);
  // exp(m - m_new); ~1e-38 for the first tile (m = -inf), where l and acc
  // are 0. Only when the max moved: after the first tiles it rarely does,
  // and Exp (exactly 1 at 0) costs about 20 instructions per head and tile,
  // 2-3 % of a group 4-8 step (scripts/stream-ab.sh, docs/perf.md).
  const float alpha = m_new == m ? 1.0f : _mm256_cvtss_f32(Exp(_mm256_set1_ps(m - m_new)));
  const __m256 mv = _mm256_set1_ps(m_new);
  __m256 sumv = _mm256_setzero_ps();
  t = 0;
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
  m = m_new;
  l = l * alpha + sum;
  if (alpha != 1.0f) {
    const __m256 av = _mm256_set1_ps(alpha);
    for (int64_t i = 0; i < d; i += 8) {
      _mm256_storeu_ps(acc + i, _mm256_mul_ps(_mm256_loadu_ps(acc + i), av));
    }
  }
}

// Rows per score step, and column vectors per p.V step, for H heads at once:
// 8 accumulator chains, or 12 for the score of four heads (3 rows each: with
// 8 chains, two rows, the FMA latency showed; the p.V step keeps 4 x 2).
template <int H>
constexpr int kScoreRows = H == 4 ? 3 : 8 / H;
template <int H>
constexpr int kPvCols = 8 / H;

// Ticks ScoreTile and PVTile make for H heads over n tokens of d columns.
template <int H>
inline int64_t ChunkTicks(int64_t n, int64_t d) {
  constexpr int R = kScoreRows<H>, C = kPvCols<H>;
  int64_t rows = n / R, rest = n % R;
  if constexpr (R == 3) rows += rest / 2 + rest % 2;  // then a pair, then a single row
  else rows += rest;
  const int64_t col_steps = d / (8 * C) + (C > 1 && d % (8 * C) != 0 ? 1 : 0);
  return rows * (d / 8) + col_steps * n;
}

// H query heads (q [H][d], state m/l [H], acc [H][d], scores s [H][stride])
// over one tile of n tokens: the scores, the softmax step, p.V (the weights
// transposed to pt [n][H] first when H > 1).
template <KvDtype T, int64_t D, int H>
inline void HeadChunk(const float* q, int64_t d, const unsigned char* k, const unsigned char* v,
                      int64_t n, const Run& run, int64_t t0, float* m, float* l, float* acc,
                      float* s, int64_t stride, float* pt, auto& pf) {
  constexpr int64_t B = kElementBytes<T>;
  constexpr int R = kScoreRows<H>;
  int64_t t = 0;
  for (; t + R <= n; t += R) ScoreTile<T, D, H, R>(q, k + t * d * B, d, s + t, stride, pf);
  if constexpr (R == 3) {
    if (t + 2 <= n) {
      ScoreTile<T, D, H, 2>(q, k + t * d * B, d, s + t, stride, pf);
      t += 2;
    }
  }
  if constexpr (R > 1) {
    for (; t < n; ++t) ScoreTile<T, D, H, 1>(q, k + t * d * B, d, s + t, stride, pf);
  }
  for (int h = 0; h < H; ++h) SoftmaxStep<T>(s + h * stride, n, run, t0, m[h], l[h], acc + h * d, d);
  const float* p = s;  // one head: its scores are already [n][1]
  if constexpr (H > 1) {
    for (int64_t x = 0; x < n; ++x) {
      for (int h = 0; h < H; ++h) pt[x * H + h] = s[h * stride + x];
    }
    p = pt;
  }
  PVTile<T, D, H, kPvCols<H>>(p, v, n, d, d, acc, pf);
}

// The heads of a group in fours (InFours), then pairs, then a last single
// head: each chunk reads the tile once (from L1 after the first) and widens
// each element once for all its heads, so no widened copy of the tile is
// written anywhere. Fours score 3 rows at a time (12 chains) and widen each
// element once per four heads instead of once per two. Fours from group 4
// for fp32, fp16 and bf16 caches, from group 8 for int8 and fp8: judged
// streaming 256 MiB, in one process, against pairs (scripts/stream-ab.sh,
// docs/perf.md 2026-11-30 06:45-07:50), fours took fp32 group 4 to 0.81-0.86
// of the time, fp16 group 8 to 0.91-0.98, fp16 group 4 to 0.97-0.98, bf16
// group 4 to 0.98-0.99, while int8 and fp8 at group 4 were mixed (1.13 and
// 1.00, 0.97 and 1.14) and stay in pairs, as runs in separate processes
// had also found (int8 24-37 % of the ceiling against 34-46 %). In L2
// (scripts/kernel-ab.sh) fours are 1.04-1.30x for fp32, bf16, int8 and fp8
// and 0.93-0.95x for fp16, which widens with one cheap instruction: there
// the second pass over the tile costs little, streaming it does. Chunks of 8
// (one row, 8 chains, a horizontal sum per head and row) were slower.
template <KvDtype T>
inline bool InFours(int64_t group) {
  return group >= (kElementBytes<T> >= 2 ? 4 : 8);
}

template <KvDtype T>
inline int64_t GroupTicks(int64_t group, int64_t n, int64_t d) {
  int64_t ticks = 0, g = 0;
  if (InFours<T>(group)) {
    for (; g + 4 <= group; g += 4) ticks += ChunkTicks<4>(n, d);
  }
  for (; g + 2 <= group; g += 2) ticks += ChunkTicks<2>(n, d);
  for (; g < group; ++g) ticks += ChunkTicks<1>(n, d);
  return ticks;
}

// D: head_dim known at compile time (0: only at run time). With D fixed every
// row and column offset in the inner loops is an immediate, so a step's
// loads need one base register instead of one pointer per row (which
// spilled to the stack and cost a third of the time).
template <KvDtype T, int64_t D>
void Process(const float* q, int64_t group, int64_t d_run, const Run& run, RunState& st,
             Scratch& scratch) {
  constexpr int64_t B = kElementBytes<T>;
  const int64_t d = D > 0 ? D : d_run;
  const int64_t tile = TileTokensAvx2(d, B);
  for (int64_t t0 = 0; t0 < run.n; t0 += tile) {
    const int64_t n = std::min(tile, run.n - t0);
    const auto* k = static_cast<const unsigned char*>(run.k) + t0 * d * B;
    const auto* v = static_cast<const unsigned char*>(run.v) + t0 * d * B;
    // The next tile: of this run, or else the first rows of the next run.
    const int64_t ticks = GroupTicks<T>(group, n, d);
    Pacer<PrefetchHint<T>()> pf;
    if (t0 + tile < run.n) {
      pf = decltype(pf)(k + n * d * B, v + n * d * B,
                        std::min(tile, run.n - t0 - tile) * d * B, ticks);
    } else if (run.next_k != nullptr) {
      pf = decltype(pf)(static_cast<const unsigned char*>(run.next_k),
                        static_cast<const unsigned char*>(run.next_v),
                        std::min(tile, run.next_n) * d * B, ticks);
    }
    int64_t g = 0;
    const auto chunk = [&]<int H>() {
      HeadChunk<T, D, H>(q + g * d, d, k, v, n, run, t0, st.m + g, st.l + g, st.acc + g * d,
                         scratch.s + g * kMaxTileTokens, kMaxTileTokens, scratch.k, pf);
      g += H;
    };
    if (InFours<T>(group)) {
      while (g + 4 <= group) chunk.template operator()<4>();
    }
    while (g + 2 <= group) chunk.template operator()<2>();
    while (g < group) chunk.template operator()<1>();
  }
}

template <KvDtype T>
void ProcessDim(const float* q, int64_t group, int64_t d, const Run& run, RunState& st,
                Scratch& scratch) {
  switch (d) {
    case 64: return Process<T, 64>(q, group, d, run, st, scratch);
    case 128: return Process<T, 128>(q, group, d, run, st, scratch);
    case 256: return Process<T, 256>(q, group, d, run, st, scratch);
    default: return Process<T, 0>(q, group, d, run, st, scratch);
  }
}

}  // namespace

void ProcessRunAvx2(const float* q, int64_t group, int64_t d, KvDtype dtype, const Run& run,
                    RunState& state, Scratch& scratch) {
  switch (dtype) {
    case KvDtype::kFp32: return ProcessDim<KvDtype::kFp32>(q, group, d, run, state, scratch);
    case KvDtype::kFp16: return ProcessDim<KvDtype::kFp16>(q, group, d, run, state, scratch);
    case KvDtype::kBf16: return ProcessDim<KvDtype::kBf16>(q, group, d, run, state, scratch);
    case KvDtype::kInt8: return ProcessDim<KvDtype::kInt8>(q, group, d, run, state, scratch);
    case KvDtype::kFp8E4M3: return ProcessDim<KvDtype::kFp8E4M3>(q, group, d, run, state, scratch);
  }
}

}  // namespace kvplan::kernels::cpu

#pragma GCC pop_options
