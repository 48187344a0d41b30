// The CPU decode-attention kernel (contract: kernels/decode.h).
//
// Work split: the (sequence, KV head, token) space is laid out in the cache's
// own order and cut into one contiguous range per thread, so each thread
// streams its own stretch of memory start to end (split-K: a long sequence is
// shared by all threads, a batch of short ones is dealt out whole). In a
// paged cache that order is block by block, every KV head of a block before
// the next block (the heads of a block are adjacent in memory). A thread
// keeps an online-softmax state (running max m, sum l, unnormalised output)
// per (sequence, KV head) it touches; a (sequence, KV head) cut between
// threads is merged afterwards with log-sum-exp weights. GQA: each K/V row is
// read once and used by all query heads of its group.
//
// Inner loop: tiles of a few KB of K and V (dequantized into an L1 scratch
// unless fp32), scores for all query heads of the group, one online-softmax
// rescale per tile, then P x V. SIMD: AVX2+FMA+F16C, chosen at run time when
// the CPU has it (and head_dim % 8 == 0), else a portable scalar path. Both
// paths read every element exactly as DecodeElement() does.
#pragma once

#include <string_view>

#include "kernels/decode.h"

namespace kvplan::kernels {

enum class SimdPath { kAuto, kScalar, kAvx2 };

struct CpuDecodeOptions {
  /// kAuto: the KVPLAN_SIMD environment variable (scalar|avx2) if set, else
  /// AVX2 when the CPU supports avx2, fma and f16c.
  SimdPath simd = SimdPath::kAuto;
  /// Threads: exactly this many when > 0 (even for tiny problems, which is
  /// how the tests reach the split-K merge); 0 = OpenMP's default (all
  /// cores, or OMP_NUM_THREADS), fewer when the step is too small to share.
  int threads = 0;
};

/// True when this CPU runs the AVX2 path (avx2, fma and f16c).
bool CpuHasAvx2();

/// The path `requested` resolves to for `head_dim` on this machine (never
/// kAuto). Throws kvplan::Error for kAvx2 (or KVPLAN_SIMD=avx2) on a CPU
/// without it, or for an unknown KVPLAN_SIMD value.
SimdPath ResolveSimd(SimdPath requested, int64_t head_dim);

/// "auto", "scalar", "avx2".
std::string_view SimdName(SimdPath p);

/// Parses "auto|scalar|avx2"; throws kvplan::Error naming the choices.
SimdPath ParseSimdPath(std::string_view name);

/// One decode step on the CPU: writes args.out (see decode.h). Throws what
/// ValidateDecodeArgs throws.
void DecodeAttentionCpu(const DecodeArgs& args, const CpuDecodeOptions& options = {});

}  // namespace kvplan::kernels
