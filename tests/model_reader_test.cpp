#include <doctest/doctest.h>

#include "spec/model_reader.h"
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

std::string With(const std::string& extra) { return std::string(kGood) + extra; }

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
  CHECK(ErrorOf(Replace(kGood, "kv_heads: 2", "kv_heads: 3")) ==
        "m.yaml:6:11: kv_heads: 3 does not divide query_heads 8");
  CHECK(ErrorOf(Replace(kGood, "layers: 4", "layers: 0")) == "m.yaml:3:9: layers: must be positive, got 0");
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

TEST_CASE("layer groups must add up and be well formed") {
  CHECK(ErrorOf(With("layer_groups:\n  - kind: full\n    layers: 3\n")) ==
        "m.yaml:12:3: layer_groups: the groups hold 3 layers but layers is 4");
  CHECK(ErrorOf(With("layer_groups:\n  - kind: sliding\n    layers: 4\n")) ==
        "m.yaml:12:5: window: a sliding group needs a positive window");
  CHECK(ErrorOf(With("layer_groups:\n  - kind: full\n    layers: 4\n    window: 8\n")) ==
        "m.yaml:12:5: window: only sliding and chunked groups take a window");
  CHECK(ErrorOf(With("layer_groups:\n  - kind: slidin\n    layers: 4\n")) ==
        "m.yaml:12:11: kind: unknown layer kind 'slidin' (known: full, sliding, chunked, mla, "
        "state, shared) (did you mean 'sliding'?)");
  CHECK(ErrorOf(With("layer_groups:\n  - kind: full\n    layers: 2\n    every: 2\n    offset: 1\n"
                     "  - kind: sliding\n    layers: 3\n    window: 16\n")) ==
        "m.yaml:12:3: layer_groups: the groups hold 5 layers but layers is 4");
  CHECK(ErrorOf(With("layer_groups:\n  - kind: full\n    layers: 3\n    every: 2\n")) ==
        "m.yaml:12:5: layers: 3 but every 2 offset 0 selects 2 of the model's 4 layers");
  CHECK(ErrorOf(With("layer_groups:\n  - kind: full\n    layers: 2\n  - kind: state\n    "
                     "layers: 2\n")) ==
        "m.yaml:14:5: state_bytes: a state group needs state_bytes > 0");
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
