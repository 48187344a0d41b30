#include "plan/tradeoff.h"

#include <doctest/doctest.h>

#include "import/resolve.h"
#include "spec/catalog.h"
#include "util/units.h"

using namespace kvplan;

namespace {

TradeoffInput Input(const std::string& model, uint64_t budget, uint64_t block = 16) {
  ModelSpec m = LoadModel(model);
  const CacheDtype& d = FindCacheDtype(AutoCacheDtype(m.weight_dtype));
  return PagedTradeoffInput(ComputeKvCost(m, d, 1), budget, block, m.max_context);
}

}  // namespace

TEST_CASE("tradeoff: worked example on Llama-3.1-8B") {
  // 128 KiB per token (bf16); a 10 GiB budget holds 81,920 tokens = 5,120 blocks.
  TradeoffInput in = Input("llama-3.1-8b", 10 * kGiB);
  REQUIRE(in.num_blocks == 5120);
  CHECK(MaxBatchAtContext(in, 4096) == 20);
  CHECK(MaxBatchAtContext(in, 4097) == 19);  // 257 blocks each: 5120 / 257
  CHECK(MaxBatchAtContext(in, 131072) == 0);
  CHECK(MaxContextAtBatch(in, 1) == 81920);
  CHECK(MaxContextAtBatch(in, 20) == 4096);
  CHECK(MaxContextAtBatch(in, 3) == 27296);  // floor(5120 / 3) = 1706 blocks
  CHECK(MaxContextAtBatch(in, 4) == 20480);  // 1280 blocks
  CHECK(MaxContextAtBatch(in, 5121) == 0);
  CHECK(MaxContextAtBatch(in, 5120) == 16);
  // A budget beyond the model's limit stops at the limit.
  TradeoffInput big = Input("llama-3.1-8b", 100 * kGiB);
  CHECK(MaxContextAtBatch(big, 1) == 131072);
  Tradeoff t = ComputeTradeoff(big, {131072}, {1, 6, 7});  // 100 GiB / 16 GiB = 6
  CHECK(t.by_batch[0].at_limit);
  CHECK(t.by_batch[1].at_limit);
  CHECK_FALSE(t.by_batch[2].at_limit);
  CHECK(t.by_context[0].blocks_per_request == 8192);
}

TEST_CASE("tradeoff grids are powers of two") {
  CHECK(PowersOfTwo(1024, 8192) == std::vector<uint64_t>{1024, 2048, 4096, 8192});
  CHECK(PowersOfTwo(1000, 5000) == std::vector<uint64_t>{1024, 2048, 4096, 5000});
  CHECK(PowersOfTwo(1, 1) == std::vector<uint64_t>{1});
  TradeoffInput in = Input("llama-3.1-8b", 10 * kGiB);
  CHECK(in.num_blocks == 5120);
  std::vector<uint64_t> c = DefaultContexts(in);
  CHECK(c.front() == 1024);
  CHECK(c.back() == 131072);
  CHECK(c.size() == 8);
  std::vector<uint64_t> b = DefaultBatches(in);
  CHECK(b.front() == 1);
  CHECK(b.back() == 8192);  // 5,120 blocks: 8,192 requests cannot hold one block each
  CHECK(MaxContextAtBatch(in, b[b.size() - 2]) > 0);
}

TEST_CASE("tradeoff invariants over every model and GPU") {
  for (const ModelSpec& m : CatalogModels()) {
    for (const HardwareSpec& hw : CatalogHardware()) {
      TradeoffInput in = Input(m.name, hw.memory_bytes / 3);
      CAPTURE(m.name);
      CAPTURE(hw.name);
      Tradeoff t = ComputeTradeoff(in, DefaultContexts(in), DefaultBatches(in));
      for (size_t i = 1; i < t.by_context.size(); ++i) {
        CHECK(t.by_context[i].max_batch <= t.by_context[i - 1].max_batch);  // longer: never more
      }
      for (size_t i = 1; i < t.by_batch.size(); ++i) {
        CHECK(t.by_batch[i].max_context <= t.by_batch[i - 1].max_context);
      }
      for (const BatchPoint& p : t.by_batch) {
        // The answer fits, and one more block would not (unless at the limit).
        if (p.max_context == 0) continue;
        CHECK(in.blocks_for_request(p.max_context) * p.batch <= in.num_blocks);
        if (!p.at_limit) CHECK(MaxBatchAtContext(in, p.max_context + 1) < p.batch);
        CHECK(MaxBatchAtContext(in, p.max_context) >= p.batch);
      }
    }
  }
}
