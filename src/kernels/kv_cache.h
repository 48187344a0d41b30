// KvCache: one layer's K and V caches owned on the host, in either layout of
// decode.h, with an O(1) append (the row is written in place: contiguous
// storage is preallocated to its capacity, paged storage takes a free block
// when a sequence crosses a block boundary). Nothing is ever copied to grow.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/decode.h"

namespace kvplan::kernels {

/// Zero-initialised, 64-byte aligned storage (2 MiB aligned and backed by
/// transparent huge pages where the kernel allows, for large buffers).
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(uint64_t bytes);
  void* data() const { return data_.get(); }
  uint64_t size() const { return bytes_; }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> data_;
  uint64_t bytes_ = 0;
};

class KvCache {
 public:
  /// Contiguous [batch][kv_heads][capacity][head_dim], all sequences empty.
  static KvCache Contiguous(int64_t batch, int64_t kv_heads, int64_t head_dim, int64_t capacity,
                            KvDtype dtype);

  /// A pool of num_blocks blocks of block_tokens tokens; each sequence may
  /// grow to max_tokens. Free blocks are handed out in order, or in a
  /// shuffled order when shuffle_seed != 0 (so tests see scattered tables).
  static KvCache Paged(int64_t batch, int64_t kv_heads, int64_t head_dim, int64_t block_tokens,
                       int64_t num_blocks, int64_t max_tokens, KvDtype dtype,
                       uint64_t shuffle_seed = 0);

  /// Appends one token to sequence b: k and v are [kv_heads][head_dim],
  /// quantized in place with QuantizeRow. O(kv_heads * head_dim); throws
  /// kvplan::Error when the sequence or the block pool is full.
  void Append(int64_t b, const float* k, const float* v);

  /// Grows every sequence b to lengths[b] tokens of random, valid, non-zero
  /// values (fp32/fp16/bf16 in +-[0.25, 2); int8/fp8 random codes with scales
  /// in [0.5, 2) / 127 or / 448). Deterministic in (seed, b, head, token),
  /// independent of the thread count; multi-threaded (first touch).
  void FillRandom(const std::vector<int64_t>& lengths, uint64_t seed);

  /// A view for DecodeArgs (valid while this cache lives and is not moved).
  KvCacheView View() const;

  /// Current length of each sequence, [batch].
  const std::vector<int64_t>& Lengths() const { return lengths_; }
  int64_t Batch() const { return batch_; }
  int64_t KvHeads() const { return kv_heads_; }
  int64_t HeadDim() const { return head_dim_; }
  KvDtype Dtype() const { return dtype_; }

  /// Bytes of K, V and scale storage allocated.
  uint64_t AllocatedBytes() const;

 private:
  KvCache() = default;
  void Allocate(int64_t blocks, int64_t block_tokens);
  // Ensures sequence b has a block for token t (paged); throws when none is free.
  void ReserveToken(int64_t b, int64_t t);

  KvDtype dtype_ = KvDtype::kFp16;
  KvLayoutKind kind_ = KvLayoutKind::kContiguous;
  int64_t batch_ = 0, kv_heads_ = 0, head_dim_ = 0;
  int64_t capacity_ = 0;      // contiguous tokens per sequence
  int64_t block_tokens_ = 0;  // paged
  int64_t max_blocks_ = 0;    // paged: block table row length
  AlignedBuffer k_, v_, k_scale_, v_scale_;
  std::vector<int32_t> block_table_;  // [batch][max_blocks_], -1 = unassigned
  std::vector<int32_t> free_blocks_;  // taken from the back
  std::vector<int64_t> lengths_;
};

}  // namespace kvplan::kernels
