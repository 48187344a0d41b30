// The paged engines' cache (vLLM, SGLang, TRT-LLM): the budget is cut into
// whole blocks, and a request holds the blocks its tokens fill, capped at a
// sliding or chunked group's window the way each engine caps it. This file
// holds what one request holds and the count of blocks, tokens and requests
// that the common flow (capacity.cpp) runs for these engines.
#include <algorithm>

#include "plan/capacity_internal.h"
#include "util/checked.h"
#include "util/units.h"

namespace kvplan {
namespace {

/// Tokens of an n-token request that a group holds, rounded the way the
/// engine allocates them (blocks of `bs`).
uint64_t HeldTokens(const GroupCost& g, uint64_t n, const EngineConfig& c) {
  const uint64_t bs = c.block_size;
  const uint64_t full = RoundUp(n, bs);
  if (g.per_token_bytes == 0) return 0;
  if (g.kind != LayerKind::kSliding && g.kind != LayerKind::kChunked) return full;
  const uint64_t w = g.cap_tokens;
  switch (c.engine) {
    case Engine::kVllm:
      // kv_cache_interface.py: SlidingWindowSpec holds min(window - 1 +
      // max_num_batched_tokens, max_model_len) tokens in whole blocks plus
      // one; ChunkedLocalAttentionSpec min(chunk + batched, max_model_len).
      if (g.kind == LayerKind::kSliding) {
        return CheckedMul(CeilDiv(std::min(w - 1 + c.max_num_batched_tokens, n), bs) + 1, bs);
      }
      return RoundUp(std::min(w + c.max_num_batched_tokens, n), bs);
    case Engine::kLlamaCpp:
      // Not reached: llama.cpp's window cells belong to all sequences at
      // once, so it is sized by SeqsAllocBytes, never per request.
      return full;
    case Engine::kSglang:
    case Engine::kTrtllm:
      return std::min(full, RoundUp(w, bs));
  }
  return full;
}

/// vLLM's estimate: the longest request whose blocks fit in the cache, the
/// null block left out from 0.29. (With VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 past
/// the model's own limit.)
uint64_t LargestMaxModelLen(const CapacityResult& r, const ModelSpec& m, const EngineConfig& c) {
  uint64_t lo = 0, hi = c.allow_long_max_model_len ? std::max(m.max_context, c.max_model_len)
                                                   : m.max_context;
  while (lo < hi) {
    uint64_t mid = hi - (hi - lo) / 2;
    if (r.BlocksForRequest(mid) <= r.PlannedBlocks())
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

}  // namespace

uint64_t PagedRequestBytes(const KvCost& kv, uint64_t n, const EngineConfig& c) {
  // SGLang's state pool holds the states: the blocks hold the tokens alone.
  uint64_t total = SeparateStatePool(kv, c) ? 0 : kv.fixed_bytes;
  for (const GroupCost& g : kv.groups) {
    total =
        CheckedAdd(total, CheckedMul(g.per_token_bytes, HeldTokens(g, n, c)), "bytes per request");
  }
  return total;
}

void CountPagedBlocks(CapacityResult& r, const StageCapacity& t, const ModelSpec& m,
                      const EngineConfig& c, const CacheDtype& dtype) {
  if (r.kv_cache_groups.empty()) {
    r.max_tokens = CheckedMul(r.num_blocks, c.block_size, "tokens in cache");
  } else {
    // _report_kv_cache_config: the blocks are shared by every group, so the
    // log divides them by the groups and counts the smallest block size.
    uint64_t min_block = UINT64_MAX;
    for (const KvCacheGroup& g : r.kv_cache_groups) min_block = std::min(min_block, g.block_size);
    r.max_tokens =
        CheckedMul(r.num_blocks / r.kv_cache_groups.size(), min_block, "tokens in cache");
  }
  r.kv_used_bytes = CheckedMul(r.num_blocks, r.block_bytes, "KV bytes");
  r.request_bytes = PagedRequestBytes(t.kv, c.max_model_len, c);
  r.blocks_per_request = !r.kv_cache_groups.empty() ? r.BlocksForRequest(c.max_model_len)
                         : r.block_bytes            ? CeilDiv(r.request_bytes, r.block_bytes)
                                                    : 0;
  r.max_concurrency = r.blocks_per_request ? static_cast<double>(r.num_blocks) /
                                                 static_cast<double>(r.blocks_per_request)
                                           : 0;
  // vLLM's "Maximum concurrency" divides every block; the requests that fit
  // (its startup check from 0.29) leave the null block out.
  r.max_requests = r.blocks_per_request ? r.PlannedBlocks() / r.blocks_per_request : 0;
  if (r.state_pool) {
    // SGLang: a request needs a state slot as well as its tokens.
    r.max_requests = std::min(r.max_requests, r.state_slots);
    r.max_concurrency = std::min(r.max_concurrency, static_cast<double>(r.state_slots));
  }
  r.fits = r.max_requests >= 1;
  if (t.kv.per_token_bytes == 0 && t.kv.fixed_bytes != 0) {
    // Attention-free: a slot holds a request of any length, so the cache
    // holds its requests' tokens, each up to max_model_len.
    r.max_tokens = CheckedMul(r.max_requests, c.max_model_len, "tokens in cache");
  }
  // SGLang's K and V pools (+ one padding page).
  for (const GroupCost& g : t.kv.groups) {
    if (g.per_token_bytes == 0) continue;
    const uint64_t kb = KeyBytesPerToken(g, dtype);
    r.k_bytes = CheckedAdd(r.k_bytes, CheckedMul(kb, r.max_tokens + c.block_size));
    r.v_bytes =
        CheckedAdd(r.v_bytes, CheckedMul(g.per_token_bytes - kb, r.max_tokens + c.block_size));
  }
  r.largest_max_model_len = LargestMaxModelLen(r, m, c);
  if (!r.fits) {
    AddLint(r, Severity::kWarning, "max-model-len-fits",
            fmt::format("one request of max_model_len {} needs {} of KV cache but the cache has "
                        "{}; the largest max_model_len that fits is {}",
                        c.max_model_len, FormatGiB(r.request_bytes), FormatGiB(r.kv_budget_bytes),
                        r.largest_max_model_len));
  }
}

}  // namespace kvplan
