#include "plan/paging_capacity.h"

#include <algorithm>

#include "util/error.h"
#include "util/units.h"

namespace kvplan {

void CheckSharedPrefix(const RequestMix& mix, uint64_t shared_prefix) {
  if (shared_prefix == 0) return;
  // Every prompt starts with the prefix, so none is shorter than it.
  uint64_t shortest = UINT64_MAX;
  for (const Request& q : mix.requests) shortest = std::min(shortest, q.prompt_tokens);
  if (shortest != UINT64_MAX && shared_prefix > shortest) {
    Fail(
        "--shared-prefix: {} tokens is longer than the shortest prompt ({} tokens); every "
        "prompt starts with the shared prefix",
        WithCommas(shared_prefix), WithCommas(shortest));
  }
}

PagingConfig PagingConfigFor(const CapacityResult& cap, uint64_t shared_prefix) {
  PagingConfig pc;
  pc.kv_budget_bytes = cap.kv_budget_bytes;
  pc.block_size = cap.block_size;
  pc.max_model_len = cap.max_model_len;
  pc.shared_prefix_tokens = shared_prefix;
  // vLLM with a hybrid model: its own groups and blocks, as capacity sizes them.
  for (const KvCacheGroup& g : cap.kv_cache_groups)
    pc.vllm_groups.push_back({g.kind, g.window, g.block_size});
  if (!pc.vllm_groups.empty()) pc.group_block_bytes = cap.stages[cap.tightest_stage].block_bytes;
  return pc;
}

}  // namespace kvplan
