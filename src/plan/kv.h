// The KV-cache formula core: exact bytes for one request of n tokens.
//
// Per layer group, one token costs
//   K and V:  kv_heads * (VectorBytes(head_dim) + VectorBytes(v_head_dim))   (full/sliding/chunked)
//   MLA:      VectorBytes(kv_lora_rank + qk_rope_head_dim)  (one latent, no factor 2)
//             + the sparse indexer's fp8 key where the model has one (DeepSeek-V3.2)
// per layer, and a request of n tokens holds min(n, window) tokens in a
// windowed group. Attention-free layers hold a fixed state per sequence
// (spec/state_shape.h), and KV-sharing and MLP-only layers hold nothing. So one request costs
//   fixed_bytes + sum over groups of per_token_bytes * min(n, cap),
// and a batch of B requests B times that.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/cache_dtype.h"
#include "spec/model_spec.h"
#include "spec/state_shape.h"

namespace kvplan {

/// The cost of one layer group, for one tensor-parallel rank (or all of the
/// model when tp = 1).
struct GroupCost {
  LayerKind kind = LayerKind::kFull;
  uint64_t layers = 0;
  uint64_t kv_heads = 0;               // KV heads held on this rank (after split/replication)
  uint64_t head_dim = 0;               // K vector elements (MLA: latent dim)
  uint64_t v_head_dim = 0;             // V vector elements (0 for MLA)
  uint64_t bytes_per_token_layer = 0;  // one token in one layer
  uint64_t per_token_bytes = 0;        // one token in all layers of the group
  uint64_t cap_tokens = 0;             // 0: every token is kept; else at most this many
  uint64_t fixed_bytes = 0;            // per sequence, independent of length (state layers)
  uint64_t state_bytes_layer = 0;      // state layers: one sequence in one layer, this rank
  uint64_t conv_bytes_layer = 0;       // ...of which the convolution window (the rest: recurrent)
  uint64_t index_bytes_per_token_layer =
      0;                     // MLA: the sparse indexer's key (in bytes_per_token_layer)
  uint64_t sparse_topk = 0;  // MLA with an indexer: latents a decode step reads (0: all)

  /// Tokens of an n-token request this group keeps: min(n, cap) or n.
  uint64_t TokensHeld(uint64_t n) const {
    return cap_tokens != 0 && cap_tokens < n ? cap_tokens : n;
  }
  /// Bytes of an n-token request in this group (checked).
  uint64_t SequenceBytes(uint64_t n) const;
  /// Bytes one decode step reads for an n-token request: SequenceBytes, but
  /// under sparse attention every indexer key and only the top-k latents.
  uint64_t ReadBytes(uint64_t n) const;
};

/// The affine cost of one request, and everything needed to explain it.
struct KvCost {
  std::string dtype;
  uint64_t tp = 1;                // tensor-parallel ranks the cost is split over
  std::vector<GroupCost> groups;  // one per model layer group, same order
  uint64_t per_token_bytes = 0;   // one token in every caching layer (before window caps)
  uint64_t fixed_bytes = 0;       // per sequence

  /// Bytes one request of n tokens holds: fixed + sum of per-token bytes * min(n, cap).
  uint64_t SequenceBytes(uint64_t n) const;
  /// Bytes `batch` requests of n tokens hold. Overflow is an Error.
  uint64_t TotalBytes(uint64_t n, uint64_t batch) const;
  /// Bytes one decode step reads for `batch` requests of n tokens (sparse
  /// attention reads fewer than it holds). Overflow is an Error.
  uint64_t ReadBytes(uint64_t n, uint64_t batch) const;
  /// Largest n such that one request fits in `budget` bytes (may be "unbounded"
  /// = UINT64_MAX when every group is capped and the capped cost fits).
  uint64_t MaxTokensPerSequence(uint64_t budget) const;
};

/// Bytes of DeepSeek-V3.2's indexer key per token and layer: index_head_dim
/// fp8 values and one fp32 scale per 128 (vLLM's DeepseekV32IndexerCache,
/// SGLang's NSA index-k buffer), whatever the cache dtype; 0 without an indexer.
uint64_t IndexerKeyBytes(const MlaSpec& mla);

/// KV heads each tensor-parallel rank holds: kv_heads / tp, or 1 (replicated)
/// when tp > kv_heads — vLLM's max(1, kv_heads // tp).
uint64_t KvHeadsPerRank(uint64_t kv_heads, uint64_t tp);

/// Throws Error when the model cannot run with this dtype and tp: tp must
/// divide query_heads, and divide kv_heads or be a multiple of it; block
/// dtypes need head dims that are multiples of their block; fp8_ds_mla needs
/// an MLA model with latent 512 + 64.
void CheckKvConfig(const ModelSpec& model, const CacheDtype& dtype, uint64_t tp);

/// The per-request cost of `model` with `dtype`, on one of `tp` ranks
/// (tp = 1: the whole model). Call CheckKvConfig first.
/// `state` overrides the bytes per state element where an engine keeps its
/// own (EngineStateDtypes in plan/capacity.h).
KvCost ComputeKvCost(const ModelSpec& model, const CacheDtype& dtype, uint64_t tp = 1,
                     StateDtypes state = {});

}  // namespace kvplan
