// Paging and fragmentation: how many requests of a mix a KV budget holds when
// each request reserves max_model_len tokens up front (the naive contiguous
// server) versus when it holds whole blocks of block_size tokens (vLLM's
// PagedAttention), and what a shared prompt prefix saves on top.
//
// Per layer group, an n-token request holds (B = block_size):
//   full / MLA:          ceil(n / B) blocks
//   sliding / chunked:   min(ceil(n / B), ceil((W - 1) / B) + 1) blocks — the
//                        W-token window starting anywhere spans that many
//                        (vLLM's SlidingWindowSpec also adds one block), so
//                        paging may hold up to 2B - 2 tokens more than a ring
//                        buffer of W tokens: a sliding-window model with
//                        requests longer than W gains nothing from paging
//   state (Mamba):       its fixed state, not paged
// and a block of a group costs B * that group's per-token bytes. The naive
// server reserves SequenceBytes(max_model_len) per request (windowed layers as
// a ring buffer of W tokens). "Used" bytes are SequenceBytes(prompt + output).
//
// With prefix caching, the full blocks of a shared S-token prefix are stored
// once and referenced by every request (the partial last block is private, as
// in vLLM, which hashes full blocks only). Only full-attention and MLA layers
// share: windowed layers drop the prefix once the window moves past it.
//
// Concurrency is the number of requests of the mix's average footprint that
// fit in the budget at once: floor((budget - shared) * N / sum of footprints).
#pragma once

#include <cstdint>
#include <vector>

#include "plan/kv.h"
#include "spec/request_mix.h"

namespace kvplan {

/// Blocks of `block` tokens that `tokens` tokens occupy: ceil(tokens / block).
constexpr uint64_t BlocksFor(uint64_t tokens, uint64_t block) {
  return tokens / block + (tokens % block != 0 ? 1 : 0);
}

/// Blocks group `g` holds at the peak of an n-token request (see the header).
uint64_t GroupBlocks(const GroupCost& g, uint64_t n, uint64_t block);

/// Bytes an n-token request holds when paged in blocks of `block` tokens:
/// fixed state + sum over groups of GroupBlocks * block * per-token bytes.
uint64_t PagedSequenceBytes(const KvCost& cost, uint64_t n, uint64_t block);

/// Bytes of one block across every layer that caches all tokens (full + MLA):
/// what one shared prefix block saves per request that reuses it.
uint64_t SharableBlockBytes(const KvCost& cost, uint64_t block);

/// Full prefix blocks a request with `prompt_tokens` can reuse from an
/// S-token shared prefix: floor(min(prompt, S) / block).
constexpr uint64_t SharedPrefixBlocks(uint64_t prompt_tokens, uint64_t shared_prefix,
                                      uint64_t block) {
  return (prompt_tokens < shared_prefix ? prompt_tokens : shared_prefix) / block;
}

/// One of vLLM's KV-cache groups of a hybrid model (CapacityResult::
/// kv_cache_groups): its own block table, every block of it one page in each
/// of group_size layers (PagingConfig::group_block_bytes).
struct PagingGroup {
  LayerKind kind = LayerKind::kFull;
  uint64_t window = 0;      // sliding window or chunk, tokens (0: full, MLA, state)
  uint64_t block_size = 0;  // tokens per block (a state group: one block a request)
};

/// Blocks an n-token request holds in vLLM group `g`: full/MLA ceil(n / b),
/// sliding/chunked min(ceil(n / b), ceil((W - 1) / b) + 1), state 1.
uint64_t PagingGroupBlocks(const PagingGroup& g, uint64_t n);

struct PagingConfig {
  uint64_t kv_budget_bytes = 0;       // KV cache memory on one rank / stage
  uint64_t block_size = 16;           // tokens per block (vLLM 16, TRT-LLM 32, SGLang 1)
  uint64_t max_model_len = 0;         // what the contiguous server reserves per request
  uint64_t shared_prefix_tokens = 0;  // S; 0 = no prefix sharing analysed
  /// vLLM with a hybrid model: its KV-cache groups, each block costing
  /// group_block_bytes (padding layers included): the blocks and their bytes
  /// are `kvplan capacity`'s; a request holds its steady footprint of them
  /// (capacity's blocks_per_request is vLLM's admission worst case).
  /// Empty: one block spans every caching layer.
  std::vector<PagingGroup> vllm_groups;
  uint64_t group_block_bytes = 0;
};

/// One allocation policy applied to the whole mix.
struct AllocationResult {
  uint64_t allocated_bytes = 0;   // the whole mix held at once (shared blocks once)
  uint64_t used_bytes = 0;        // bytes of tokens actually cached (shared ones once)
  uint64_t concurrency = 0;       // requests of the mix's average footprint that fit
  double mean_request_bytes = 0;  // average footprint per request (excluding the shared pool)
  uint64_t shared_bytes = 0;      // the shared prefix pool, stored once (prefix only)
  bool whole_mix_fits = false;    // all N requests at once fit in the budget

  /// (allocated - used) / allocated * 100, in [0, 100]; 0 for an empty allocation.
  double WastePercent() const;
};

struct PagingResult {
  uint64_t requests = 0;
  uint64_t block_bytes = 0;             // one block in every caching layer: block * per-token bytes
  uint64_t budget_blocks = 0;           // floor(budget / block_bytes)
  AllocationResult contiguous;          // reserve max_model_len per request
  AllocationResult paged;               // whole blocks per request
  bool has_prefix = false;              // shared_prefix_tokens > 0 and some layer can share
  AllocationResult prefix;              // paged, with the prefix's full blocks stored once
  uint64_t prefix_blocks = 0;           // full blocks of the shared prefix: floor(S / block)
  uint64_t prefix_block_bytes = 0;      // bytes of one sharable block (full + MLA layers)
  uint64_t prefix_block_tokens = 0;     // tokens of one sharable block
  double saved_blocks_per_request = 0;  // mean shared blocks a request does not store itself
  uint64_t saved_bytes_whole_mix = 0;   // paged.allocated - prefix.allocated
};

/// Throws Error when a request of the mix is longer than max_model_len (an
/// engine would reject it), naming the request's line or index.
void CheckMixFits(const RequestMix& mix, uint64_t max_model_len);

/// Contiguous vs paged (vs paged with a shared prefix) for `mix` under `cfg`,
/// with `cost` the per-rank cost. Requires a non-empty mix, block_size >= 1,
/// and CheckMixFits. Throws Error only on 64-bit overflow.
PagingResult AnalyzePaging(const KvCost& cost, const RequestMix& mix, const PagingConfig& cfg);

}  // namespace kvplan
