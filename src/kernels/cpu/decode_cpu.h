// The CPU decode-attention kernel (contract: kernels/decode.h).
//
// Work split: the (sequence, KV head, token) space is laid out in the cache's
// own order and cut into contiguous chunks that the threads take in turn
// (one per thread for a small step; for a long one, shrinking shares of what
// is left, so a thread slowed by a neighbour on a shared host takes less),
// each chunk streamed start to end (split-K: a long sequence is shared by
// all threads, a batch of short ones is dealt out whole). In a
// paged cache that order is block by block, every KV head of a block before
// the next block (the heads of a block are adjacent in memory). A thread
// keeps an online-softmax state (running max m, sum l, unnormalised output)
// per (sequence, KV head) it touches; a (sequence, KV head) cut between
// chunks is merged afterwards with log-sum-exp weights, in token order.
// GQA: each K/V row is read once and used by all query heads of its group.
//
// Inner loop: tiles of a few KB of K and V (dequantized into an L1 scratch
// unless fp32), scores for all query heads of the group, one online-softmax
// rescale per tile, then P x V. SIMD, chosen at run time: AVX-512 when the CPU
// has avx512f and avx512bw (and head_dim % 16 == 0), else AVX2+FMA+F16C when it has those
// (and head_dim % 8 == 0), else a portable scalar path. Every path reads every
// element exactly as DecodeElement() does.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kernels/decode.h"

namespace kvplan::kernels {

enum class SimdPath { kAuto, kScalar, kAvx2, kAvx512 };

struct CpuDecodeOptions {
  /// kAuto: the KVPLAN_SIMD environment variable (scalar|avx2|avx512) if
  /// set, else the widest path the CPU supports (ResolveSimd).
  SimdPath simd = SimdPath::kAuto;
  /// Threads: exactly this many when > 0 (even for tiny problems, which is
  /// how the tests reach the split-K merge); 0 = OpenMP's default (all
  /// cores, or OMP_NUM_THREADS), fewer when the step is too small to share.
  int threads = 0;
  /// The smallest piece of a long step a thread takes at a time (threads
  /// take chunks in turn, shrinking towards this; see decode_cpu.cpp).
  /// Tests set it small to cut a small cache at many places.
  int64_t chunk_bytes = int64_t{1} << 20;
  /// The SIMD paths' far prefetch (rows 16 KiB ahead asked into L2, besides
  /// the next tile into L1): kAuto is off on AMD CPUs and on elsewhere. On
  /// Intel Xeons it speeds up streaming, most for fp16 and bf16 group 1;
  /// on AMD EPYCs the hardware L2 prefetcher already runs far enough ahead
  /// and the requests only cost instructions. Other vendors are untested.
  enum class FarPrefetch { kAuto, kOn, kOff };
  FarPrefetch far_prefetch = FarPrefetch::kAuto;
};

/// Whether `far_prefetch` turns the far prefetch on, on this CPU.
bool FarPrefetchOn(CpuDecodeOptions::FarPrefetch far_prefetch);

/// The chunks threads take in turn from a shared counter, as cuts of
/// [0, total) work units (token-heads, in the cache's order): one chunk per
/// thread while the step is small (fewer than four of the smallest chunk per
/// thread), else guided: each a 1/(2 threads) share of what is left, but at
/// least `min_chunk`, the last taking a remainder below that. Returns the
/// cuts, first 0, last total, ascending.
std::vector<int64_t> ChunkCuts(int64_t total, int threads, int64_t min_chunk);

/// True when this CPU runs the AVX2 path (avx2, fma and f16c).
bool CpuHasAvx2();

/// True when this CPU runs the AVX-512 path (avx512f, avx512bw, and the AVX2 path's).
bool CpuHasAvx512();

/// The path `requested` resolves to for `head_dim` on this machine (never
/// kAuto): auto is the widest the CPU has; a head size the path cannot step
/// through (AVX-512: % 16, AVX2: % 8) takes the next narrower one. Throws
/// kvplan::Error for kAvx2 or kAvx512 (or KVPLAN_SIMD naming them) on a CPU
/// without it, or for an unknown KVPLAN_SIMD value.
SimdPath ResolveSimd(SimdPath requested, int64_t head_dim);

/// "auto", "scalar", "avx2", "avx512".
std::string_view SimdName(SimdPath p);

/// Parses "auto|scalar|avx2|avx512"; throws kvplan::Error naming the choices.
SimdPath ParseSimdPath(std::string_view name);

/// One decode step on the CPU: writes args.out (see decode.h). Throws what
/// ValidateDecodeArgs throws. Every cached value is dequantized exactly, but
/// on the AVX2 and AVX-512 paths fp8 subnormal codes (exponent 0, at most
/// 7 * 2^-9 times the scale) count as 0: those paths run fp8 with the
/// threads' denormals-are-zero mode on (cpu/tile.h, FlushDenormals); the
/// caller's modes are as they were on return.
void DecodeAttentionCpu(const DecodeArgs& args, const CpuDecodeOptions& options = {});

}  // namespace kvplan::kernels
