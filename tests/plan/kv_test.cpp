#include "plan/kv.h"

#include <doctest/doctest.h>

#include "import/resolve.h"
#include "spec/catalog.h"
#include "spec/model_reader.h"
#include "util/units.h"

using namespace kvplan;

namespace {

KvCost Cost(const std::string& model, const std::string& dtype = "fp16", uint64_t tp = 1) {
  ModelSpec m = LoadModel(model);
  const CacheDtype& d = FindCacheDtype(dtype);
  CheckKvConfig(m, d, tp);
  return ComputeKvCost(m, d, tp);
}

}  // namespace

TEST_CASE("published figures, exactly") {
  // 32 layers x 4096 (32 heads x 128) x fp16 x 4096 tokens = 2 GiB (Llama-2-7B).
  CHECK(Cost("llama-2-7b").per_token_bytes == 2 * 32 * 4096 * 2);
  CHECK(Cost("llama-2-7b").SequenceBytes(4096) == 2 * kGiB);
  CHECK(Cost("llama-2-7b").TotalBytes(4096, 8) == 16 * kGiB);
  // Llama-3-70B: 80 layers, 8 KV heads, 128 dims, fp16, 4096 tokens.
  CHECK(Cost("llama-3-70b").SequenceBytes(4096) == 1'342'177'280ull);
  CHECK(Cost("llama-3.1-70b").per_token_bytes == 327'680);
  // DeepSeek-V3 bf16: 61 layers x (512 + 64) x 2 B = 70,272 B per token.
  CHECK(Cost("deepseek-v3", "bf16").per_token_bytes == 70'272);
  // fp8_ds_mla: 656 B per token-layer.
  CHECK(Cost("deepseek-v3", "fp8_ds_mla").per_token_bytes == 61 * 656);
  // Falcon-7B is MQA: one KV head of 64.
  CHECK(Cost("falcon-7b").per_token_bytes == 2 * 32 * 1 * 64 * 2);
  // Qwen3-8B states head_dim 128 (hidden 4096 / 32 heads would also be 128; the
  // trap is Qwen3-30B-A3B: hidden 2048 / 32 = 64, but head_dim is 128).
  CHECK(Cost("qwen3-30b-a3b").per_token_bytes == 2 * 48 * 4 * 128 * 2);
}

TEST_CASE("ggml block formats cost bytes per 32-element block") {
  // q8_0: 34 B per 32 elements; Llama-3.1-8B: 32 layers x 8 heads x 128 dims.
  CHECK(Cost("llama-3.1-8b", "q8_0").per_token_bytes == 2 * 32 * 8 * (128 / 32 * 34));
  CHECK(Cost("llama-3.1-8b", "q4_0").per_token_bytes == 2 * 32 * 8 * (128 / 32 * 18));
  CHECK(Cost("llama-3.1-8b", "nvfp4").per_token_bytes == 2 * 32 * 8 * (64 + 8));
  CHECK(Cost("llama-3.1-8b", "int8_pth").per_token_bytes == 2 * 32 * 8 * (128 + 4));
  // Phi-3-mini has head_dim 96: a multiple of 32, so q4_0 works.
  CHECK(Cost("phi-3-mini", "q4_0").per_token_bytes == 2 * 32 * 32 * (96 / 32 * 18));
  // GPT-2 head_dim 64 is fine; a head_dim of 80 is not.
  ModelSpec m = LoadModel("gpt2");
  m.head_dim = m.v_head_dim = 80;
  for (LayerGroup& g : m.groups) g.head_dim = g.v_head_dim = 80;
  CHECK_THROWS_WITH(CheckKvConfig(m, FindCacheDtype("q8_0"), 1),
                    "head_dim 80 is not a multiple of 32: q8_0 stores 32-element blocks");
}

TEST_CASE("sliding windows cap the cache") {
  // Mistral-7B-v0.1: every layer slides over 4096 tokens.
  KvCost c = Cost("mistral-7b-v0.1");
  CHECK(c.SequenceBytes(4096) == c.per_token_bytes * 4096);
  CHECK(c.SequenceBytes(32768) == c.per_token_bytes * 4096);
  // Gemma-3-27B: 10 full layers, 52 sliding (1024).
  KvCost g = Cost("gemma-3-27b", "bf16");
  uint64_t layer = 2 * 16 * 128 * 2;
  CHECK(g.SequenceBytes(32768) == layer * (10 * 32768 + 52 * 1024));
  CHECK(g.SequenceBytes(512) == layer * 62 * 512);
}

TEST_CASE("hybrid models count attention layers plus their fixed state") {
  // Jamba-v0.1: 4 attention layers (8 KV heads x 128), 28 Mamba layers.
  KvCost j = Cost("jamba-v0.1", "bf16");
  uint64_t attn = 2 * 4 * 8 * 128 * 2;
  CHECK(j.per_token_bytes == attn);
  CHECK(j.fixed_bytes == 28ull * 311'296);
  CHECK(j.SequenceBytes(1000) == attn * 1000 + 28ull * 311'296);
  CHECK(j.SequenceBytes(0) == 28ull * 311'296);
}

TEST_CASE("tensor parallel splits KV heads, replicates past kv_heads, never splits MLA") {
  CHECK(Cost("llama-3.1-70b", "fp16", 4).per_token_bytes == 327'680 / 4);
  CHECK(Cost("llama-3.1-70b", "fp16", 8).per_token_bytes == 327'680 / 8);
  // 16 ranks over 8 KV heads: each rank keeps one head (replicated twice).
  CHECK(Cost("llama-3.1-70b", "fp16", 16).per_token_bytes == 327'680 / 8);
  CHECK(Cost("deepseek-v3", "bf16", 8).per_token_bytes == 70'272);
  CHECK(KvHeadsPerRank(8, 2) == 4);
  CHECK(KvHeadsPerRank(1, 4) == 1);
  ModelSpec m = LoadModel("llama-3.1-70b");
  CHECK_THROWS_WITH(CheckKvConfig(m, FindCacheDtype("fp16"), 3),
                    "tensor parallel size 3 does not divide the 64 query heads of llama-3.1-70b");
  ModelSpec q = LoadModel("qwen2.5-7b");  // 28 query heads, 4 KV heads
  CHECK_THROWS_WITH(CheckKvConfig(q, FindCacheDtype("fp16"), 14),
                    "tensor parallel size 14 must divide the 4 KV heads of qwen2.5-7b or be a "
                    "multiple of them");
}

TEST_CASE("overflow is an error, never a wrapped number") {
  KvCost c = Cost("llama-3.1-405b");
  CHECK_THROWS_WITH(c.TotalBytes(1ull << 40, 1ull << 20), doctest::Contains("overflow"));
}

TEST_CASE("max tokens per sequence inverts the cost") {
  KvCost c = Cost("llama-2-7b");
  CHECK(c.MaxTokensPerSequence(2 * kGiB) == 4096);
  CHECK(c.MaxTokensPerSequence(2 * kGiB - 1) == 4095);
  KvCost s = Cost("mistral-7b-v0.1");
  CHECK(s.MaxTokensPerSequence(s.SequenceBytes(4096)) == UINT64_MAX);  // capped: any length fits
  KvCost j = Cost("jamba-v0.1", "bf16");
  CHECK(j.MaxTokensPerSequence(j.fixed_bytes - 1) == 0);
}

TEST_CASE("invariants over every bundled model") {
  const std::vector<ModelSpec>& models = CatalogModels();
  REQUIRE(models.size() >= 20);
  for (const ModelSpec& m : models) {
    CAPTURE(m.name);
    CHECK(!m.source.empty());
    CHECK(m.source.find("huggingface.co") != std::string::npos);
    const CacheDtype& fp16 = FindCacheDtype("fp16");
    CheckKvConfig(m, fp16, 1);
    KvCost c = ComputeKvCost(m, fp16, 1);
    uint64_t n = std::min<uint64_t>(m.max_context, 8192);
    // Linear in batch.
    CHECK(c.TotalBytes(n, 7) == 7 * c.SequenceBytes(n));
    // Affine in context (while no window caps): S(2n) - S(n) = S(n) - S(0) for uncapped.
    uint64_t min_cap = UINT64_MAX;
    for (const GroupCost& g : c.groups) {
      if (g.cap_tokens) min_cap = std::min(min_cap, g.cap_tokens);
    }
    uint64_t a = std::min<uint64_t>(min_cap / 2, 100);
    CHECK(c.SequenceBytes(2 * a) - c.SequenceBytes(a) == c.SequenceBytes(a) - c.SequenceBytes(0));
    CHECK(c.SequenceBytes(0) == c.fixed_bytes);
    // Monotone in context.
    CHECK(c.SequenceBytes(n) <= c.SequenceBytes(2 * n));
    // GQA/MQA reduce each group by H_q/H_kv (its own KV heads: Gemma 4's global layers)
    // compared with the same model as MHA.
    if (!m.mla && m.HasAttention()) {
      ModelSpec mha = m;
      mha.kv_heads = m.query_heads;
      for (LayerGroup& g : mha.groups) g.kv_heads = m.query_heads;
      KvCost cm = ComputeKvCost(mha, fp16, 1);
      REQUIRE(cm.groups.size() == c.groups.size());
      for (size_t i = 0; i < c.groups.size(); ++i) {
        CHECK(cm.groups[i].per_token_bytes * m.groups[i].kv_heads ==
              c.groups[i].per_token_bytes * m.query_heads);
      }
    }
    // fp8 never costs more than fp16; fp32 is twice fp16 for the attention part.
    // (DeepSeek-V3.2's indexer key is fp8 whatever the cache dtype.)
    KvCost c8 = ComputeKvCost(m, FindCacheDtype("fp8"), 1);
    const uint64_t index = m.mla ? IndexerKeyBytes(*m.mla) * m.layers : 0;
    CHECK((c8.per_token_bytes - index) * 2 == c.per_token_bytes - index);
    // Per-rank x ranks covers the whole cache.
    for (uint64_t tp : {2ull, 4ull, 8ull}) {
      if (m.query_heads % tp != 0) continue;
      bool ok = true;
      try {
        CheckKvConfig(m, fp16, tp);
      } catch (const Error&) {
        ok = false;
      }
      if (!ok) continue;
      KvCost r = ComputeKvCost(m, fp16, tp);
      CAPTURE(tp);
      CHECK(r.TotalBytes(n, 3) * tp >= c.TotalBytes(n, 3));
    }
  }
}

TEST_CASE("every bundled accelerator reads") {
  const std::vector<HardwareSpec>& hw = CatalogHardware();
  REQUIRE(hw.size() >= 14);
  for (const HardwareSpec& h : hw) {
    CAPTURE(h.name);
    CHECK(h.memory_bytes >= 16 * kGiB);
    CHECK(h.memory_bandwidth_gbps > 100);
    CHECK(h.PeakFlops("bf16") > 1e12);
    CHECK(!h.source.empty());
  }
}

TEST_CASE("DeepSeek-V3.2: the indexer's fp8 key beside each MLA latent, and what decode reads") {
  // vLLM's DeepseekV32IndexerCache and SGLang's NSA index-k buffer: index_head_dim 128 fp8
  // values + one fp32 scale per 128 = 132 B per token and layer, uint8 whatever the cache
  // dtype. The latent: 576 x 2 B (bf16) or fp8_ds_mla's 656 B.
  const ModelSpec m = LoadModel("deepseek-v3.2");
  CHECK(IndexerKeyBytes(*m.mla) == 132);
  const KvCost bf16 = ComputeKvCost(m, FindCacheDtype("bf16"), 1);
  CHECK(bf16.per_token_bytes == 61 * (1152 + 132));
  CHECK(bf16.groups[0].index_bytes_per_token_layer == 132);
  const KvCost ds = ComputeKvCost(m, FindCacheDtype("fp8_ds_mla"), 8);  // not split by tp
  CHECK(ds.per_token_bytes == 61 * (656 + 132));
  // A decode step scores every indexer key but reads only index_topk (2,048) latents.
  CHECK(bf16.ReadBytes(1000, 1) == bf16.SequenceBytes(1000));
  CHECK(bf16.ReadBytes(131072, 2) == 2 * 61 * (132ull * 131072 + 1152ull * 2048));
  CHECK(bf16.SequenceBytes(131072) == 61 * 1284ull * 131072);
}
