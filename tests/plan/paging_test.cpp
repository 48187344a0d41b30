#include "plan/paging.h"

#include <doctest/doctest.h>

#include "import/resolve.h"
#include "plan/capacity.h"
#include "spec/catalog.h"
#include "spec/request_mix_reader.h"
#include "util/units.h"

using namespace kvplan;

namespace {

KvCost Cost(const std::string& model, const std::string& dtype = "fp16", uint64_t tp = 1) {
  ModelSpec m = LoadModel(model);
  const CacheDtype& d = FindCacheDtype(dtype);
  CheckKvConfig(m, d, tp);
  return ComputeKvCost(m, d, tp);
}

RequestMix Mix(std::initializer_list<std::pair<uint64_t, uint64_t>> lengths) {
  RequestMix m;
  m.source = "test";
  for (auto [p, o] : lengths) m.requests.push_back({p, o, 0});
  return m;
}

bool HasWindow(const KvCost& c) {
  for (const GroupCost& g : c.groups) {
    if (g.cap_tokens != 0 && g.per_token_bytes != 0) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("paging: a request holds whole blocks") {
  CHECK(BlocksFor(0, 16) == 0);
  CHECK(BlocksFor(1, 16) == 1);
  CHECK(BlocksFor(16, 16) == 1);
  CHECK(BlocksFor(17, 16) == 2);
  CHECK(BlocksFor(17, 1) == 17);
  CHECK(BlocksFor(33, 32) == 2);
  // Llama-3.1-8B fp16: 32 layers x 8 heads x 128 x 2 (K, V) x 2 B = 128 KiB per token.
  KvCost c = Cost("llama-3.1-8b");
  REQUIRE(c.per_token_bytes == 128 * kKiB);
  CHECK(PagedSequenceBytes(c, 1, 16) == 2 * kMiB);
  CHECK(PagedSequenceBytes(c, 16, 16) == 2 * kMiB);
  CHECK(PagedSequenceBytes(c, 17, 16) == 4 * kMiB);
  CHECK(PagedSequenceBytes(c, 0, 16) == 0);
}

TEST_CASE("paging: lengths 1/16/17 against a 32-token contiguous reservation, worked by hand") {
  KvCost c = Cost("llama-3.1-8b");  // 128 KiB per token, 2 MiB per 16-token block
  RequestMix mix = Mix({{1, 0}, {10, 6}, {17, 0}});
  PagingConfig cfg;
  cfg.kv_budget_bytes = 10 * kMiB;
  cfg.block_size = 16;
  cfg.max_model_len = 32;
  PagingResult r = AnalyzePaging(c, mix, cfg);
  CHECK(r.block_bytes == 2 * kMiB);
  CHECK(r.budget_blocks == 5);
  // Used: 1 + 16 + 17 = 34 tokens.
  CHECK(r.paged.used_bytes == 34 * 128 * kKiB);
  // Paged: 1 + 1 + 2 = 4 blocks = 8 MiB; waste 1 - 34/64 = 46.875 %.
  CHECK(r.paged.allocated_bytes == 8 * kMiB);
  CHECK(r.paged.WastePercent() == doctest::Approx(46.875));
  // 10 MiB / (8 MiB / 3 requests) = 3.75 -> 3 requests.
  CHECK(r.paged.concurrency == 3);
  CHECK_FALSE(r.paged.whole_mix_fits == false);
  // Contiguous: 32 tokens = 4 MiB each, 12 MiB for three; waste 1 - 34/96.
  CHECK(r.contiguous.allocated_bytes == 12 * kMiB);
  CHECK(r.contiguous.WastePercent() == doctest::Approx(100.0 * 62 / 96));
  CHECK(r.contiguous.concurrency == 2);
  CHECK_FALSE(r.contiguous.whole_mix_fits);
  CHECK_FALSE(r.has_prefix);
}

TEST_CASE("prefix sharing: full prefix blocks stored once, the partial block private") {
  KvCost c = Cost("llama-3.1-8b");
  // Three requests of 40 prompt + 8 output tokens sharing a 36-token prefix:
  // floor(36 / 16) = 2 full blocks shared; tokens 32..35 sit in a private block.
  RequestMix mix = Mix({{40, 8}, {40, 8}, {40, 8}});
  PagingConfig cfg;
  cfg.kv_budget_bytes = 10 * kMiB;
  cfg.block_size = 16;
  cfg.max_model_len = 64;
  cfg.shared_prefix_tokens = 36;
  PagingResult r = AnalyzePaging(c, mix, cfg);
  REQUIRE(r.has_prefix);
  CHECK(r.prefix_blocks == 2);
  CHECK(r.prefix_block_bytes == 2 * kMiB);
  CHECK(r.saved_blocks_per_request == doctest::Approx(2));
  // Without sharing: 3 x 3 blocks = 18 MiB. With: 2 shared + 3 x 1 private = 10 MiB.
  CHECK(r.paged.allocated_bytes == 18 * kMiB);
  CHECK(r.prefix.allocated_bytes == 10 * kMiB);
  CHECK(r.prefix.shared_bytes == 4 * kMiB);
  CHECK(r.saved_bytes_whole_mix == 8 * kMiB);
  CHECK(r.prefix.WastePercent() == doctest::Approx(0));  // 48 tokens fill 3 blocks exactly
  CHECK(r.paged.concurrency == 1);                       // 10 MiB / 6 MiB
  CHECK(r.prefix.concurrency == 3);                      // (10 - 4) / 2
  CHECK(r.prefix.whole_mix_fits);
  // A prefix shorter than one block shares nothing.
  cfg.shared_prefix_tokens = 15;
  PagingResult none = AnalyzePaging(c, mix, cfg);
  CHECK(none.prefix_blocks == 0);
  CHECK(none.prefix.allocated_bytes == none.paged.allocated_bytes);
  // A prompt shorter than the prefix reuses only its own full blocks.
  RequestMix short_prompt = Mix({{20, 0}, {100, 0}});
  cfg.shared_prefix_tokens = 64;
  PagingResult sp = AnalyzePaging(c, short_prompt, cfg);
  CHECK(sp.prefix_blocks == 4);
  CHECK(sp.saved_blocks_per_request == doctest::Approx((1 + 4) / 2.0));
  CHECK(sp.prefix.allocated_bytes == (4 + (2 - 1) + (7 - 4)) * 2 * kMiB);
}

TEST_CASE("paging: windows and fixed state are paged the way the layers hold them") {
  // Mistral-7B-v0.1 slides over 4096 tokens: a 5000-token request touches at
  // most ceil(4095 / 16) + 1 = 257 blocks per layer, not 313.
  KvCost m = Cost("mistral-7b-v0.1");
  REQUIRE(m.groups.size() == 1);
  CHECK(GroupBlocks(m.groups[0], 5000, 16) == 257);
  CHECK(GroupBlocks(m.groups[0], 100, 16) == 7);
  CHECK(PagedSequenceBytes(m, 5000, 16) == 257 * 16 * m.per_token_bytes);
  // Sliding layers share nothing: the window moves past the prefix.
  CHECK(SharableBlockBytes(m, 16) == 0);
  // Jamba: the Mamba state is a fixed per-request allocation, never paged.
  KvCost j = Cost("jamba-v0.1", "bf16");
  CHECK(PagedSequenceBytes(j, 0, 16) == j.fixed_bytes);
  CHECK(PagedSequenceBytes(j, 17, 16) == j.fixed_bytes + 32 * j.per_token_bytes);
}

TEST_CASE("requests longer than max-model-len are rejected by name") {
  RequestMix file = ParseRequestMix("prompt_tokens,output_tokens\n10,10\n4000,200\n", "m.csv");
  CHECK_NOTHROW(CheckMixFits(file, 4200));
  CHECK_THROWS_WITH(CheckMixFits(file, 4096),
                    "m.csv:3: request of 4000 + 200 = 4,200 tokens is longer than --max-model-len "
                    "4,096; an engine would reject it (raise --max-model-len)");
  RequestMix gen = MixFromSpec("uniform:prompt=16..16,output=5000..5000,n=3");
  CHECK_THROWS_WITH(
      CheckMixFits(gen, 4096),
      "uniform:prompt=16..16,output=5000..5000,n=3 (request 1): request of 16 + 5000 "
      "= 5,016 tokens is longer than --max-model-len 4,096; an engine would reject it "
      "(raise --max-model-len or narrow the distribution's prompt=/output= ranges)");
}

TEST_CASE("paging invariants over every model x GPU (vLLM budgets) x block size x mix") {
  std::vector<RequestMix> mixes = {
      MixFromSpec("uniform:prompt=1..2000,output=1..500,n=300,seed=1"),
      MixFromSpec("lognormal:prompt_mean=800,prompt_sigma=1,output_mean=300,output_sigma=1,"
                  "prompt=1..6000,output=0..2000,n=300,seed=2"),
      Mix({{1, 0}, {16, 0}, {17, 0}, {4000, 95}}),
  };
  int checked = 0, deployments = 0;
  for (const ModelSpec& model : CatalogModels()) {
    for (const HardwareSpec& hw : CatalogHardware()) {
      for (uint64_t tp : {1, 4}) {
        EngineConfig engine;
        engine.max_model_len = 8192;
        engine.tp = tp;
        CapacityResult cap = ComputeCapacity(model, hw, engine);
        if (cap.HasError()) continue;  // does not fit (or tp does not divide the heads)
        ++deployments;
        const KvCost& cost = cap.stages[cap.tightest_stage].kv;
        for (uint64_t block : {1, 16, 32}) {
          for (const RequestMix& mix : mixes) {
            PagingConfig cfg;
            cfg.kv_budget_bytes = cap.kv_budget_bytes;
            cfg.block_size = block;
            cfg.max_model_len = 8192;
            cfg.shared_prefix_tokens = 512;
            CAPTURE(model.name);
            CAPTURE(hw.name);
            CAPTURE(tp);
            CAPTURE(block);
            CAPTURE(mix.source);
            PagingResult r = AnalyzePaging(cost, mix, cfg);
            for (const AllocationResult* a : {&r.contiguous, &r.paged, &r.prefix}) {
              CHECK(a->WastePercent() >= 0);
              CHECK(a->WastePercent() <= 100);
              CHECK(a->used_bytes <= a->allocated_bytes);
            }
            // Paged allocation never holds more than the tokens rounded up to
            // blocks: a request never holds more than the contiguous reservation,
            // except that a W-token window spans up to ceil((W - 1) / B) + 1 blocks,
            // less than two blocks more than W, per windowed group.
            uint64_t slack = 0;
            for (const GroupCost& g : cost.groups) {
              if (g.cap_tokens != 0) slack += 2 * block * g.per_token_bytes;
            }
            for (const Request& q : mix.requests) {
              CHECK(PagedSequenceBytes(cost, q.Tokens(), block) <=
                    cost.SequenceBytes(cfg.max_model_len) + slack);
              CHECK(PagedSequenceBytes(cost, q.Tokens(), block) >= cost.SequenceBytes(q.Tokens()));
            }
            if (!HasWindow(cost)) CHECK(r.paged.concurrency >= r.contiguous.concurrency);
            // Prefix sharing never increases memory, never lowers concurrency.
            CHECK(r.has_prefix == (SharableBlockBytes(cost, block) != 0));
            if (r.has_prefix) {
              CHECK(r.prefix.allocated_bytes <= r.paged.allocated_bytes);
              CHECK(r.prefix.concurrency >= r.paged.concurrency);
              CHECK(r.prefix_blocks == 512 / block);
            }
            ++checked;
          }
        }
      }
    }
  }
  CHECK(deployments > 300);
  CHECK(checked == deployments * 9);
}
