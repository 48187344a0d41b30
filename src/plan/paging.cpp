#include "plan/paging.h"

#include <algorithm>

#include "util/checked.h"
#include "util/error.h"
#include "util/units.h"

namespace kvplan {

uint64_t GroupBlocks(const GroupCost& g, uint64_t n, uint64_t block) {
  if (g.per_token_bytes == 0) return 0;  // state and shared layers hold no token blocks
  uint64_t blocks = BlocksFor(n, block);
  if (g.cap_tokens == 0) return blocks;
  // A W-token window starting anywhere spans at most ceil((W - 1) / B) + 1 blocks.
  return std::min(blocks, BlocksFor(g.cap_tokens - 1, block) + 1);
}

uint64_t PagedSequenceBytes(const KvCost& cost, uint64_t n, uint64_t block) {
  uint64_t total = cost.fixed_bytes;
  for (const GroupCost& g : cost.groups) {
    uint64_t tokens = CheckedMul(GroupBlocks(g, n, block), block, "paged tokens");
    total = CheckedAdd(total, CheckedMul(tokens, g.per_token_bytes, "paged bytes"), "paged bytes");
  }
  return total;
}

uint64_t SharableBlockBytes(const KvCost& cost, uint64_t block) {
  uint64_t per_token = 0;
  for (const GroupCost& g : cost.groups) {
    if (g.cap_tokens == 0) per_token = CheckedAdd(per_token, g.per_token_bytes, "bytes per token");
  }
  return CheckedMul(per_token, block, "bytes per block");
}

uint64_t PagingGroupBlocks(const PagingGroup& g, uint64_t n) {
  if (g.kind == LayerKind::kState) return 1;
  const uint64_t blocks = BlocksFor(n, g.block_size);
  if (g.window == 0) return blocks;
  return std::min(blocks, BlocksFor(g.window - 1, g.block_size) + 1);
}

double AllocationResult::WastePercent() const {
  if (allocated_bytes == 0) return 0;
  return static_cast<double>(allocated_bytes - used_bytes) / static_cast<double>(allocated_bytes) *
         100.0;
}

void CheckMixFits(const RequestMix& mix, uint64_t max_model_len) {
  for (size_t i = 0; i < mix.requests.size(); ++i) {
    const Request& r = mix.requests[i];
    if (r.Tokens() <= max_model_len) continue;
    std::string where = r.line > 0 ? fmt::format("{}:{}", mix.source, r.line)
                                   : fmt::format("{} (request {})", mix.source, i + 1);
    Fail(
        "{}: request of {} + {} = {} tokens is longer than --max-model-len {}; an engine would "
        "reject it (raise --max-model-len{})",
        where, r.prompt_tokens, r.output_tokens, WithCommas(r.Tokens()), WithCommas(max_model_len),
        r.line > 0 ? "" : " or narrow the distribution's prompt=/output= ranges");
  }
}

namespace {

__extension__ typedef unsigned __int128 Uint128;  // budget * N can exceed 64 bits

// floor(budget * n / total), without overflow; "unbounded" when nothing is held.
uint64_t FitCount(uint64_t budget, uint64_t n, uint64_t total) {
  if (total == 0) return UINT64_MAX;
  Uint128 k = static_cast<Uint128>(budget) * n / total;
  return k > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(k);
}

}  // namespace

PagingResult AnalyzePaging(const KvCost& cost, const RequestMix& mix, const PagingConfig& cfg) {
  PagingResult r;
  const uint64_t n = mix.requests.size();
  const uint64_t block = cfg.block_size;
  r.requests = n;
  // vLLM's groups: every block of every group is group_block_bytes; a
  // shared prefix block is one block in each full-attention (or MLA) group.
  const bool grouped = !cfg.vllm_groups.empty();
  r.block_bytes =
      grouped ? cfg.group_block_bytes : CheckedMul(cost.per_token_bytes, block, "bytes per block");
  r.budget_blocks = r.block_bytes == 0 ? 0 : cfg.kv_budget_bytes / r.block_bytes;
  uint64_t sharable = grouped ? 0 : SharableBlockBytes(cost, block);
  r.prefix_block_tokens = block;
  for (const PagingGroup& g : cfg.vllm_groups) {
    if (g.kind != LayerKind::kFull && g.kind != LayerKind::kMla) continue;
    sharable = CheckedAdd(sharable, cfg.group_block_bytes, "bytes per block");
    r.prefix_block_tokens = g.block_size;
  }
  const auto paged_bytes = [&](uint64_t tokens) {
    if (!grouped) return PagedSequenceBytes(cost, tokens, block);
    uint64_t blocks = 0;
    for (const PagingGroup& g : cfg.vllm_groups) {
      blocks = CheckedAdd(blocks, PagingGroupBlocks(g, tokens), "paged blocks");
    }
    return CheckedMul(blocks, cfg.group_block_bytes, "paged bytes");
  };

  uint64_t used = 0, paged = 0, shared_total = 0, pool_blocks = 0;
  for (const Request& q : mix.requests) {
    used = CheckedAdd(used, cost.SequenceBytes(q.Tokens()), "mix bytes");
    paged = CheckedAdd(paged, paged_bytes(q.Tokens()), "mix bytes");
    uint64_t s =
        SharedPrefixBlocks(q.prompt_tokens, cfg.shared_prefix_tokens, r.prefix_block_tokens);
    shared_total = CheckedAdd(shared_total, s, "shared blocks");
    pool_blocks = std::max(pool_blocks, s);
  }
  const double dn = static_cast<double>(n);

  uint64_t reserve = cost.SequenceBytes(cfg.max_model_len);
  r.contiguous.allocated_bytes = CheckedMul(reserve, n, "contiguous reservation");
  r.contiguous.used_bytes = used;
  r.contiguous.concurrency = reserve == 0 ? UINT64_MAX : cfg.kv_budget_bytes / reserve;
  r.contiguous.mean_request_bytes = static_cast<double>(reserve);
  r.contiguous.whole_mix_fits = r.contiguous.allocated_bytes <= cfg.kv_budget_bytes;

  r.paged.allocated_bytes = paged;
  r.paged.used_bytes = used;
  r.paged.concurrency = FitCount(cfg.kv_budget_bytes, n, paged);
  r.paged.mean_request_bytes = static_cast<double>(paged) / dn;
  r.paged.whole_mix_fits = paged <= cfg.kv_budget_bytes;

  r.has_prefix = cfg.shared_prefix_tokens > 0 && sharable > 0;
  if (r.has_prefix) {
    r.prefix_blocks = pool_blocks;
    r.prefix_block_bytes = sharable;
    uint64_t pool = CheckedMul(pool_blocks, sharable, "shared prefix bytes");
    // Shared blocks are full, so every request's private bytes stay >= 0.
    uint64_t shared_bytes = CheckedMul(shared_total, sharable, "shared prefix bytes");
    uint64_t private_paged = paged - shared_bytes;
    // The tokens' own bytes in a shared block: under vLLM's groups a block
    // also holds padding layers, which no token uses.
    const uint64_t sharable_used = SharableBlockBytes(cost, r.prefix_block_tokens);
    const uint64_t shared_used = CheckedMul(shared_total, sharable_used, "shared prefix bytes");
    r.prefix.shared_bytes = pool;
    r.prefix.allocated_bytes = pool + private_paged;
    r.prefix.used_bytes =
        CheckedMul(pool_blocks, sharable_used, "shared prefix bytes") + (used - shared_used);
    r.prefix.mean_request_bytes = static_cast<double>(private_paged) / dn;
    r.prefix.whole_mix_fits = r.prefix.allocated_bytes <= cfg.kv_budget_bytes;
    uint64_t k =
        cfg.kv_budget_bytes < pool ? 0 : FitCount(cfg.kv_budget_bytes - pool, n, private_paged);
    // The average-footprint estimate charges the whole pool even to a handful
    // of requests that reference less of it; k requests sharing never hold
    // more than the same k without sharing, so sharing never fits fewer.
    r.prefix.concurrency = std::max(k, r.paged.concurrency);
    r.saved_blocks_per_request = static_cast<double>(shared_total) / dn;
    r.saved_bytes_whole_mix = r.paged.allocated_bytes - r.prefix.allocated_bytes;
  }
  return r;
}

}  // namespace kvplan
