// Weights: parameter counts from the architecture against every bundled
// model's published count, quantized bytes, and the tp/pp split.
#include "plan/weights.h"

#include <doctest/doctest.h>

#include <cmath>

#include "import/resolve.h"
#include "plan/kv.h"
#include "plan/parallel.h"
#include "spec/cache_dtype.h"
#include "spec/catalog.h"
#include "util/error.h"

namespace kvplan {

TEST_CASE("computed parameter count is within 1% of the published count for every model") {
  for (const ModelSpec& m : CatalogModels()) {
    CAPTURE(m.name);
    ModelTensors t = BuildModelTensors(m);
    // A model without its weight shapes (the Mamba-2 and linear-attention
    // hybrids, whose family extras kvplan does not count: gated queries,
    // shared-expert gates, muP) has its published params spread over the layers.
    if (!m.HasWeightShapes()) {
      CHECK_FALSE(t.from_architecture);
      CHECK(CountParams(t) == m.params);
      continue;
    }
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
  CHECK(TensorBytes(w, FindWeightFormat("fp8"), 1) == 4096ull * 4096 + 4);  // per-tensor scale
  CHECK(TensorBytes(w, FindWeightFormat("int8"), 1) ==
        4096ull * 4096 + 4096 * 4);  // per-channel fp32
  // int4, group 128: 4 bits per weight + (16-bit scale + 4-bit zero) per 128 inputs.
  CHECK(TensorBytes(w, FindWeightFormat("int4"), 1) == 4096ull * 4096 / 2 + 4096ull * 32 * 20 / 8);
  CHECK(TensorBytes(w, FindWeightFormat("int4", 64), 1) ==
        4096ull * 4096 / 2 + 4096ull * 64 * 20 / 8);
  CHECK(TensorBytes(w, FindWeightFormat("mxfp4"), 1) == 4096ull * 4096 / 2 + 4096ull * 4096 / 32);
  CHECK(TensorBytes(w, FindWeightFormat("nvfp4"), 1) ==
        4096ull * 4096 / 2 + 4096ull * 4096 / 16 + 4);
  // Column-parallel: rows split; row-parallel: columns split.
  CHECK(TensorBytes(w, FindWeightFormat("bf16"), 4) == 1024ull * 4096 * 2);
  w.split = TpSplit::kRow;
  CHECK(TensorBytes(w, FindWeightFormat("int8"), 4) == 4096ull * 1024 + 4096 * 4);
  // Embeddings and norms are never quantized.
  w.linear = false;
  CHECK(TensorBytes(w, FindWeightFormat("int4"), 1) == 4096ull * 4096 * 2);
  const std::string unknown = "unknown weight dtype 'int3' (known: " + KnownWeightFormats() + ")";
  CHECK_THROWS_WITH(FindWeightFormat("int3"), unknown.c_str());
}

TEST_CASE(
    "weights per rank: tp splits layers and vocab, replicates norms and KV heads past kv_heads") {
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

namespace kvplan {

TEST_CASE("checkpoint formats: fp8 block scales, quantized parts, and what overrides them") {
  QuantSpec block;
  block.format = "fp8";
  block.block = 128;
  const WeightFormat f = CheckpointWeightFormat(block);
  WeightTensor w;
  w.linear = true;
  w.part = TensorPart::kMlp;
  w.rows = 7168;  // DeepSeek-V3 shared expert down_proj, 2048 -> 7168: 56 x 16 blocks
  w.cols = 2048;
  w.split = TpSplit::kRow;
  CHECK(TensorBytes(w, f, 1) == 7168ull * 2048 + 56 * 16 * 4);
  // A partial block still has its scale: 7168 x 2048 / tp 3 -> 683 columns, 6 blocks
  // (arithmetic only: vLLM refuses such a split, see BlockTilingError).
  CHECK(TensorBytes(w, f, 3) == 7168ull * 683 + 56 * 6 * 4);
  CHECK(WeightFormatLabel(f) == "fp8 (128x128 blocks)");
  CHECK(WeightFormatLabel(FindWeightFormat("fp8")) == "fp8");
  CHECK(WeightFormatLabel(FindWeightFormat("int4")) == "int4");
  CHECK(WeightFormatLabel(FindWeightFormat("int4", 64)) == "int4 (groups of 64)");

  QuantSpec experts;
  experts.format = "mxfp4";
  experts.parts = {"experts"};
  const WeightFormat x = CheckpointWeightFormat(experts);
  CHECK(WeightFormatLabel(x) == "mxfp4 (experts only)");
  w.rows = w.cols = 2880;
  w.part = TensorPart::kExperts;
  CHECK(TensorBytes(w, x, 1) == 2880ull * 2880 / 2 + 2880ull * 90);  // 4 bits + e8m0 per 32
  w.part = TensorPart::kAttention;
  CHECK(TensorBytes(w, x, 1) == 2880ull * 2880 * 2);  // not converted: bf16

  // The model's format: --weight-dtype wins, but naming the checkpoint's own
  // type keeps its blocks and parts (the engine reads them from the checkpoint).
  const ModelSpec ds = LoadModel("deepseek-v3");
  CHECK(WeightFormatLabel(ModelWeightFormat(ds, "")) == "fp8 (128x128 blocks)");
  CHECK(WeightFormatLabel(ModelWeightFormat(ds, "fp8")) == "fp8 (128x128 blocks)");
  CHECK(WeightFormatLabel(ModelWeightFormat(ds, "bf16")) == "bf16");
  CHECK(WeightFormatLabel(ModelWeightFormat(ds, "int4")) == "int4");
  CHECK(WeightFormatLabel(ModelWeightFormat(LoadModel("llama-3.1-8b"), "")) == "bf16");
  CHECK(WeightFormatLabel(ModelWeightFormat(LoadModel("gpt-oss-120b"), "mxfp4")) ==
        "mxfp4 (experts only)");
}

TEST_CASE("fp8 blocks must tile every tensor-parallel slice, as vLLM requires") {
  const ModelSpec ds = LoadModel("deepseek-v3");
  const ModelTensors t = BuildModelTensors(ds);
  const WeightFormat f = ModelWeightFormat(ds, "");
  for (uint64_t tp : {1, 2, 4, 8, 16}) CHECK(BlockTilingError(t, f, tp).empty());
  // tp 32: the dense MLP's 18,432 gate (and up) rows are 576 per rank, 4.5 blocks.
  CHECK(BlockTilingError(t, f, 32) ==
        "fp8 blocks of 128 x 128 do not tile mlp gate_up_proj at tp 32: 18432 / 32 = 576 output "
        "features per rank; vLLM and SGLang need whole blocks per rank");
  // tp 3: kv_b_proj's 128 heads x 256 rows do not even split evenly.
  CHECK(BlockTilingError(t, f, 3) ==
        "fp8 blocks of 128 x 128 do not tile attention kv_b_proj at tp 3: 32768 / 3 = 10922.7 "
        "output features per rank; vLLM and SGLang need whole blocks per rank");
  // Formats without blocks never complain.
  CHECK(BlockTilingError(t, FindWeightFormat("fp8"), 32).empty());
}

TEST_CASE("published checkpoints: gpt-oss in MXFP4, DeepSeek-V3 in block fp8") {
  // gpt-oss-120b as llama.cpp loads its MXFP4 GGUF: "file size = 60.87 GiB
  // (4.48 BPW)", 108 mxfp4 tensors (the experts), 146 bf16 and 433 f32
  // (ollama/ollama#16416). The GGUF keeps norms, biases and sinks in f32
  // (~0.08 GiB more than bf16, mostly the experts' biases) and its header:
  // within 0.3 %.
  const ModelSpec oss = LoadModel("gpt-oss-120b");
  const ModelTensors t = BuildModelTensors(oss);
  const double gib = static_cast<double>(ModelWeightBytes(t, ModelWeightFormat(oss, ""))) /
                     static_cast<double>(1ull << 30);
  CHECK(gib == doctest::Approx(60.87).epsilon(0.003));
  CHECK(gib < 60.87);
  // The same model in bf16 throughout would not fit an 80 GB GPU.
  CHECK(ModelWeightBytes(t, FindWeightFormat("bf16")) >
        3 * ModelWeightBytes(t, ModelWeightFormat(oss, "")));

  // DeepSeek-V3: 671.0B parameters, one byte each in fp8, plus a second byte
  // for what stays bf16 (embedding and lm_head: 2 x 129,280 x 7,168 =
  // 1.853 GB; router gates 0.106 GB; norms) and the fp32 block scales (one
  // per 16,384 weights: 0.164 GB).
  const ModelSpec ds = LoadModel("deepseek-v3");
  const ModelTensors d = BuildModelTensors(ds);
  const uint64_t fp8 = ModelWeightBytes(d, ModelWeightFormat(ds, ""));
  CHECK(fp8 - ds.params > 1'853'222'912ull + 106'000'000 + 160'000'000);
  CHECK(fp8 - ds.params < 1'853'222'912ull + 107'000'000 + 166'000'000);
}

}  // namespace kvplan

namespace kvplan {

TEST_CASE("quantized layouts: packed weights with their group scales, zeros and indices") {
  WeightTensor w;
  w.linear = true;
  w.rows = 4096;
  w.cols = 4096;
  w.split = TpSplit::kColumn;
  const uint64_t int4 = 4096ull * 4096 / 2;
  // GPTQ: qweight, qzeros (4 bits per group and output), fp16 scales, and an
  // int32 g_idx per input.
  CHECK(TensorBytes(w, FindWeightFormat("gptq"), 1) == int4 + 4096ull * 32 * 20 / 8 + 4096 * 4);
  // GPTQ 8-bit: 8-bit zeros.
  CHECK(TensorBytes(w, FindWeightFormat("gptq-int8"), 1) ==
        4096ull * 4096 + 4096ull * 32 * 24 / 8 + 4096 * 4);
  // compressed-tensors W4A16 (symmetric): a 16-bit scale per group, no
  // zeros, an int64[2] weight_shape.
  CHECK(TensorBytes(w, FindWeightFormat("ct-w4a16"), 1) == int4 + 4096ull * 32 * 2 + 16);
  // compressed-tensors FP8-dynamic: a 16-bit scale per output channel.
  CHECK(TensorBytes(w, FindWeightFormat("fp8-channel"), 1) == 4096ull * 4096 + 4096 * 2);
  // ModelOpt / static fp8: fp32 weight_scale and input_scale.
  CHECK(TensorBytes(w, FindWeightFormat("modelopt"), 1) == 4096ull * 4096 + 8);
  // bitsandbytes NF4, double quant: uint8 absmax per 64, fp32 per 16,384,
  // the 16- and 256-entry fp32 maps.
  CHECK(TensorBytes(w, FindWeightFormat("bitsandbytes"), 1) ==
        int4 + 4096ull * 64 + 4096ull * 1 * 4 + (16 + 256) * 4);
  CHECK(TensorBytes(w, FindWeightFormat("bnb-nf4-plain"), 1) == int4 + 4096ull * 64 * 4 + 64);
  // The g_idx is split with the inputs on a row-parallel layer.
  w.split = TpSplit::kRow;
  CHECK(TensorBytes(w, FindWeightFormat("gptq"), 4) ==
        4096ull * 1024 / 2 + 4096ull * 8 * 20 / 8 + 1024 * 4);
}

TEST_CASE("checkpoint bytes: used when the run keeps the checkpoint's format, spread per GPU") {
  ModelSpec m = LoadModel("llama-3.1-8b");
  const ModelTensors t = BuildModelTensors(m);
  const WeightFormat own = ModelWeightFormat(m, "");
  CHECK_FALSE(UsesCheckpointBytes(m, own));  // catalog models carry none
  CHECK(WeightBytesSource(m, t, own) == "counted from the architecture");
  m.checkpoint_bytes = 16'060'522'496ull;
  m.checkpoint_bytes_from = "model.safetensors.index.json total_size";
  CHECK(UsesCheckpointBytes(m, own));
  CHECK(WeightBytesSource(m, t, own) == "exact: model.safetensors.index.json total_size");
  CHECK(UsesCheckpointBytes(m, FindWeightFormat("bf16")));
  CHECK_FALSE(UsesCheckpointBytes(m, FindWeightFormat("fp8")));  // an override changes them
  CHECK_FALSE(UsesCheckpointBytes(m, FindWeightFormat("fp32")));
  // A method kvplan does not size keeps the checkpoint's own bytes.
  CHECK(UsesCheckpointBytes(m, ModelWeightFormat(m, "compressed-tensors")));
  // Per GPU: the architecture's share, scaled to the exact total.
  const uint64_t arch = ModelWeightBytes(t, own);
  CHECK(ScaleToCheckpoint(arch, arch, m.checkpoint_bytes) == m.checkpoint_bytes);
  CHECK(ScaleToCheckpoint(arch / 2, arch, arch + 2) == arch / 2 + 1);
  CHECK(ScaleToCheckpoint(UINT64_MAX, UINT64_MAX, UINT64_MAX) == UINT64_MAX);
  CHECK_THROWS_AS(ScaleToCheckpoint(UINT64_MAX, 1, 2), Error);
}

TEST_CASE("published checkpoints: an unquantized one counts to its index's total_size") {
  // meta-llama/Llama-3.1-8B's model.safetensors.index.json total_size is
  // 16,060,522,496 bytes: its 8,030,261,248 published parameters in bf16
  // (https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/model.safetensors.index.json).
  const ModelSpec m = LoadModel("llama-3.1-8b");
  CHECK(ModelWeightBytes(BuildModelTensors(m), ModelWeightFormat(m, "")) == 16'060'522'496ull);
}

}  // namespace kvplan

namespace kvplan {

TEST_CASE("weight split: whole experts over expert-parallel ranks, attention over its own ranks") {
  WeightTensor e;
  e.part = TensorPart::kExperts;
  e.linear = true;
  e.rows = 4096;
  e.cols = 1024;
  e.copies = 10;
  e.split = TpSplit::kColumn;
  const WeightFormat bf16 = FindWeightFormat("bf16");
  // tp 4: every expert's rows split; ep 4: ceil(10 / 4) = 3 whole experts.
  CHECK(TensorBytes(e, bf16, WeightSplit{4, 0, 0}) == 10ull * 1024 * 1024 * 2);
  CHECK(TensorBytes(e, bf16, WeightSplit{4, 0, 4}) == 3ull * 4096 * 1024 * 2);
  WeightTensor a = e;
  a.part = TensorPart::kAttention;
  a.copies = 1;
  CHECK(TensorBytes(a, bf16, WeightSplit{8, 1, 0}) == 4096ull * 1024 * 2);  // whole
  CHECK(TensorBytes(a, bf16, WeightSplit{8, 0, 0}) == 512ull * 1024 * 2);   // tp 8
}

}  // namespace kvplan

namespace kvplan {

TEST_CASE("weights: a k_eq_v group has no v_proj; its cache keeps K and V") {
  // Gemma-4-26B-A4B: the 5 global layers lose a 2 KV heads x 512 x 2816 v_proj each (what vLLM
  // fills by copying k_proj at load), and the cache is the same.
  const ModelSpec& m = LoadModel("gemma-4-26b-a4b-it");
  ModelSpec with_v = m;
  for (LayerGroup& g : with_v.groups) g.k_eq_v = false;
  CHECK(CountParams(BuildModelTensors(with_v)) - CountParams(BuildModelTensors(m)) ==
        5ull * 2 * 512 * 2816);
  CHECK(ComputeKvCost(with_v, FindCacheDtype("bf16"), 1).per_token_bytes ==
        ComputeKvCost(m, FindCacheDtype("bf16"), 1).per_token_bytes);
  // The checkpoint's language model: 25,233,141,760 parameters (the safetensors header totals,
  // transformers' modeling_gemma4.py shapes: 7 norms a MoE layer, per-width q/k norms, the
  // router's scales).
  CHECK(CountParams(BuildModelTensors(m)) == 25'233'141'760ull);
}

}  // namespace kvplan

namespace kvplan {

TEST_CASE(
    "weights: attention biases are on q/k/v only for GLM and Qwen2, on o_proj and experts "
    "too for gpt-oss") {
  auto bias_params = [](const ModelSpec& m) {
    ModelSpec without = m;
    without.attention_bias = false;
    return CountParams(BuildModelTensors(m)) - CountParams(BuildModelTensors(without));
  };
  // GLM-4.5 (Glm4MoeAttention: q/k/v Linear(bias=config.attention_bias), o_proj bias=False; the
  // experts' Linear layers have none): 92 layers x (96 + 2 x 8) heads x 128.
  CHECK(bias_params(LoadModel("glm-4.5")) == 92ull * (96 + 2 * 8) * 128);
  // With its q/k norms (use_qk_norm) and routing correction biases the count is the config's.
  for (const char* glm : {"glm-4.5", "glm-4.6"}) {
    const ModelSpec& m = LoadModel(glm);
    CHECK(CountParams(BuildModelTensors(m)) == m.params);
  }
  // The same attention as a Qwen2-MoE: still q/k/v only.
  ModelSpec qwen2_moe = LoadModel("glm-4.5");
  qwen2_moe.architecture = "Qwen2MoeForCausalLM";
  CHECK(bias_params(qwen2_moe) == 92ull * (96 + 2 * 8) * 128);
  // gpt-oss-20b: q/k/v (64 + 2 x 8 heads x 64) and o_proj (2880) on 24 layers, and every
  // expert's gate_up (2 x 2880) and down (2880) biases, 32 experts a layer, and the router's
  // (32).
  const ModelSpec& oss = LoadModel("gpt-oss-20b");
  CHECK(bias_params(oss) == 24ull * ((64 + 2 * 8) * 64 + 2880 + 32 * (2 * 2880 + 2880) + 32));
}

}  // namespace kvplan
