// The host-side arithmetic of the CUDA decode kernel, kept free of CUDA
// headers so the CPU test suite checks it on machines without a GPU: tile
// geometry, shared-memory sizes, the split-KV heuristic, the cache row index
// the kernel computes (32-bit where it can), and the memory-bandwidth peak
// from the device's attributes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/decode.h"

namespace kvplan::kernels::cuda {

/// Threads per block of the split-KV decode kernel (4 warps).
inline constexpr int kDecodeThreads = 128;
/// Elements of a head vector each thread owns (q, and its slice of K/V rows).
inline constexpr int kElemsPerThread = 8;
/// Cache rows each thread scores per tile (the online-softmax step size).
inline constexpr int kRowsPerThread = 4;
/// cp.async pipeline depth: tiles in flight per block while one is computed.
inline constexpr int kStages = 4;
/// Query heads one block serves at most (register budget: 2 x 8 x 8 floats).
inline constexpr int kMaxGroupPerBlock = 8;
/// Split sizes are multiples of this many tokens, a multiple of every tile.
inline constexpr int kSplitGranule = 64;
/// Threads of the log-sum-exp merge kernel.
inline constexpr int kMergeThreads = 128;

/// Head dims the CUDA kernel is compiled for.
constexpr bool SupportedHeadDim(int64_t head_dim) {
  return head_dim == 64 || head_dim == 128 || head_dim == 256;
}

/// Cache dtypes the CUDA kernel is compiled for.
constexpr bool SupportedDtype(KvDtype dtype) {
  return dtype == KvDtype::kFp16 || dtype == KvDtype::kBf16 || dtype == KvDtype::kFp8E4M3;
}

/// Threads sharing one cache row: head_dim / 8 (8, 16 or 32, within a warp).
KVPLAN_HD constexpr int ThreadsPerRow(int head_dim) {
  return head_dim / kElemsPerThread;
}

/// Rows processed side by side in a block: 128 / ThreadsPerRow.
KVPLAN_HD constexpr int RowGroups(int head_dim) {
  return kDecodeThreads / ThreadsPerRow(head_dim);
}

/// Tokens per pipeline tile: 4 rows per thread x RowGroups = 4096 / head_dim.
KVPLAN_HD constexpr int TileTokens(int head_dim) {
  return kRowsPerThread * RowGroups(head_dim);
}

/// Query heads one block serves: the smallest of 1, 2, 4, 8 that covers the
/// group (groups above 8 are served by several blocks of 8).
constexpr int GroupPerBlock(int64_t group) {
  int gp = 1;
  while (gp < group && gp < kMaxGroupPerBlock) gp *= 2;
  return gp;
}

/// Blocks along the query heads of one KV head: ceil(group / GroupPerBlock).
constexpr int64_t GroupChunks(int64_t group) {
  const int gp = GroupPerBlock(group);
  return (group + gp - 1) / gp;
}

/// Bytes of one pipeline stage: a K tile, a V tile and their per-row scales
/// (scaled dtypes only): 2 x (TileTokens x head_dim x elem + TileTokens x 4).
KVPLAN_HD constexpr int64_t StageBytes(int head_dim, int elem_bytes, bool scaled) {
  const int64_t tile = int64_t{TileTokens(head_dim)} * head_dim * elem_bytes;
  return 2 * (tile + (scaled ? int64_t{TileTokens(head_dim)} * 4 : 0));
}

/// Dynamic shared memory of the decode kernel: the larger of the pipeline
/// (kStages stages) and the end-of-block merge area, which reuses it
/// ([RowGroups][gp][head_dim] partial outputs + [RowGroups][gp] max and sum).
constexpr int64_t DecodeSharedBytes(int head_dim, int elem_bytes, bool scaled, int gp) {
  const int64_t pipeline = kStages * StageBytes(head_dim, elem_bytes, scaled);
  const int64_t merge = int64_t{RowGroups(head_dim)} * gp * (head_dim + 2) * 4;
  return pipeline > merge ? pipeline : merge;
}

/// How a decode step is cut along the sequence (flash-decoding's split-KV).
struct SplitPlan {
  int64_t chunk_tokens = 0;  // tokens per split (a multiple of kSplitGranule)
  int64_t max_splits = 0;    // splits of the longest sequence (grid x)
  int64_t blocks = 0;        // blocks that do work: sum_b ceil(len_b/chunk) x head blocks
};

/// Picks the split size so that all blocks fit in about one wave:
/// chunk = ceil(sum_b len_b x head_blocks / (sm_count x blocks_per_sm)),
/// rounded up to kSplitGranule and capped at the longest sequence (one
/// split, no merge, when the batch alone fills the GPU). head_blocks is
/// kv_heads x GroupChunks(group).
inline SplitPlan ChooseSplits(const std::vector<int64_t>& seq_lens, int64_t head_blocks,
                              int sm_count, int blocks_per_sm) {
  int64_t total = 0;
  int64_t longest = 0;
  for (int64_t n : seq_lens) {
    total += n;
    longest = std::max(longest, n);
  }
  const int64_t slots = std::max<int64_t>(1, int64_t{sm_count} * std::max(1, blocks_per_sm));
  const auto round_up = [](int64_t x) {
    return std::max<int64_t>(kSplitGranule,
                             (x + kSplitGranule - 1) / kSplitGranule * kSplitGranule);
  };
  const int64_t work = total * head_blocks;
  SplitPlan plan;
  plan.chunk_tokens = std::min(round_up((work + slots - 1) / slots), round_up(longest));
  for (int64_t n : seq_lens) {
    const int64_t splits = (n + plan.chunk_tokens - 1) / plan.chunk_tokens;
    plan.max_splits = std::max(plan.max_splits, splits);
    plan.blocks += splits * head_blocks;
  }
  plan.max_splits = std::max<int64_t>(plan.max_splits, 1);  // an all-empty batch still runs
  return plan;
}

/// The cache layout as the kernel reads it: decode.h's KvLayout with a device
/// block table and 32-bit token arithmetic (no 64-bit division per row).
struct DeviceLayout {
  const int32_t* block_table = nullptr;  // device [batch][table_stride]; null: contiguous
  int32_t block_tokens = 0;              // paged: tokens per block; contiguous: capacity
  int32_t table_stride = 0;              // paged: max_blocks_per_seq
  int32_t kv_heads = 0;
};

/// Row (b, kvh, t) in head-vector units, exactly decode.h's KvLayout::Row:
/// (block x kv_heads + kvh) x block_tokens + t mod block_tokens. Multiply by
/// head_dim for the element offset; the scale arrays use it as is.
KVPLAN_HD inline int64_t KvRowIndex(const DeviceLayout& l, int32_t b, int32_t kvh, int32_t t) {
  int64_t block = b;
  int32_t in_block = t;  // contiguous: t < capacity
  if (l.block_table != nullptr) {
    block = l.block_table[int64_t{b} * l.table_stride + t / l.block_tokens];
    in_block = t % l.block_tokens;
  }
  return (block * l.kv_heads + kvh) * l.block_tokens + in_block;
}

/// Everything the device kernels read; all pointers are device pointers.
struct DeviceDecodeArgs {
  const float* q = nullptr;  // [batch][q_heads][head_dim]
  const void* k = nullptr;   // cache elements, rows addressed by KvRowIndex
  const void* v = nullptr;
  const float* k_scale = nullptr;  // scaled dtypes: one per row
  const float* v_scale = nullptr;
  const int32_t* seq_lens = nullptr;  // [batch]
  float* out = nullptr;               // [batch][q_heads][head_dim]
  float* partial_o = nullptr;         // [batch][q_heads][max_splits][head_dim]
  float* partial_lse = nullptr;       // [batch][q_heads][max_splits], log2 units
  DeviceLayout layout;
  int32_t batch = 0;
  int32_t q_heads = 0;
  int32_t kv_heads = 0;
  int32_t head_dim = 0;
  int32_t chunk_tokens = 0;
  int32_t max_splits = 0;
  float softmax_scale = 0;
};

/// A decode kernel instantiation (a __global__ function of the .cu files).
using DecodeKernelFn = void (*)(DeviceDecodeArgs);

/// Datasheet-style DRAM peak in GB/s from the device attributes
/// cudaDevAttrMemoryClockRate (kHz) and cudaDevAttrGlobalMemoryBusWidth
/// (bits): 2 transfers per clock x clock x bus bytes.
constexpr double PeakBandwidthGBps(int64_t memory_clock_khz, int64_t bus_width_bits) {
  return 2.0 * static_cast<double>(memory_clock_khz) * 1e3 *
         (static_cast<double>(bus_width_bits) / 8.0) / 1e9;
}

/// Copies of a buffer of `bytes` needed so that consecutive timed runs never
/// find their data in an L2 of `l2_bytes`: enough to cover 3 x L2, at least 2.
constexpr int64_t RotationCopies(uint64_t bytes, uint64_t l2_bytes) {
  if (bytes == 0) return 2;
  const uint64_t need = (3 * l2_bytes + bytes - 1) / bytes;
  return need < 2 ? 2 : static_cast<int64_t>(need);
}

}  // namespace kvplan::kernels::cuda
