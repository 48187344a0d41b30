#include "spec/model_reader.h"

#include <doctest/doctest.h>

#include "spec/state_shape.h"
#include "util/error.h"

using namespace kvplan;

namespace {

const char* kGood = R"(name: tiny
source: https://example.org/config.json
layers: 4
hidden_size: 256
query_heads: 8
kv_heads: 2
head_dim: 32
max_context: 2048
params: 1000000
weight_dtype: bf16
)";

std::string With(const std::string& extra) {
  return std::string(kGood) + extra;
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

std::string ErrorOf(const std::string& yaml) {
  try {
    ParseModelYaml(yaml, "m.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a minimal spec reads and defaults to one full-attention group") {
  ModelSpec m = ParseModelYaml(kGood, "m.yaml");
  CHECK(m.name == "tiny");
  CHECK(m.groups.size() == 1);
  CHECK(m.groups[0].kind == LayerKind::kFull);
  CHECK(m.groups[0].layers == 4);
  CHECK(m.v_head_dim == 32);
  CHECK(m.AttentionKind() == "GQA");
}

TEST_CASE("model spec errors name file, line, column and field") {
  CHECK(ErrorOf("name: [unclosed\n") ==
        "m.yaml:2:1: malformed YAML: end of sequence flow not found");
  CHECK(ErrorOf(Replace(kGood, "kv_heads: 2\n", "")) ==
        "m.yaml:1:1: model spec: missing required field 'kv_heads'");
  CHECK(ErrorOf(Replace(kGood, "kv_heads: 2\n", "kv_heads:\n")) ==
        "m.yaml:6:1: kv_heads: no value (the field is required)");
  CHECK(ErrorOf(With("moe:\n  experts: 8\n  experts_per_token: 2\n  intermediate_size: 64\n"
                     "  offset: -1\n")) == "m.yaml:15:11: offset: must be 0 or more, got -1");
  CHECK(ErrorOf(Replace(kGood, "kv_heads: 2", "kv_heads: 3")) ==
        "m.yaml:6:11: kv_heads: 3 does not divide query_heads 8");
  CHECK(ErrorOf(Replace(kGood, "layers: 4", "layers: 0")) ==
        "m.yaml:3:9: layers: must be positive, got 0");
  CHECK(ErrorOf(Replace(kGood, "layers: 4", "layers: -4")) ==
        "m.yaml:3:9: layers: must be positive, got -4");
  CHECK(ErrorOf(Replace(kGood, "layers: 4", "layers: 4.5")) ==
        "m.yaml:3:9: layers: expected a whole number, got '4.5'");
  CHECK(ErrorOf(Replace(kGood, "layers: 4", "layers: 99999999999999999999")) ==
        "m.yaml:3:9: layers: 99999999999999999999 does not fit in 64 bits");
  CHECK(ErrorOf(Replace(kGood, "kv_heads: 2", "kv_head: 2")) ==
        "m.yaml:6:1: kv_head: unknown field in model spec (did you mean 'kv_heads'?)");
  CHECK(ErrorOf(With("layers: 5\n")) == "m.yaml:11:1: layers: duplicate key");
  CHECK(ErrorOf(Replace(kGood, "weight_dtype: bf16", "weight_dtype: bf17")) ==
        "m.yaml:10:15: weight_dtype: unknown weight dtype 'bf17' (known: fp32, fp16, bf16, fp8, "
        "int8, int4, nvfp4, mxfp4) (did you mean 'bf16'?)");
  CHECK(ErrorOf("") == "m.yaml: empty document");
  CHECK(ErrorOf("- a\n- b\n") == "m.yaml:1:1: model spec: expected a map of fields");
  CHECK(ErrorOf(Replace(kGood, "kv_heads: 2", "kv_heads: 16")) ==
        "m.yaml:6:11: kv_heads: 16 is more than query_heads 8");
}

TEST_CASE("a missing required field is named, not blamed on a valid field read after it") {
  // v_head_dim and q_lora_rank are fields, not typos of head_dim and kv_lora_rank.
  CHECK(ErrorOf(Replace(kGood, "head_dim: 32\n", "v_head_dim: 32\n")) ==
        "m.yaml:1:1: model spec: missing required field 'head_dim'");
  const std::string mla = With(
      "mla:\n  q_lora_rank: 1536\n  qk_rope_head_dim: 64\n  qk_nope_head_dim: 128\n"
      "  v_head_dim: 128\n");
  CHECK(ErrorOf(mla) == "m.yaml:12:3: mla: missing required field 'kv_lora_rank'");
  // A typo of the missing field is still pointed at.
  CHECK(ErrorOf(Replace(mla, "q_lora_rank", "kv_lora_rnk")) ==
        "m.yaml:12:3: kv_lora_rnk: unknown field in mla (did you mean 'kv_lora_rank'?)");
}

TEST_CASE("a name or hf_repo with a control character is refused at the field") {
  CHECK(ErrorOf(Replace(kGood, "name: tiny", "name: \"a\\nb\"")) ==
        "m.yaml:1:7: name: has a control character (U+000A); a name is one line of printable text");
  CHECK(ErrorOf(Replace(kGood, "name: tiny", "name: \"a\\tb\"")) ==
        "m.yaml:1:7: name: has a control character (U+0009); a name is one line of printable text");
  CHECK(ErrorOf(With("hf_repo: \"org/a\\u0001\"\n")) ==
        "m.yaml:11:10: hf_repo: has a control character (U+0001); a name is one line of printable "
        "text");
  CHECK(
      ParseModelYaml(Replace(kGood, "name: tiny", "name: \"Tiny model (8B) ü\""), "m.yaml").name ==
      "Tiny model (8B) ü");
}

TEST_CASE("layer groups must add up and be well formed") {
  CHECK(ErrorOf(With("layer_groups:\n  - kind: full\n    layers: 3\n")) ==
        "m.yaml:12:3: layer_groups: the groups hold 3 layers but layers is 4");
  CHECK(ErrorOf(With("layer_groups:\n  - kind: sliding\n    layers: 4\n")) ==
        "m.yaml:12:5: window: a sliding group needs a positive window");
  CHECK(ErrorOf(With("layer_groups:\n  - kind: full\n    layers: 4\n    window: 8\n")) ==
        "m.yaml:12:5: window: only sliding and chunked groups take a window");
  CHECK(ErrorOf(With("layer_groups:\n  - kind: slidin\n    layers: 4\n")) ==
        "m.yaml:12:11: kind: unknown layer kind 'slidin' (known: full, sliding, chunked, mla, "
        "state, shared, none) (did you mean 'sliding'?)");
  CHECK(ErrorOf(With("layer_groups:\n  - kind: full\n    layers: 2\n    every: 2\n    offset: 1\n"
                     "  - kind: sliding\n    layers: 3\n    window: 16\n")) ==
        "m.yaml:12:3: layer_groups: the groups hold 5 layers but layers is 4");
  CHECK(ErrorOf(With("layer_groups:\n  - kind: full\n    layers: 3\n    every: 2\n")) ==
        "m.yaml:12:5: layers: 3 but every 2 offset 0 selects 2 of the model's 4 layers");
  CHECK(ErrorOf(With("layer_groups:\n  - kind: full\n    layers: 2\n  - kind: state\n    "
                     "layers: 2\n")) ==
        "m.yaml:14:5: state_bytes: a state group needs state_bytes > 0, or the model's mamba or "
        "linear_attention block to compute it from");
  // Refused at the field, not later as an overflow naming no file.
  CHECK(ErrorOf(With("layer_groups:\n  - kind: full\n    layers: 2\n  - kind: state\n    "
                     "layers: 2\n    state_bytes: 18446744073709551615\n")) ==
        "m.yaml:16:18: state_bytes: 18446744073709551615 is over kvplan's limit of 4294967296 "
        "(see docs/reliability.md)");
  CHECK(ParseModelYaml(With("layer_groups:\n  - kind: full\n    layers: 2\n    every: 2\n"
                            "  - kind: state\n    layers: 2\n    state_bytes: 4294967296\n"),
                       "m.yaml")
            .groups[1]
            .state_bytes == ModelLimits::kMaxStateBytes);
  CHECK(ErrorOf(With("layer_groups:\n  - kind: mla\n    layers: 4\n")) ==
        "m.yaml:12:5: kind: an mla group needs the model's mla block");
  CHECK(ErrorOf(With("layer_groups:\n  - kind: full\n    layers: 2\n  - kind: shared\n    "
                     "layers: 2\n")) ==
        "m.yaml:12:3: layer_groups: 2 groups have no 'every'; at most one may take the remaining "
        "layers");
  CHECK(ErrorOf(With("layer_groups:\n  - kind: full\n    layers: 2\n  - kind: shared\n    "
                     "layers: 2\n    every: 2\n    offset: 1\n")) == "(no error)");

  // A periodic group plus the rest: layers 1 and 3 full, 0 and 2 sliding.
  ModelSpec m = ParseModelYaml(
      With("layer_groups:\n  - kind: full\n    layers: 2\n    every: 2\n    offset: 1\n"
           "  - kind: sliding\n    layers: 2\n    window: 16\n"),
      "m.yaml");
  std::vector<size_t> map = m.LayerToGroup();
  CHECK(map == std::vector<size_t>{1, 0, 1, 0});
}

TEST_CASE("a stated attention kind is cross-checked against the heads") {
  CHECK(ErrorOf(With("attention: gqa\n")) == "(no error)");
  CHECK(ErrorOf(With("attention: mha\n")) ==
        "m.yaml:11:12: attention: says mha but the heads make it GQA (8 query heads, 2 KV heads)");
}

TEST_CASE("a quantization block reads the checkpoint's format, and its errors point at the field") {
  const std::string shapes = "vocab_size: 1000\nintermediate_size: 512\n";  // lines 11-12
  const auto q = [&](const std::string& block) { return With(shapes + "quantization:\n" + block); };
  ModelSpec m = ParseModelYaml(q("  format: fp8\n  block: 128\n"), "m.yaml");
  REQUIRE(m.quantization);
  CHECK(m.quantization->format == "fp8");
  CHECK(m.quantization->block == 128);
  CHECK(m.quantization->parts.empty());
  CHECK(m.weight_dtype == "bf16");  // the activations' type is unchanged
  CHECK_FALSE(ParseModelYaml(kGood, "m.yaml").quantization);
  const std::string moe =
      "vocab_size: 1000\n"
      "moe:\n  experts: 4\n  experts_per_token: 2\n  intermediate_size: 64\n";
  ModelSpec e =
      ParseModelYaml(With(moe + "quantization:\n  format: mxfp4\n  parts: [experts]\n"), "m.yaml");
  REQUIRE(e.quantization);
  CHECK(e.quantization->parts == std::vector<std::string>{"experts"});
  // A plain format needs no shapes: it applies to `params` spread over the layers.
  CHECK(ParseModelYaml(With("quantization:\n  format: int4\n"), "m.yaml").quantization);

  CHECK(ErrorOf(q("  format: bf16\n")) ==
        "m.yaml:14:11: format: bf16 is not a quantized format (fp8, int8, int4, nvfp4, mxfp4); an "
        "unquantized checkpoint has no quantization block, its weight_dtype says it all");
  CHECK(ErrorOf(q("  format: fp9\n")) ==
        "m.yaml:14:11: format: unknown weight dtype 'fp9' (known: fp32, fp16, bf16, fp8, int8, "
        "int4, nvfp4, mxfp4) (did you mean 'fp8'?)");
  CHECK(ErrorOf(q("  block: 128\n")) ==
        "m.yaml:14:3: quantization: missing required field 'format'");
  CHECK(ErrorOf(q("  format: mxfp4\n  block: 128\n")) ==
        "m.yaml:15:10: block: only fp8 weights take a block (weight_block_size), not mxfp4");
  CHECK(ErrorOf(q("  format: fp8\n  block: 0\n")) ==
        "m.yaml:15:10: block: must be positive, got 0");
  CHECK(ErrorOf(q("  format: fp8\n  block: 99999999\n")) ==
        "m.yaml:15:10: block: 99999999 is over kvplan's limit of 16777216");
  CHECK(ErrorOf(q("  format: fp8\n  group_size: 64\n")) ==
        "m.yaml:15:15: group_size: only int4 weights take a group_size, not fp8");
  CHECK(ErrorOf(q("  format: mxfp4\n  parts: [experts]\n")) ==
        "m.yaml:15:11: parts: the model has no experts");
  CHECK(ErrorOf(q("  format: mxfp4\n  parts: [expert]\n")) ==
        "m.yaml:15:11: parts: unknown part 'expert' (known: attention, mlp, experts, "
        "shared_experts, mamba) (did you mean 'experts', 'shared_experts'?)");
  CHECK(ErrorOf(q("  format: int4\n  parts: [mlp, mlp]\n")) ==
        "m.yaml:15:16: parts: 'mlp' is listed twice");
  CHECK(ErrorOf(q("  format: int4\n  parts: []\n")) ==
        "m.yaml:15:10: parts: expected a non-empty list, e.g. [experts]");
  CHECK(ErrorOf(q("  format: int4\n  sizes: 1\n")) ==
        "m.yaml:15:3: sizes: unknown field in quantization");
  CHECK(ErrorOf(With("quantization: fp8\n")) ==
        "m.yaml:11:15: quantization: expected a map of fields");
  // Every layer MoE: no dense MLP to quantize.
  CHECK(ErrorOf(With(moe + "quantization:\n  format: int4\n  parts: [mlp]\n")) ==
        "m.yaml:18:11: parts: the model has no dense mlp layers (every layer is MoE: experts, "
        "shared_experts)");
  // Blocks and parts need real matrices, not `params` spread over the layers.
  CHECK(ErrorOf(With("quantization:\n  format: fp8\n  block: 128\n")) ==
        "m.yaml:12:3: quantization: block needs the weight shapes (vocab_size, and "
        "intermediate_size for dense MLP layers); without them the weights are `params` spread "
        "over the layers");
  CHECK(ErrorOf(With("vocab_size: 1000\nquantization:\n  format: int4\n  parts: [attention]\n"))
            .find("m.yaml:13:3: quantization: parts needs the weight shapes") == 0);
}

TEST_CASE("layer groups: explicit layers, MLP-only layers and state beside attention") {
  // Nemotron-H style: attention at layer 1, MLP only at 0 and 3, Mamba-2 on the rest (2).
  const std::string mamba2 =
      "mamba:\n  version: 2\n  heads: 8\n  head_dim: 32\n  groups: 2\n  d_state: 16\n"
      "  d_conv: 4\n";
  const ModelSpec s =
      ParseModelYaml(With(mamba2 + "layer_groups:\n  - kind: full\n    at: [1]\n  - kind: none\n"
                                   "    at: [0, 3]\n  - kind: state\n    layers: 1\n"),
                     "m.yaml");
  REQUIRE(s.groups.size() == 3);
  CHECK(s.groups[0].layers == 1);  // from the list
  CHECK(s.groups[1].kind == LayerKind::kNone);
  CHECK(s.LayerToGroup() == std::vector<size_t>{1, 0, 2, 1});
  CHECK(s.GroupLayers(1) == std::vector<uint64_t>{0, 3});
  // ((8 x 32 + 2 x 2 x 16) x 3 conv + 8 x 32 x 16 SSM) x 2 B.
  CHECK(s.groups[2].state_form == StateForm::kMamba2);
  CHECK(s.groups[2].state_bytes == ((256 + 64) * 3 + 4096) * 2);

  // Falcon-H1 style: every layer attends and keeps a Mamba-2 state beside it.
  const ModelSpec f =
      ParseModelYaml(With(mamba2 + "layer_groups:\n  - kind: full\n    layers: 4\n  - kind: state\n"
                                   "    layers: 4\n    parallel: true\n    state_dtype: fp32\n"),
                     "m.yaml");
  CHECK(f.LayerToGroup() == std::vector<size_t>{0, 0, 0, 0});
  CHECK(f.GroupLayers(1) == std::vector<uint64_t>{0, 1, 2, 3});
  CHECK(f.groups[1].state_bytes == (256 + 64) * 3 * 2 + 4096 * 4);  // fp32 SSM, bf16 conv

  const auto groups = [&](const std::string& g) { return ErrorOf(With(mamba2 + g)); };
  CHECK(groups("layer_groups:\n  - kind: full\n    at: [1, 1]\n  - kind: none\n    layers: 3\n") ==
        "m.yaml:20:13: at: layer 1 is listed twice (list the layers once each, ascending)");
  CHECK(groups("layer_groups:\n  - kind: full\n    at: [2, 1]\n  - kind: none\n    layers: 2\n") ==
        "m.yaml:20:13: at: layer 1 comes after a higher layer (list the layers once each, "
        "ascending)");
  CHECK(groups("layer_groups:\n  - kind: full\n    at: [7]\n  - kind: none\n    layers: 3\n") ==
        "m.yaml:19:5: at: layer 7 is past the model's 4 layers");
  CHECK(groups("layer_groups:\n  - kind: full\n    at: [1]\n    every: 2\n") ==
        "m.yaml:20:9: at: a group takes 'at' or 'every', not both");
  CHECK(groups("layer_groups:\n  - kind: full\n    at: [1, 2]\n  - kind: none\n    at: [2]\n"
               "  - kind: state\n    layers: 1\n") ==
        "m.yaml:21:5: at: layer 2 is already in group 1 (full)");
  CHECK(groups("layer_groups:\n  - kind: full\n    at: [1]\n    layers: 2\n  - kind: none\n"
               "    layers: 3\n") ==
        "m.yaml:19:5: layers: 2 but at selects 1 of the model's 4 layers");
  CHECK(groups("layer_groups:\n  - kind: none\n    layers: 4\n  - kind: state\n    layers: 4\n"
               "    parallel: true\n") ==
        "m.yaml:21:5: parallel: layer 0 is a none layer; a parallel state runs beside attention "
        "only");
  CHECK(groups("layer_groups:\n  - kind: full\n    layers: 4\n    parallel: true\n") ==
        "m.yaml:19:5: parallel: only a state group runs beside attention in the same layers");
  CHECK(groups("layer_groups:\n  - kind: state\n    layers: 4\n    state_bytes: 10000\n") ==
        "m.yaml:19:5: state_bytes: 10000 but the mamba block's shapes give 10112 = (320 x 3 conv "
        "+ 4,096 recurrent) x 2 B");
  CHECK(groups("layer_groups:\n  - kind: full\n    layers: 4\n    state_dtype: fp32\n") ==
        "m.yaml:21:18: state_dtype: only state groups take state_dtype");
  CHECK(groups("layer_groups:\n  - kind: state\n    layers: 4\n    state_dtype: int8\n") ==
        "m.yaml:21:18: state_dtype: int8 is not a state dtype (fp32, fp16, bf16)");
}

TEST_CASE("state_dtype needs a mamba or linear_attention block to re-type") {
  CHECK(ErrorOf(With("layer_groups:\n  - kind: full\n    every: 2\n    layers: 2\n"
                     "  - kind: state\n    layers: 2\n    state_bytes: 1000\n"
                     "    state_dtype: fp32\n")) ==
        "m.yaml:15:5: state_dtype: a state given as bare state_bytes has no recurrent part to "
        "re-type (add the model's mamba or linear_attention block)");
}

TEST_CASE("mamba version 2 and linear_attention blocks: their fields and mistakes") {
  CHECK(ErrorOf(With("mamba:\n  version: 3\n  d_state: 16\n  d_conv: 4\n  expand: 2\n")) ==
        "m.yaml:12:12: version: 3 is not a Mamba version kvplan knows (1: Mamba, 2: Mamba-2)");
  CHECK(ErrorOf(With("mamba:\n  d_state: 16\n  d_conv: 4\n  expand: 2\n  heads: 8\n")) ==
        "m.yaml:15:10: heads: only Mamba-2 (version: 2) takes heads");
  CHECK(ErrorOf(With("mamba:\n  version: 2\n  heads: 8\n  head_dim: 32\n  groups: 3\n"
                     "  d_state: 16\n  d_conv: 4\n")) ==
        "m.yaml:15:11: groups: 3 does not divide the 8 heads");
  CHECK(ErrorOf(With("mamba:\n  version: 2\n  heads: 8\n  head_dim: 32\n  groups: 1\n"
                     "  d_state: 16\n  d_conv: 4\n  dt_rank: 16\n")) ==
        "m.yaml:18:12: dt_rank: Mamba-2 has no dt_rank (one dt per head)");
  const std::string gdn =
      "linear_attention:\n  kind: gated_deltanet\n  key_heads: 2\n  value_heads: 4\n"
      "  key_head_dim: 32\n  value_head_dim: 32\n  conv_kernel: 4\n";
  const ModelSpec s = ParseModelYaml(
      With(gdn + "layer_groups:\n  - kind: full\n    every: 4\n    offset: 3\n    layers: 1\n"
                 "  - kind: state\n    layers: 3\n"),
      "m.yaml");
  // conv (2 x 2 x 32 + 4 x 32) x 3 + recurrent 4 x 32 x 32, x 2 B.
  CHECK(s.groups[1].state_bytes == ((128 + 128) * 3 + 4096) * 2);
  CHECK(ErrorOf(With(Replace(gdn, "gated_deltanet", "gated_delta")))
            .rfind("m.yaml:12:9: kind: unknown linear attention 'gated_delta' (known: "
                   "gated_deltanet, lightning)",
                   0) == 0);
  CHECK(ErrorOf(With(Replace(gdn, "value_heads: 4", "value_heads: 3"))) ==
        "m.yaml:14:16: value_heads: 3 is not a multiple of the 2 key heads");
  CHECK(ErrorOf(With(Replace(gdn, "gated_deltanet", "lightning"))) ==
        "m.yaml:17:16: conv_kernel: lightning attention has no convolution");
  CHECK(ErrorOf(With(gdn + "mamba:\n  d_state: 16\n  d_conv: 4\n  expand: 2\n")) ==
        "m.yaml:12:3: linear_attention: a model has a mamba block or a linear_attention block, "
        "not both");
}

TEST_CASE("mla: DeepSeek-V3.2's indexer keys come all three or not at all") {
  const std::string mla =
      "mla:\n  kv_lora_rank: 64\n  qk_rope_head_dim: 32\n  qk_nope_head_dim: 32\n"
      "  v_head_dim: 32\n";
  const ModelSpec s =
      ParseModelYaml(With(mla + "  index_heads: 4\n  index_head_dim: 128\n  index_topk: 256\n"
                                "layer_groups:\n  - kind: mla\n    layers: 4\n"),
                     "m.yaml");
  CHECK(s.mla->index_topk == 256);
  CHECK(ErrorOf(With(mla + "  index_heads: 4\n")).find("index_head_dim") != std::string::npos);
}

TEST_CASE("k_eq_v: an attention group whose values come from the key projection") {
  // Gemma 4's global layers (tests/plan/weights_test.cpp counts the weights they lose).
  ModelSpec m = ParseModelYaml(
      With("layer_groups:\n  - kind: full\n    layers: 2\n    every: 2\n    offset: 1\n"
           "    k_eq_v: true\n  - kind: sliding\n    layers: 2\n    window: 16\n"),
      "m.yaml");
  CHECK(m.groups[0].k_eq_v);
  CHECK_FALSE(m.groups[1].k_eq_v);
  CHECK(ErrorOf(With("layer_groups:\n  - kind: full\n    layers: 2\n  - kind: state\n    "
                     "layers: 2\n    state_bytes: 100\n    k_eq_v: true\n")) ==
        "m.yaml:17:13: k_eq_v: only full, sliding and chunked groups take k_eq_v (their values "
        "come from the key projection)");
}
