// Decode attention: the interface shared by the CPU kernel (kernels/cpu), the
// CUDA kernel (kernels/cuda) and the float64 reference (kernels/reference.h).
//
// One decode step: every sequence b of the batch has ONE new query per query
// head, q[b][qh][0..d), scored against all seq_lens[b] cached keys of its KV
// head, softmaxed, and used to weight the cached values:
//
//   kvh      = qh / (q_heads / kv_heads)                 (GQA: consecutive query
//                                                          heads share a KV head)
//   s[t]     = softmax_scale * dot(q[b][qh], K(b, kvh, t))   t in [0, seq_lens[b])
//   out[b][qh] = sum_t softmax(s)[t] * V(b, kvh, t)
//
// softmax_scale is 1/sqrt(head_dim) unless the caller sets another value.
// A sequence of length 0 produces an all-zero output.
//
// Cache element formats (KvDtype) and how an element is dequantized:
//   fp32, fp16, bf16   the value itself (fp16/bf16 widened exactly to float)
//   int8, fp8 (e4m3)   value = scale(b, kvh, t) * decode(q), with ONE fp32 scale
//                      per token and KV head (per-token-head, kvplan's
//                      "int8_pth"/"fp8_pth": d bytes + 4 bytes per head vector),
//                      separate scales for K and V. QuantizeRow() (fp_convert.h)
//                      makes them: scale = max|x| / 127 (int8) or / 448 (fp8).
//   fp8 e4m3 is the OCP "e4m3fn" format: bias 7, no infinities, 0x7F/0xFF NaN,
//   largest finite 448.
//
// Cache layouts (KvLayout). Both address element (b, kvh, t, i) as
//   block  = the physical block holding token t of sequence b
//   offset = ((block * kv_heads + kvh) * block_tokens + t % block_tokens) * head_dim + i
// and its scale (int8/fp8) at the same index with head_dim = 1:
//   contiguous  block = b, block_tokens = capacity: the cache of the batch is
//               [batch][kv_heads][capacity][head_dim], preallocated, so an
//               append writes one row in O(1) and never copies the cache.
//   paged       block = block_table[b * max_blocks_per_seq + t / block_tokens],
//               a pool of fixed-size blocks [num_blocks][kv_heads][block_tokens]
//               [head_dim] (each KV head's tokens of a block are contiguous,
//               so a kernel streams block_tokens * head_dim elements at a time).
// K and V use the same layout and block table, in separate arrays.
//
// Queries and outputs are fp32, [batch][q_heads][head_dim], dense.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#if defined(__CUDACC__)
#define KVPLAN_HD __host__ __device__
#else
#define KVPLAN_HD
#endif

namespace kvplan::kernels {

enum class KvDtype { kFp32, kFp16, kBf16, kInt8, kFp8E4M3 };

/// Bytes one cache element occupies (scales not included): 4, 2, 2, 1, 1.
KVPLAN_HD inline uint64_t ElementBytes(KvDtype t) {
  switch (t) {
    case KvDtype::kFp32:
      return 4;
    case KvDtype::kFp16:
    case KvDtype::kBf16:
      return 2;
    case KvDtype::kInt8:
    case KvDtype::kFp8E4M3:
      return 1;
  }
  return 0;
}

/// True for the formats that carry one fp32 scale per token and KV head.
KVPLAN_HD inline bool HasScales(KvDtype t) {
  return t == KvDtype::kInt8 || t == KvDtype::kFp8E4M3;
}

/// "fp32", "fp16", "bf16", "int8", "fp8".
std::string_view KvDtypeName(KvDtype t);

/// Parses "fp32|fp16|bf16|int8|fp8" (also "fp8_e4m3", "float32", "half",
/// "bfloat16", "int8_pth", "fp8_pth"); throws kvplan::Error naming the choices.
KvDtype ParseKvDtype(std::string_view name);

/// The problem size of one decode step.
struct DecodeShape {
  int64_t batch = 1;
  int64_t q_heads = 1;
  int64_t kv_heads = 1;  // divides q_heads
  int64_t head_dim = 128;

  /// Query heads per KV head (the GQA group size).
  KVPLAN_HD int64_t Group() const { return q_heads / kv_heads; }
};

enum class KvLayoutKind { kContiguous, kPaged };

struct KvLayout {
  KvLayoutKind kind = KvLayoutKind::kContiguous;
  int64_t capacity = 0;                  // contiguous: tokens allocated per sequence
  int64_t block_tokens = 0;              // paged: tokens per block
  const int32_t* block_table = nullptr;  // paged: [batch][max_blocks_per_seq]
  int64_t max_blocks_per_seq = 0;        // paged: row stride of block_table

  /// Tokens per physical block: capacity (contiguous) or block_tokens (paged).
  KVPLAN_HD int64_t BlockTokens() const {
    return kind == KvLayoutKind::kContiguous ? capacity : block_tokens;
  }
  /// The physical block holding token t of sequence b.
  KVPLAN_HD int64_t Block(int64_t b, int64_t t) const {
    return kind == KvLayoutKind::kContiguous
               ? b
               : block_table[b * max_blocks_per_seq + t / block_tokens];
  }
  /// Index of the first element of row (b, kvh, t) in units of head vectors
  /// (multiply by head_dim for elements; use as is for the scale arrays).
  KVPLAN_HD int64_t Row(int64_t b, int64_t kvh, int64_t t, int64_t kv_heads) const {
    const int64_t bt = BlockTokens();
    return (Block(b, t) * kv_heads + kvh) * bt + t % bt;
  }
};

/// A read-only view of one layer's K and V caches.
struct KvCacheView {
  KvDtype dtype = KvDtype::kFp16;
  KvLayout layout;
  const void* k = nullptr;  // elements of dtype, addressed as in KvLayout
  const void* v = nullptr;
  const float* k_scale = nullptr;  // int8/fp8 only: one per (block, kvh, token)
  const float* v_scale = nullptr;
};

/// Everything one decode step reads and writes. Pointers are not owned.
struct DecodeArgs {
  DecodeShape shape;
  const int64_t* seq_lens = nullptr;  // [batch], each 0 .. capacity (or table span)
  const float* q = nullptr;           // [batch][q_heads][head_dim]
  KvCacheView cache;
  float softmax_scale = 0;  // 0 means 1/sqrt(head_dim)
  float* out = nullptr;     // [batch][q_heads][head_dim]

  /// softmax_scale, or 1/sqrt(head_dim) when it is 0.
  float Scale() const;
};

/// Throws kvplan::Error when args are inconsistent (null pointers, kv_heads
/// not dividing q_heads, a length beyond the capacity or the block table, a
/// missing scale array for int8/fp8, a negative block index).
void ValidateDecodeArgs(const DecodeArgs& args);

/// Bytes of K and V (elements plus scales) one decode step reads from the
/// cache: sum_b seq_lens[b] * kv_heads * 2 * (head_dim * ElementBytes + 4 if
/// scaled). Queries and outputs are not counted (they are negligible and
/// stay in cache).
uint64_t DecodeCacheBytes(const DecodeShape& shape, const int64_t* seq_lens, KvDtype dtype);

/// FLOPs of one decode step: 4 * q_heads * head_dim * tokens per sequence
/// (2 for q.k and 2 for p*v per element and query head), i.e. 2 x group size
/// per cache element.
uint64_t DecodeFlops(const DecodeShape& shape, const int64_t* seq_lens);

}  // namespace kvplan::kernels
