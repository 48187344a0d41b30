// The per-sequence state of Mamba, Mamba-2, Gated DeltaNet and lightning
// layers, from the model's shapes: each form's bytes against the arithmetic
// from its config written out, and tensor parallelism's split.
#include "spec/state_shape.h"

#include <doctest/doctest.h>

#include <functional>

#include "spec/catalog.h"
#include "spec/model_reader.h"
#include "util/error.h"

using namespace kvplan;

namespace {

const ModelSpec& Catalog(const std::string& name) {
  for (const ModelSpec& m : CatalogModels()) {
    if (m.name == name) return m;
  }
  FAIL("no catalog model " << name);
  throw;
}

const LayerGroup& StateGroup(const ModelSpec& m) {
  for (const LayerGroup& g : m.groups) {
    if (g.kind == LayerKind::kState) return g;
  }
  FAIL("no state group in " << m.name);
  throw;
}

// granite-4.0-h-small's Mamba-2 shape (hidden 4096, 128 heads x 64, one
// group, d_state 128, conv 4; attention 32 q / 8 kv heads x 128).
ModelSpec GraniteShape() {
  return ParseModelYaml(
      "name: granite-shape\nsource: test\nlayers: 8\nhidden_size: 4096\nquery_heads: 32\n"
      "kv_heads: 8\nhead_dim: 128\nmax_context: 131072\nparams: 1000000\nweight_dtype: bf16\n"
      "mamba:\n  version: 2\n  heads: 128\n  head_dim: 64\n  groups: 1\n  d_state: 128\n"
      "  d_conv: 4\nlayer_groups:\n  - kind: full\n    at: [5]\n  - kind: state\n    layers: 7\n",
      "granite.yaml");
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("Gated DeltaNet: Qwen3-Next's conv window and 128 x 128 matrix per value head") {
  // config.json: linear_num_key_heads 16, linear_num_value_heads 32, linear_key_head_dim 128,
  // linear_value_head_dim 128, linear_conv_kernel_dim 4, bf16:
  //   conv (2 x 16 x 128 + 32 x 128) x (4 - 1) = 24,576; recurrent 32 x 128 x 128 = 524,288.
  const ModelSpec& m = Catalog("qwen3-next-80b-a3b-instruct");
  const LayerGroup& g = StateGroup(m);
  CHECK(g.state_form == StateForm::kGatedDeltaNet);
  const StateShape one = LayerState(m, g, 1);
  CHECK(one.conv_channels == 8192);
  CHECK(one.conv_window == 3);
  CHECK(one.recurrent_elements == 524'288);
  CHECK(one.Bytes() == (24'576 + 524'288) * 2);
  CHECK(g.state_bytes == 1'097'728);
  CHECK(one.Arithmetic() == "(8,192 x 3 conv + 524,288 recurrent) x 2 B");
  // tp 2: vLLM's gated_delta_net_state_shape splits the conv channels and
  // the value heads: 548,864 B, the page behind "Setting attention block
  // size to 544 tokens" (tests/plan/capacity_test.cpp).
  CHECK(LayerState(m, g, 2).Bytes() == 548'864);
  // 32 value heads do not split 3 ways.
  CHECK(ErrorOf([&] { LayerState(m, g, 3); }) ==
        "tensor parallel size 3 does not divide the 16 linear-attention key heads of "
        "qwen3-next-80b-a3b-instruct");
}

TEST_CASE("Gated DeltaNet: Qwen3.5 keeps its recurrent state in fp32 (mamba_ssm_dtype)") {
  // Qwen3.5-397B-A17B: conv (2 x 16 x 128 + 64 x 128) x 3 = 36,864 bf16 elements, recurrent
  // 64 x 128 x 128 = 1,048,576 fp32 elements.
  const ModelSpec& m = Catalog("qwen3.5-397b-a17b");
  const LayerGroup& g = StateGroup(m);
  CHECK(g.state_dtype_bytes == 4);
  const StateShape s = LayerState(m, g, 1);
  CHECK(s.Bytes() == 36'864 * 2 + 1'048'576 * 4);
  CHECK(s.Arithmetic() == "12,288 x 3 conv x 2 B + 1,048,576 recurrent x 4 B");
}

TEST_CASE("Mamba-2: the conv runs over x, B and C; the SSM keeps head_dim x d_state per head") {
  // Nemotron-H-8B: 128 heads x 64, 8 groups, d_state 128, conv 4:
  //   conv (8192 + 2 x 8 x 128) x 3 = 30,720 x 2 B; ssm 128 x 64 x 128 = 1,048,576 x 4 B (its
  //   state_dtype fp32).
  const ModelSpec& n = Catalog("nemotron-h-8b-base-8k");
  CHECK(LayerState(n, StateGroup(n), 1).Bytes() == 30'720 * 2 + 1'048'576 * 4);
  CHECK(StateGroup(n).state_bytes == 4'255'744);
  // tp 4 divides the 8 groups: everything splits 4 ways.
  CHECK(LayerState(n, StateGroup(n), 4).Bytes() == (30'720 * 2 + 1'048'576 * 4) / 4);
  // tp 16 divides the heads but not the 8 groups, which vLLM refuses (it replicates one group
  // only).
  CHECK(ErrorOf([&] { LayerState(n, StateGroup(n), 16); }) ==
        "tensor parallel size 16 does not divide the 8 Mamba-2 groups of nemotron-h-8b-base-8k "
        "(only a single group is replicated across ranks)");
  // One group (granite-4.0-h) is replicated to one per rank under tp 4
  // (extra_groups_for_head_shards): conv (8192 + 2 x 4 x 128) / 4 channels.
  const ModelSpec gr = GraniteShape();
  CHECK(LayerState(gr, StateGroup(gr), 1).Bytes() == 2'147'840);  // (8448 x 3 + 1,048,576) x 2
  const StateShape t4 = LayerState(gr, StateGroup(gr), 4);
  CHECK(t4.conv_channels == (8192 + 2 * 4 * 128) / 4);
  CHECK(t4.recurrent_elements == 32 * 64 * 128);
}

TEST_CASE("llama.cpp keeps Mamba-2 state in f32: Falcon-H1-1.5B's published RS buffer") {
  // https://github.com/GeniePod/genie-claw/issues/410, Falcon-H1-1.5B on CUDA:
  // "RS buffer size = 72.98 MiB ( 1 cells, 24 layers, R 0.98 + S 72.00 )".
  // Falcon-H1-1.5B (transformers' FalconH1 table): 24 layers, hidden 2048, 48 Mamba heads x
  // 64, d_state 256, one group, conv 4. R = (3072 + 2 x 256) x 3 x 4 B x 24 layers, S = 48 x
  // 64 x 256 x 4 B x 24 layers.
  const ModelSpec m = ParseModelYaml(
      "name: falcon-h1-1.5b-shape\nsource: test\nlayers: 24\nhidden_size: 2048\n"
      "query_heads: 8\nkv_heads: 2\nhead_dim: 128\nmax_context: 131072\nparams: 1000000\n"
      "weight_dtype: bf16\nmamba:\n  version: 2\n  heads: 48\n  head_dim: 64\n  groups: 1\n"
      "  d_state: 256\n  d_conv: 4\nlayer_groups:\n  - kind: full\n    layers: 24\n"
      "  - kind: state\n    layers: 24\n    parallel: true\n",
      "falcon-h1.yaml");
  const StateShape f32 = LayerState(m, StateGroup(m), 1, StateDtypes{4, 4});
  const double mib = 1024.0 * 1024.0;
  CHECK(static_cast<double>(f32.ConvElements() * 4 * 24) / mib ==
        doctest::Approx(0.98).epsilon(0.005));
  CHECK(f32.recurrent_elements * 4 * 24 == 72ull * 1024 * 1024);
  // The model's own dtype (vLLM's "auto"): bf16, half of it.
  CHECK(LayerState(m, StateGroup(m), 1).Bytes() * 2 == f32.Bytes());
}

TEST_CASE("lightning attention: MiniMax-M1 keeps one 128 x 128 matrix per head") {
  const ModelSpec& m = Catalog("minimax-m1-80k");
  const StateShape s = LayerState(m, StateGroup(m), 1);
  CHECK(s.form == StateForm::kLightning);
  CHECK(s.conv_channels == 0);
  CHECK(s.Bytes() == 64ull * 128 * 128 * 2);
  CHECK(LayerState(m, StateGroup(m), 8).Bytes() == 8ull * 128 * 128 * 2);
}

TEST_CASE("a state group without shapes keeps its written bytes, split across ranks") {
  const ModelSpec m = ParseModelYaml(
      "name: given\nsource: test\nlayers: 2\nhidden_size: 256\nquery_heads: 4\nkv_heads: 2\n"
      "head_dim: 64\nmax_context: 4096\nparams: 1000\nweight_dtype: bf16\nlayer_groups:\n"
      "  - kind: full\n    layers: 1\n    every: 2\n  - kind: state\n    layers: 1\n"
      "    state_bytes: 1001\n",
      "given.yaml");
  const StateShape s = LayerState(m, StateGroup(m), 2, StateDtypes{4, 4});
  CHECK(s.form == StateForm::kGiven);
  CHECK(s.Bytes() == 501);  // ceil(1001 / 2); an engine's dtypes cannot re-type it
  CHECK(s.Arithmetic() == "501 B (state_bytes)");
}
