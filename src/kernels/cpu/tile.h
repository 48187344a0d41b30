// Internal to the CPU kernel: one run of consecutive cached tokens of one
// (sequence, KV head), folded into that pair's online-softmax state. One
// implementation per SIMD path (tile_scalar.cpp, tile_avx2.cpp,
// tile_avx512.cpp).
#pragma once

#include <xmmintrin.h>

#include <cstdint>

#include "kernels/decode.h"

namespace kvplan::kernels::cpu {

/// n consecutive tokens of one (sequence, KV head), contiguous in memory.
struct Run {
  const void* k = nullptr;  // n rows of head_dim elements
  const void* v = nullptr;
  const float* k_scale = nullptr;  // n scales (int8/fp8), else null
  const float* v_scale = nullptr;
  int64_t n = 0;
  // Rows (of head_dim elements) that follow on from k and from v in memory
  // and that this thread reads next, n or more (0: just n): a whole paged
  // block's later KV heads, which the kernel may ask into L2 ahead of time.
  int64_t ahead_rows = 0;
  // The run processed next (the next block of a paged cache), if any, so
  // its first rows can be prefetched while this run's last tile is worked on.
  const void* next_k = nullptr;
  const void* next_v = nullptr;
  int64_t next_n = 0;
  // Whether the kernel also asks the rows Pacer::kFarBytes ahead into L2
  // (tile_simd.inc, Pacer): no on AMD CPUs, yes elsewhere (CpuDecodeOptions).
  bool far_prefetch = true;
};

/// The online-softmax state of one (sequence, KV head) over the tokens seen.
struct RunState {
  float* m = nullptr;    // [group] running max of the scores (-inf: none yet)
  float* l = nullptr;    // [group] sum of exp(score - m)
  float* acc = nullptr;  // [group][head_dim] sum of exp(score - m) * v
};

/// Per-thread buffers, 64-byte aligned: k and v [TileTokens][head_dim]
/// floats (the scalar path's widened tile; the AVX2 and AVX-512 paths, which
/// widen in registers, keep their softmax weights [token][head] in k, at
/// most kMaxTileTokens x 8 floats, and for fp8 the scaled q of up to 8
/// heads in v, at most 8 x head_dim floats), s [group][kMaxTileTokens].
struct Scratch {
  float* k = nullptr;
  float* v = nullptr;
  float* s = nullptr;
};

/// Tokens per tile, a multiple of 8: about 8 KB of widened fp32 K and as
/// much V, so both, with q and the accumulators, stay in a 32 KB L1 while
/// every query head of the group uses them (at 16 KB each they spill to L2,
/// and every pass after the first reads L2 while the memory stream waits).
constexpr int64_t kMaxTileTokens = 64;
inline int64_t TileTokens(int64_t head_dim) {
  const int64_t t = 2048 / head_dim / 8 * 8;
  return t < 8 ? 8 : (t > kMaxTileTokens ? kMaxTileTokens : t);
}

/// Tokens per tile of the AVX2 and AVX-512 paths, which widen in registers and keeps
/// no widened copy: about 4 KB of cached K (and as much V) per tile, so a
/// tile and the next one prefetched fit L1 whatever the element size.
inline int64_t TileTokensAvx2(int64_t head_dim, int64_t element_bytes) {
  const int64_t t = 4096 / (head_dim * element_bytes) / 8 * 8;
  return t < 8 ? 8 : (t > kMaxTileTokens ? kMaxTileTokens : t);
}

/// While it lives, the calling thread's SSE/AVX arithmetic treats denormal
/// inputs as zero and flushes denormal results to zero (MXCSR DAZ and FTZ),
/// when `on` and not so already; the old modes come back at the end. The
/// AVX2 and AVX-512 paths need it for fp8 (tile_avx512.cpp, Widen);
/// DecodeAttentionCpu sets it once per thread, so each run finds it set and
/// writes nothing.
class FlushDenormals {
 public:
  static constexpr unsigned kBits = 0x8040;  // FTZ (bit 15) | DAZ (bit 6)
  explicit FlushDenormals(bool on) : old_(_mm_getcsr()) {
    set_ = on && (old_ & kBits) != kBits;
    if (set_) _mm_setcsr(old_ | kBits);
  }
  ~FlushDenormals() {
    if (set_) _mm_setcsr(old_);
  }
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

 private:
  unsigned old_;
  bool set_ = false;
};

/// q: [group][head_dim], already multiplied by the softmax scale.
using RunFn = void (*)(const float* q, int64_t group, int64_t head_dim, KvDtype dtype,
                       const Run& run, RunState& state, Scratch& scratch);

void ProcessRunScalar(const float* q, int64_t group, int64_t head_dim, KvDtype dtype,
                      const Run& run, RunState& state, Scratch& scratch);

/// Requires head_dim % 8 == 0 and a CPU with avx2, fma and f16c. fp8 runs
/// with FlushDenormals on: subnormal fp8 codes count as 0.
void ProcessRunAvx2(const float* q, int64_t group, int64_t head_dim, KvDtype dtype, const Run& run,
                    RunState& state, Scratch& scratch);

/// Requires head_dim % 16 == 0 and a CPU with avx512f and avx512bw as well.
/// fp8 runs with FlushDenormals on: subnormal fp8 codes count as 0.
void ProcessRunAvx512(const float* q, int64_t group, int64_t head_dim, KvDtype dtype,
                      const Run& run, RunState& state, Scratch& scratch);

}  // namespace kvplan::kernels::cpu
