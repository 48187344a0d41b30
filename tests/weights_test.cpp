// Weights: parameter counts from the architecture against every bundled
// model's published count, quantized bytes, and the tp/pp split.
#include <doctest/doctest.h>

#include <cmath>

#include "plan/parallel.h"
#include "plan/weights.h"
#include "spec/catalog.h"

namespace kvplan {

TEST_CASE("computed parameter count is within 1% of the published count for every model") {
  for (const ModelSpec& m : CatalogModels()) {
    CAPTURE(m.name);
    ModelTensors t = BuildModelTensors(m);
    CHECK(t.from_architecture);
    double ratio = static_cast<double>(CountParams(t)) / static_cast<double>(m.params);
    CHECK(std::abs(ratio - 1.0) < 0.01);
    // In fact every bundled model is exact but Falcon-7B (one shared layernorm per layer,
    // counted as two): within 0.01%.
    CHECK(std::abs(ratio - 1.0) < 0.0001);
  }
}

}  // namespace kvplan

namespace kvplan {

TEST_CASE("weight formats: bytes per matrix with their scales") {
  WeightTensor w;
  w.linear = true;
  w.rows = 4096;
  w.cols = 4096;
  w.split = TpSplit::kColumn;
  CHECK(TensorBytes(w, FindWeightFormat("bf16"), 1) == 4096ull * 4096 * 2);
  CHECK(TensorBytes(w, FindWeightFormat("fp8"), 1) == 4096ull * 4096 + 4);           // per-tensor scale
  CHECK(TensorBytes(w, FindWeightFormat("int8"), 1) == 4096ull * 4096 + 4096 * 4);   // per-channel fp32
  // int4, group 128: 4 bits per weight + (16-bit scale + 4-bit zero) per 128 inputs.
  CHECK(TensorBytes(w, FindWeightFormat("int4"), 1) == 4096ull * 4096 / 2 + 4096ull * 32 * 20 / 8);
  CHECK(TensorBytes(w, FindWeightFormat("int4", 64), 1) == 4096ull * 4096 / 2 + 4096ull * 64 * 20 / 8);
  CHECK(TensorBytes(w, FindWeightFormat("mxfp4"), 1) == 4096ull * 4096 / 2 + 4096ull * 4096 / 32);
  CHECK(TensorBytes(w, FindWeightFormat("nvfp4"), 1) == 4096ull * 4096 / 2 + 4096ull * 4096 / 16 + 4);
  // Column-parallel: rows split; row-parallel: columns split.
  CHECK(TensorBytes(w, FindWeightFormat("bf16"), 4) == 1024ull * 4096 * 2);
  w.split = TpSplit::kRow;
  CHECK(TensorBytes(w, FindWeightFormat("int8"), 4) == 4096ull * 1024 + 4096 * 4);
  // Embeddings and norms are never quantized.
  w.linear = false;
  CHECK(TensorBytes(w, FindWeightFormat("int4"), 1) == 4096ull * 4096 * 2);
  CHECK_THROWS_WITH(FindWeightFormat("int3"),
                    "unknown weight dtype 'int3' (known: fp32, fp16, bf16, fp8, int8, int4, nvfp4, mxfp4)");
}

TEST_CASE("weights per rank: tp splits layers and vocab, replicates norms and KV heads past kv_heads") {
  ModelSpec m = LoadModel("llama-3.1-8b");
  ModelTensors t = BuildModelTensors(m);
  const WeightFormat bf16 = FindWeightFormat("bf16");
  const uint64_t whole = ModelWeightBytes(t, bf16);
  CHECK(whole == 8030261248ull * 2);
  const uint64_t norms = (32 * 2 + 1) * 4096ull * 2;  // replicated on every rank
  CHECK(StageWeightBytes(t, bf16, 2, 0, 32, true, true) == (whole - norms) / 2 + norms);
  // tp 16 > 8 KV heads: k/v projections are replicated (one head per rank), so a rank holds
  // more than 1/16 of the attention.
  const uint64_t kv_rank16 = 32ull * 2 * 128 * 4096 * 2;  // k and v, one head, 32 layers
  const uint64_t rank16 = StageWeightBytes(t, bf16, 16, 0, 32, true, true);
  const uint64_t kv_whole = 32ull * 2 * 1024 * 4096 * 2;
  CHECK(rank16 == (whole - norms - kv_whole) / 16 + kv_rank16 + norms);
  // MLA down-projections are replicated: DeepSeek-V3's per-rank bytes exceed 1/8.
  ModelTensors d = BuildModelTensors(LoadModel("deepseek-v3"));
  CHECK(StageWeightBytes(d, bf16, 8, 0, 61, true, true) > ModelWeightBytes(d, bf16) / 8);
}

TEST_CASE("weights per pipeline stage: first stage has the embedding, last the lm_head") {
  ModelSpec m = LoadModel("llama-3.1-8b");
  ModelTensors t = BuildModelTensors(m);
  const WeightFormat bf16 = FindWeightFormat("bf16");
  const uint64_t emb = 128256ull * 4096 * 2;
  const uint64_t layer = (8030261248ull * 2 - 2 * emb - 4096 * 2) / 32;
  CHECK(StageWeightBytes(t, bf16, 1, 0, 16, true, false) == emb + 16 * layer);
  CHECK(StageWeightBytes(t, bf16, 1, 16, 16, false, true) == emb + 4096 * 2 + 16 * layer);
  CHECK(StageWeightBytes(t, bf16, 1, 8, 8, false, false) == 8 * layer);
  // Without the architecture fields, the published count is spread over layers.
  m.vocab_size = 0;
  ModelTensors flat = BuildModelTensors(m);
  CHECK_FALSE(flat.from_architecture);
  CHECK(CountParams(flat) == m.params);
  CHECK(WeightBytesFromParams(m.params, bf16) == m.params * 2);
}

}  // namespace kvplan
