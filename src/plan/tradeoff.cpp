#include "plan/tradeoff.h"

#include <algorithm>

#include "plan/paging.h"
#include "util/checked.h"

namespace kvplan {

namespace {
__extension__ typedef unsigned __int128 Uint128;  // batch x blocks can exceed 64 bits

bool Fits(const TradeoffInput& in, uint64_t n, uint64_t batch) {
  if (in.fits) return in.fits(n, batch);
  return static_cast<Uint128>(in.blocks_for_request(n)) * batch <= in.num_blocks;
}
}  // namespace

TradeoffInput PagedTradeoffInput(const KvCost& cost, uint64_t kv_budget_bytes, uint64_t block_size,
                                 uint64_t max_context) {
  TradeoffInput in;
  in.block_size = block_size;
  in.max_context = max_context;
  uint64_t block_bytes = CheckedMul(cost.per_token_bytes, block_size, "bytes per block");
  if (block_bytes == 0) block_bytes = 1;  // attention-free: only fixed state, counted in bytes
  in.num_blocks = kv_budget_bytes / block_bytes;
  in.blocks_for_request = [cost, block_size, block_bytes](uint64_t n) {
    return CeilDiv(PagedSequenceBytes(cost, n, block_size), block_bytes);
  };
  return in;
}

uint64_t MaxBatchAtContext(const TradeoffInput& in, uint64_t context) {
  if (!in.fits) {
    uint64_t blocks = in.blocks_for_request(context);
    return blocks == 0 ? UINT64_MAX : in.num_blocks / blocks;
  }
  // No per-request blocks to divide by: double until a batch does not fit,
  // then bisect (lo fits, hi does not).
  if (!in.fits(context, 1)) return 0;
  uint64_t lo = 1, hi = 2;
  while (in.fits(context, hi)) {
    if (hi > (UINT64_MAX >> 1)) return UINT64_MAX;  // nothing grows with the batch
    lo = hi;
    hi <<= 1;
  }
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    (in.fits(context, mid) ? lo : hi) = mid;
  }
  return lo;
}

uint64_t MaxContextAtBatch(const TradeoffInput& in, uint64_t batch) {
  auto fits = [&](uint64_t n) { return Fits(in, n, batch); };
  if (fits(in.max_context)) return in.max_context;
  if (!fits(1)) return 0;
  // The largest n with fits(n): lo fits, hi does not.
  uint64_t lo = 1, hi = in.max_context;
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

Tradeoff ComputeTradeoff(const TradeoffInput& in, const std::vector<uint64_t>& contexts,
                         const std::vector<uint64_t>& batches) {
  Tradeoff t;
  t.by_context.reserve(contexts.size());
  for (uint64_t c : contexts) {
    t.by_context.push_back({c, MaxBatchAtContext(in, c), in.blocks_for_request(c)});
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
