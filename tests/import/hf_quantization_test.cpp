// quantization_config read from config.json: AWQ, GPTQ, fp8, compressed-
// tensors, ModelOpt, bitsandbytes and MXFP4, their group scales and zeros,
// and which layers stay 16-bit as the config's ignore lists say.
#include <doctest/doctest.h>

#include <string>

#include "cli_runner.h"
#include "import/hf_import.h"
#include "plan/weights.h"
#include "spec/model_reader.h"

namespace kvplan {
namespace {

// A Llama-3.1-8B config with `qc` as its quantization_config.
HfImport Llama8b(const std::string& qc) {
  return ImportHfConfig(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
      "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
      "intermediate_size": 14336, "vocab_size": 128256, "torch_dtype": "bfloat16",
      "rms_norm_eps": 1e-05, "max_position_embeddings": 131072, "quantization_config": )" +
                            qc + "}",
                        "q.json");
}

// The whole model's weight bytes in the checkpoint's own format.
uint64_t Bytes(const ModelSpec& m) {
  return ModelWeightBytes(BuildModelTensors(m), ModelWeightFormat(m, ""));
}

// Llama-3.1-8B's linear layers: 32 x (q 4096x4096, k/v 1024x4096, o
// 4096x4096, gate/up 14336x4096, down 4096x14336); 16-bit: the embedding,
// lm_head (2 x 128256 x 4096) and the norms (65 x 4096).
constexpr uint64_t kLinear = 32ull * (2 * 4096 * 4096 + 2 * 1024 * 4096 + 3 * 14336 * 4096);
constexpr uint64_t kDense = 2ull * (2 * 128256 * 4096 + 65 * 4096);
// Per layer, the groups of 128 inputs of every output row, summed:
// q, k, v, o, gate, up take 4096 / 128 = 32 groups a row, down 14336 / 128 = 112.
constexpr uint64_t kGroups =
    32ull * ((4096 + 1024 + 1024 + 4096 + 14336 + 14336) * 32 + 4096 * 112);

}  // namespace

TEST_CASE("quantization_config: AWQ and GPTQ count their packed zeros, scales and g_idx") {
  HfImport awq = Llama8b(R"({"quant_method": "awq", "bits": 4, "group_size": 128,
      "version": "gemm", "zero_point": true})");
  REQUIRE(awq.spec.quantization);
  CHECK(awq.spec.quantization->scheme.empty());
  CHECK(Bytes(awq.spec) == kDense + kLinear / 2 + kGroups * 20 / 8);
  HfImport gptq = Llama8b(R"({"quant_method": "gptq", "bits": 4, "group_size": 128,
      "desc_act": true, "sym": true})");
  REQUIRE(gptq.spec.quantization);
  CHECK(gptq.spec.quantization->scheme == "gptq");
  // + an int32 g_idx per input of each of the 7 matrices of a layer.
  const uint64_t g_idx = 32ull * (6 * 4096 + 14336) * 4;
  CHECK(Bytes(gptq.spec) == kDense + kLinear / 2 + kGroups * 20 / 8 + g_idx);
  HfImport gptq8 = Llama8b(R"({"quant_method": "gptq", "bits": 8, "group_size": 128})");
  REQUIRE(gptq8.spec.quantization);
  CHECK(gptq8.spec.quantization->format == "int8");
  CHECK(Bytes(gptq8.spec) == kDense + kLinear + kGroups * 24 / 8 + g_idx);
}

TEST_CASE("quantization_config: compressed-tensors W4A16, W8A8 int8 and fp8, NVFP4") {
  const auto ct = [](const std::string& weights, const std::string& format) {
    return Llama8b(R"({"quant_method": "compressed-tensors", "format": ")" + format +
                   R"(", "ignore": ["lm_head"], "config_groups": {"group_0": {"targets":
                   ["Linear"], "weights": )" +
                   weights + "}}}");
  };
  HfImport w4a16 = ct(R"({"num_bits": 4, "type": "int", "strategy": "group",
      "group_size": 128, "symmetric": true, "actorder": null})",
                      "pack-quantized");
  REQUIRE(w4a16.spec.quantization);
  CHECK(w4a16.spec.quantization->scheme == "ct-w4a16");
  // A bf16 scale per group, no zeros, an int64[2] weight_shape per matrix.
  CHECK(Bytes(w4a16.spec) == kDense + kLinear / 2 + kGroups * 2 + 32 * 7 * 16);
  HfImport int8 = ct(R"({"num_bits": 8, "type": "int", "strategy": "channel",
      "symmetric": true})",
                     "int-quantized");
  REQUIRE(int8.spec.quantization);
  CHECK(int8.spec.quantization->format == "int8");
  CHECK(int8.spec.quantization->scheme == "ct-w8a8");
  // A bf16 scale per output row (compressed-tensors makes scales in the weight's dtype).
  const uint64_t rows = 32ull * (4096 + 1024 + 1024 + 4096 + 14336 + 14336 + 4096);
  CHECK(Bytes(int8.spec) == kDense + kLinear + rows * 2);
  // W8A16 is written pack-quantized: the same bytes in int32 words, + a weight_shape per matrix.
  HfImport w8a16 = ct(R"({"num_bits": 8, "type": "int", "strategy": "channel"})", "pack-quantized");
  REQUIRE(w8a16.spec.quantization);
  CHECK(w8a16.spec.quantization->scheme == "ct-w8a16");
  CHECK(Bytes(w8a16.spec) == kDense + kLinear + rows * 2 + 32 * 7 * 16);
  // An asymmetric one (a zero point per row) is named, not sized.
  HfImport asym = ct(R"({"num_bits": 8, "type": "int", "strategy": "channel",
      "symmetric": false})",
                     "int-quantized");
  CHECK_FALSE(asym.spec.quantization);
  // Nor is a format that stores something else (16-bit dense, 2:4-sparse marlin-24).
  HfImport dense = ct(R"({"num_bits": 8, "type": "int", "strategy": "channel"})", "dense");
  CHECK_FALSE(dense.spec.quantization);
  CHECK(dense.yaml.find("int 8-bit channel weights, format dense") != std::string::npos);
  CHECK(asym.yaml.find("int 8-bit channel weights, format int-quantized, not symmetric") !=
        std::string::npos);
  HfImport fp8 = ct(R"({"num_bits": 8, "type": "float", "strategy": "channel",
      "symmetric": true})",
                    "float-quantized");
  REQUIRE(fp8.spec.quantization);
  CHECK(fp8.spec.quantization->scheme == "fp8-channel");
  // One bf16 scale per output row of every matrix.
  CHECK(Bytes(fp8.spec) == kDense + kLinear + rows * 2);
  HfImport nvfp4 = ct(R"({"num_bits": 4, "type": "float", "strategy": "tensor_group",
      "group_size": 16, "symmetric": true})",
                      "nvfp4-pack-quantized");
  REQUIRE(nvfp4.spec.quantization);
  CHECK(nvfp4.spec.quantization->format == "nvfp4");
  // Each spec YAML import-hf writes reads back to the same layout and bytes.
  for (const HfImport* imp : {&w4a16, &int8, &w8a16, &fp8, &nvfp4}) {
    const ModelSpec back = ParseModelYaml(imp->yaml, "back.yaml");
    REQUIRE(back.quantization);
    CHECK(back.quantization->scheme == imp->spec.quantization->scheme);
    CHECK(Bytes(back) == Bytes(imp->spec));
  }
  // What kvplan does not size stays a note.
  HfImport channel4 =
      ct(R"({"num_bits": 4, "type": "int", "strategy": "channel"})", "pack-quantized");
  CHECK_FALSE(channel4.spec.quantization);
  CHECK(channel4.yaml.find("int 4-bit channel weights, format pack-quantized") !=
        std::string::npos);
}

TEST_CASE("quantization_config: ModelOpt, bitsandbytes, and ignore lists") {
  HfImport mo = Llama8b(R"({"quant_method": "modelopt", "quant_algo": "FP8"})");
  REQUIRE(mo.spec.quantization);
  CHECK(mo.spec.quantization->scheme == "fp8-static");
  HfImport mo4 = Llama8b(R"({"quant_method": "modelopt", "quant_algo": "NVFP4",
      "group_size": 16, "exclude_modules": ["lm_head"]})");
  REQUIRE(mo4.spec.quantization);
  CHECK(mo4.spec.quantization->format == "nvfp4");
  CHECK(mo4.spec.quantization->parts.empty());
  HfImport bnb = Llama8b(R"({"quant_method": "bitsandbytes", "load_in_4bit": true,
      "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": true})");
  REQUIRE(bnb.spec.quantization);
  CHECK(bnb.spec.quantization->scheme == "bnb-nf4");
  HfImport bnb8 = Llama8b(R"({"quant_method": "bitsandbytes", "load_in_8bit": true})");
  REQUIRE(bnb8.spec.quantization);
  CHECK(bnb8.spec.quantization->scheme == "bnb-int8");
  // Attention left in 16 bits: only the MLP is quantized.
  HfImport mlp_only = Llama8b(R"({"quant_method": "compressed-tensors",
      "format": "float-quantized", "ignore": ["lm_head", "re:.*self_attn.*"],
      "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float",
      "strategy": "tensor"}}}})");
  REQUIRE(mlp_only.spec.quantization);
  CHECK(mlp_only.spec.quantization->parts == std::vector<std::string>{"mlp"});
  // One layer's module cannot be singled out: counted as quantized, said in the header.
  HfImport one = Llama8b(R"({"quant_method": "awq", "bits": 4,
      "modules_to_not_convert": ["model.layers.0.mlp.down_proj"]})");
  REQUIRE(one.spec.quantization);
  CHECK(one.spec.quantization->parts.empty());
  CHECK(one.yaml.find("kvplan counts them as quantized") != std::string::npos);
  CHECK_THROWS_WITH_AS(Llama8b(R"({"quant_method": "awq", "bits": 4, "ignore": "lm_head"})"),
                       doctest::Contains("quantization_config.ignore: expected a list of module "
                                         "names"),
                       Error);
}

TEST_CASE("quantization_config: the published configs of AWQ, fp8 and MXFP4 checkpoints") {
  using kvplan::test::SourcePath;
  // hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4: group 128, zeros.
  const HfImport awq =
      ImportHfConfigFile(SourcePath("tests/data/hf/meta-llama-3.1-70b-instruct-awq-int4.json"));
  REQUIRE(awq.spec.quantization);
  CHECK(awq.spec.quantization->format == "int4");
  CHECK(awq.spec.quantization->group_size == 128);
  // Qwen/Qwen3-8B-FP8: 128 x 128 fp8 blocks.
  const HfImport fp8 = ImportHfConfigFile(SourcePath("tests/data/hf/qwen3-8b-fp8.json"));
  REQUIRE(fp8.spec.quantization);
  CHECK(fp8.spec.quantization->block == 128);
  // openai/gpt-oss-20b: MXFP4 experts; its modules_to_not_convert (attention,
  // router, embedding, lm_head) are what kvplan keeps 16-bit anyway.
  const HfImport oss = ImportHfConfigFile(SourcePath("tests/data/hf/gpt-oss-20b.json"));
  REQUIRE(oss.spec.quantization);
  CHECK(oss.spec.quantization->parts == std::vector<std::string>{"experts"});
}

}  // namespace kvplan
