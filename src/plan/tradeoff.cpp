#include "plan/tradeoff.h"

#include <algorithm>

#include "plan/paging.h"

namespace kvplan {

namespace {
__extension__ typedef unsigned __int128 Uint128;  // batch x bytes can exceed 64 bits
}  // namespace

uint64_t MaxBatchAtContext(const TradeoffInput& in, uint64_t context) {
  uint64_t bytes = PagedSequenceBytes(in.cost, context, in.block_size);
  return bytes == 0 ? UINT64_MAX : in.kv_budget_bytes / bytes;
}

uint64_t MaxContextAtBatch(const TradeoffInput& in, uint64_t batch) {
  auto fits = [&](uint64_t n) {
    return static_cast<Uint128>(PagedSequenceBytes(in.cost, n, in.block_size)) * batch <=
           in.kv_budget_bytes;
  };
  if (fits(in.max_context)) return in.max_context;
  if (!fits(1)) return 0;
  // Paged bytes only change at block boundaries, so 1 token fitting means one
  // whole block fits: search whole blocks.
  uint64_t lo = 1, hi = BlocksFor(in.max_context, in.block_size);  // fits(lo*B), !fits(hi*B)
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    (fits(mid * in.block_size) ? lo : hi) = mid;
  }
  return lo * in.block_size;
}

Tradeoff ComputeTradeoff(const TradeoffInput& in, const std::vector<uint64_t>& contexts,
                         const std::vector<uint64_t>& batches) {
  Tradeoff t;
  t.by_context.reserve(contexts.size());
  for (uint64_t c : contexts) {
    t.by_context.push_back({c, MaxBatchAtContext(in, c), PagedSequenceBytes(in.cost, c, in.block_size)});
  }
  t.by_batch.reserve(batches.size());
  for (uint64_t b : batches) {
    uint64_t n = MaxContextAtBatch(in, b);
    t.by_batch.push_back({b, n, n == in.max_context});
  }
  return t;
}

std::vector<uint64_t> PowersOfTwo(uint64_t lo, uint64_t hi) {
  std::vector<uint64_t> out;
  uint64_t p = 1;
  while (p < lo && p <= (UINT64_MAX >> 1)) p <<= 1;
  for (; p <= hi; p <<= 1) {
    out.push_back(p);
    if (p > (UINT64_MAX >> 1)) break;
  }
  if (out.empty() || out.back() != hi) out.push_back(hi);
  return out;
}

std::vector<uint64_t> DefaultContexts(const TradeoffInput& in) {
  return PowersOfTwo(std::min<uint64_t>(1024, in.max_context), in.max_context);
}

std::vector<uint64_t> DefaultBatches(const TradeoffInput& in) {
  std::vector<uint64_t> out;
  for (uint64_t b = 1; b <= (uint64_t{1} << 20); b <<= 1) {
    out.push_back(b);
    if (MaxContextAtBatch(in, b) == 0) break;
  }
  return out;
}

}  // namespace kvplan
