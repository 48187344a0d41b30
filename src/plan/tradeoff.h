// The batch / context trade-off of a fixed KV budget: for each context length
// the most requests that fit at once, and for each batch size the longest
// context every one of them can have. Both use paged allocation
// (plan/paging.h: whole blocks, windows and fixed state as the layers hold
// them), so a point here agrees with the engine's block arithmetic.
#pragma once

#include <cstdint>
#include <vector>

#include "plan/kv.h"

namespace kvplan {

struct TradeoffInput {
  KvCost cost;                  // per GPU (the tightest pipeline stage)
  uint64_t kv_budget_bytes = 0;  // per GPU
  uint64_t block_size = 16;     // tokens per block, >= 1
  uint64_t max_context = 0;     // longest context considered (max_model_len or the model's limit)
};

/// floor(budget / PagedSequenceBytes(context)): requests of `context` tokens
/// that fit at once (UINT64_MAX when a request holds nothing).
uint64_t MaxBatchAtContext(const TradeoffInput& in, uint64_t context);

/// The longest context <= max_context at which `batch` requests fit at once
/// (0 when not even one token each fits). A multiple of block_size unless it
/// is max_context itself.
uint64_t MaxContextAtBatch(const TradeoffInput& in, uint64_t batch);

struct ContextPoint {
  uint64_t context = 0;
  uint64_t max_batch = 0;
  uint64_t request_bytes = 0;  // paged bytes of one request of this context
};

struct BatchPoint {
  uint64_t batch = 0;
  uint64_t max_context = 0;
  bool at_limit = false;  // max_context reached: the model, not the cache, is the limit
};

struct Tradeoff {
  std::vector<ContextPoint> by_context;
  std::vector<BatchPoint> by_batch;
};

/// Every point of both grids.
Tradeoff ComputeTradeoff(const TradeoffInput& in, const std::vector<uint64_t>& contexts,
                         const std::vector<uint64_t>& batches);

/// Powers of two from `lo` to `hi` (both rounded to powers of two; lo >= 1),
/// plus `hi` itself when it is not a power of two.
std::vector<uint64_t> PowersOfTwo(uint64_t lo, uint64_t hi);

/// The default context grid: 1K, 2K, ... up to max_context (and max_context).
std::vector<uint64_t> DefaultContexts(const TradeoffInput& in);

/// The default batch grid: 1, 2, 4, ... up to the first power of two at
/// which not even one block each fits (at most 2^20).
std::vector<uint64_t> DefaultBatches(const TradeoffInput& in);

}  // namespace kvplan
