// The batch / context trade-off of a fixed KV cache: for each context length
// the most requests that fit at once, and for each batch size the longest
// context every one of them can have. Both count whole blocks, the way the
// engine admits requests: `batch` requests of n tokens fit when
// batch * blocks_for_request(n) <= num_blocks (vLLM's "Maximum concurrency").
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "plan/kv.h"

namespace kvplan {

struct TradeoffInput {
  uint64_t num_blocks = 0;   // blocks in the KV pool (per GPU, tightest stage)
  uint64_t block_size = 16;  // tokens per block, >= 1
  uint64_t max_context = 0;  // longest context considered (max_model_len or the model's limit)
  /// Blocks one request of n tokens holds; non-decreasing in n.
  std::function<uint64_t(uint64_t)> blocks_for_request;
  /// When set, whether `batch` requests of n tokens fit, in place of
  /// batch * blocks_for_request(n) <= num_blocks: llama.cpp's window cells
  /// are shared by all sequences, so its cost is not a per-request multiple.
  /// Must be monotone (a longer context or a larger batch never fits better).
  std::function<bool(uint64_t n, uint64_t batch)> fits;
};

/// A trade-off over `cost` paged as plan/paging.h pages it: num_blocks =
/// floor(budget / block_bytes), a request holds cdiv(PagedSequenceBytes,
/// block_bytes) blocks, block_bytes = block_size * per-token bytes.
TradeoffInput PagedTradeoffInput(const KvCost& cost, uint64_t kv_budget_bytes, uint64_t block_size,
                                 uint64_t max_context);

/// floor(num_blocks / blocks_for_request(context)): requests of `context`
/// tokens that fit at once (UINT64_MAX when a request holds no block).
uint64_t MaxBatchAtContext(const TradeoffInput& in, uint64_t context);

/// The longest context <= max_context at which `batch` requests fit at once
/// (0 when not even one token each fits). Binary search over whole blocks.
uint64_t MaxContextAtBatch(const TradeoffInput& in, uint64_t batch);

struct ContextPoint {
  uint64_t context = 0;
  uint64_t max_batch = 0;
  uint64_t blocks_per_request = 0;
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

/// Powers of two from `lo` to `hi` (lo rounded up to a power of two, lo >= 1),
/// plus `hi` itself when it is not a power of two.
std::vector<uint64_t> PowersOfTwo(uint64_t lo, uint64_t hi);

/// The default context grid: 1K, 2K, ... up to max_context (and max_context).
std::vector<uint64_t> DefaultContexts(const TradeoffInput& in);

/// The default batch grid: 1, 2, 4, ... up to the first power of two at
/// which not even one token each fits (at most 2^20).
std::vector<uint64_t> DefaultBatches(const TradeoffInput& in);

}  // namespace kvplan
