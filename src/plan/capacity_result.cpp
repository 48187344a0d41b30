// What a CapacityResult answers once it is computed: the blocks requests
// may use, what one request of n tokens holds, whether a concurrency fits,
// whether the engine starts, and the longest request at a concurrency.
// ComputeCapacity (capacity.cpp) fills the result; these read it.
#include <algorithm>

#include "plan/capacity_internal.h"
#include "util/checked.h"

namespace kvplan {

std::optional<uint64_t> CapacityResult::RunningCap() const {
  if (config.engine == Engine::kLlamaCpp || config.max_num_seqs == 0) return std::nullopt;
  return config.max_num_seqs;
}

uint64_t CapacityResult::RunningAtOnce(uint64_t requests) const {
  const std::optional<uint64_t> limit = RunningCap();
  return limit ? std::min(requests, *limit) : requests;
}

uint64_t CapacityResult::UsableBlocks() const {
  if (config.engine != Engine::kVllm || num_blocks == 0) return num_blocks;
  return num_blocks - 1;
}

uint64_t CapacityResult::PlannedBlocks() const {
  return config.vllm_version >= kVllmNullBlockChecked ? UsableBlocks() : num_blocks;
}

bool CapacityResult::HasError() const {
  return std::any_of(lints.begin(), lints.end(),
                     [](const Lint& l) { return l.severity == Severity::kError; });
}

uint64_t CapacityResult::RequestBytes(uint64_t tokens) const {
  if (stages.empty()) return 0;
  const KvCost& kv = stages[tightest_stage].kv;
  if (config.engine != Engine::kLlamaCpp) return PagedRequestBytes(kv, tokens, config);
  // A sequence's share of what -np n_parallel sequences of `tokens` allocate:
  // the window cells are shared, so charging each request all of them would
  // count them n_parallel times.
  const uint64_t seqs = config.n_parallel;
  return CeilDiv(SeqsAllocBytes(kv, config, tokens, seqs), seqs);
}

uint64_t CapacityResult::BlocksForRequest(uint64_t tokens) const {
  if (stages.empty() || block_bytes == 0) return 0;
  if (!kv_cache_groups.empty()) {
    // get_max_concurrency_for_kv_cache_config: a request holds blocks in every
    // group, and a block of any group is the same block_bytes, so they add up.
    uint64_t blocks = 0;
    for (const KvCacheGroup& g : kv_cache_groups) {
      blocks = CheckedAdd(blocks, VllmGroupBlocks(g, tokens, config.max_num_batched_tokens),
                          "blocks per request");
    }
    return blocks;
  }
  return CeilDiv(RequestBytes(tokens), block_bytes);
}

bool CapacityResult::FitsAtConcurrency(uint64_t tokens, uint64_t concurrency) const {
  if (stages.empty()) return false;
  try {
    if (config.engine == Engine::kLlamaCpp) {
      if (config.no_kv_offload) return true;  // -nkvo: the cache is in host memory
      // Run as -np concurrency -c tokens*concurrency: the budget (weights and
      // compute buffer already out) must hold everything that allocates.
      return SeqsAllocBytes(stages[tightest_stage].kv, config, tokens, concurrency) <=
             kv_budget_bytes;
    }
    if (PlannedBlocks() == 0) return false;
    if (state_pool && concurrency > state_slots) return false;  // SGLang's state pool
    return CheckedMul(BlocksForRequest(tokens), concurrency) <= PlannedBlocks();
  } catch (const Error&) {
    return false;  // overflowed: certainly more than the cache
  }
}

bool StopsEngineAtStartup(const Lint& lint, Engine engine) {
  if (lint.severity == Severity::kError) return true;
  return (lint.code == "max-model-len-fits" || lint.code == "kv-fits") &&
         (engine == Engine::kVllm || engine == Engine::kLlamaCpp);
}

bool EngineRefusesToStart(const CapacityResult& capacity) {
  return std::any_of(capacity.lints.begin(), capacity.lints.end(), [&](const Lint& l) {
    return StopsEngineAtStartup(l, capacity.config.engine);
  });
}

uint64_t MaxModelLenAtConcurrency(const CapacityResult& r, uint64_t concurrency) {
  if (concurrency == 0) return 0;
  uint64_t lo = 0, hi = r.model_max_context;
  while (lo < hi) {
    uint64_t mid = hi - (hi - lo) / 2;
    if (r.FitsAtConcurrency(mid, concurrency))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

}  // namespace kvplan
