// The mixture-of-experts block of an imported model: each family's keys
// for the routed experts, their width, shared experts and which layers are
// MoE (every layer, every N-th, after the first dense ones).
#include <fmt/format.h>

#include "import/hf_draft.h"

namespace kvplan {
namespace {

// Llama-4's MoE layers: moe_layers as listed, else every
// interleave_moe_layer_step-th layer (transformers: range(step - 1, L,
// step)); routed experts and one shared expert, all intermediate_size wide.
// The dense layers' MLP is intermediate_size_mlp wide. Returns false when
// no layer is MoE.
bool ReadLlama4Moe(const Config& c, Draft& d, MoeSpec& m) {
  ModelSpec& s = d.s;
  const std::string file = c.File();
  m.experts = c.Req("num_local_experts", "Llama4ForCausalLM");
  m.experts_per_token = c.U("num_experts_per_tok").value_or(1);
  m.intermediate_size = s.intermediate_size;
  m.shared_experts = 1;
  const uint64_t step = c.U("interleave_moe_layer_step").value_or(1);
  if (step == 0) {
    Fail("{}{}: 0 is not a layer period (expected 1 or more)",
         PosOf(c.Get("interleave_moe_layer_step"), file).Prefix(),
         c.Name("interleave_moe_layer_step"));
  }
  std::vector<uint64_t> moe;
  JsonNode listed = c.Get("moe_layers");
  if (!IsAbsent(listed)) {
    if (!listed.IsSequence()) {
      Fail("{}{}: expected a list of layer indices", PosOf(listed, file).Prefix(),
           c.Name("moe_layers"));
    }
    for (size_t i = 0; i < listed.size(); ++i) {
      const uint64_t l = ScalarU64(listed[i], file, c.Name("moe_layers"), true);
      if (l >= s.layers || (!moe.empty() && l <= moe.back())) {
        Fail("{}{}[{}]: {} is not a layer after {} below {} (num_hidden_layers)",
             PosOf(listed[i], file).Prefix(), c.Name("moe_layers"), i, l,
             moe.empty() ? std::string("none") : std::to_string(moe.back()), s.layers);
      }
      moe.push_back(l);
    }
  } else {
    for (uint64_t i = step - 1; i < s.layers; i += step) moe.push_back(i);
  }
  if (moe.empty()) {
    s.intermediate_size = c.U("intermediate_size_mlp").value_or(16384);
    d.why["intermediate_size"] = "moe_layers is empty: every layer is dense, intermediate_size_mlp";
    return false;
  }
  // The spec's MoE layers are every period-th from offset: the list must be so.
  m.period = moe.size() > 1 ? moe[1] - moe[0] : s.layers;
  m.offset = moe[0];
  for (size_t i = 0; i < moe.size(); ++i) {
    if (moe[i] != m.offset + i * m.period) {
      Fail("{}{}: the MoE layers are not every N-th layer, which a kvplan spec cannot describe",
           PosOf(listed, file).Prefix(), c.Name("moe_layers"));
    }
  }
  if (m.offset + moe.size() * m.period < s.layers) {
    Fail("{}{}: the MoE layers stop before the last layer, which a kvplan spec cannot describe",
         PosOf(listed, file).Prefix(), c.Name("moe_layers"));
  }
  if (moe.size() < s.layers) {
    s.intermediate_size = c.U("intermediate_size_mlp").value_or(16384);
    d.why["intermediate_size"] = fmt::format(
        "{}: the dense layers' MLP ({} of {} layers are MoE)",
        c.U("intermediate_size_mlp") ? c.Name("intermediate_size_mlp")
                                     : std::string("no intermediate_size_mlp: class default"),
        moe.size(), s.layers);
  } else {
    d.why["intermediate_size"] = "every layer is MoE: the experts' width (intermediate_size)";
  }
  d.why["moe"] = fmt::format(
      "num_local_experts, num_experts_per_tok; one shared expert; MoE layers {} ({})",
      IsAbsent(listed) ? "every interleave_moe_layer_step-th" : "from moe_layers",
      m.period == 1 ? std::string("all") : fmt::format("i % {} == {}", m.period, m.offset));
  return true;
}

}  // namespace

void ReadMoe(const Config& c, const Arch& a, Draft& d) {
  ModelSpec& s = d.s;
  MoeSpec m;
  std::string an = a.name;
  switch (a.family) {
    case Family::kLlama:  // Mixtral
    case Family::kMiniMax:
    case Family::kGraniteHybrid:
      m.experts = c.Req("num_local_experts", an);
      m.experts_per_token = c.Req("num_experts_per_tok", an);
      m.intermediate_size = s.intermediate_size;
      d.why["moe"] = "num_local_experts, num_experts_per_tok; experts use intermediate_size";
      break;
    case Family::kQwen:
    case Family::kQwenNext: {
      m.experts = c.Req("num_experts", an);
      m.experts_per_token = c.Req("num_experts_per_tok", an);
      m.intermediate_size = c.Req("moe_intermediate_size", an);
      m.period = c.U("decoder_sparse_step").value_or(1);
      m.offset = m.period - 1;  // transformers: (i + 1) % decoder_sparse_step == 0
      if (c.U("shared_expert_intermediate_size").value_or(0) > 0) {
        m.shared_experts = 1;
        d.header.push_back(fmt::format(
            "Qwen2-MoE shared expert is {} wide (shared_expert_intermediate_size); the spec's "
            "shared_experts count assumes the routed width, so params are approximate",
            *c.U("shared_expert_intermediate_size")));
      }
      JsonNode mlp_only = c.Get("mlp_only_layers");
      if (mlp_only.IsDefined() && mlp_only.IsSequence() && mlp_only.size() > 0) {
        d.header.push_back(
            fmt::format("mlp_only_layers lists {} dense layers; the spec cannot "
                        "name them, params treat them as MoE",
                        mlp_only.size()));
      }
      d.why["moe"] = "num_experts, num_experts_per_tok, moe_intermediate_size, decoder_sparse_step";
      break;
    }
    case Family::kDeepseek:
      m.experts = c.Req("n_routed_experts", an);
      m.experts_per_token = c.Req("num_experts_per_tok", an);
      m.intermediate_size = c.Req("moe_intermediate_size", an);
      m.shared_experts = c.U("n_shared_experts").value_or(0);
      m.dense_layers = c.U("first_k_dense_replace").value_or(0);
      m.period = c.U("moe_layer_freq").value_or(1);
      d.why["moe"] =
          "n_routed_experts, num_experts_per_tok, moe_intermediate_size, "
          "n_shared_experts, first_k_dense_replace, moe_layer_freq";
      break;
    case Family::kJamba:
      m.experts = c.U("num_experts").value_or(16);
      if (m.experts <= 1) return;
      m.experts_per_token = c.U("num_experts_per_tok").value_or(2);
      m.intermediate_size = s.intermediate_size;
      m.period = c.U("expert_layer_period").value_or(2);
      m.offset = c.U("expert_layer_offset").value_or(1);
      d.why["moe"] =
          "num_experts, num_experts_per_tok, expert_layer_period/offset; experts use "
          "intermediate_size";
      break;
    case Family::kLlama4:
      if (!ReadLlama4Moe(c, d, m)) return;
      break;
    case Family::kGemma4: {
      // enable_moe_block: routed experts beside the dense MLP of every layer,
      // which counts as intermediate_size / moe_intermediate_size shared
      // experts of the experts' width (the same weights).
      if (!c.B("enable_moe_block").value_or(false)) return;
      m.experts = c.Req("num_experts", an);
      m.experts_per_token = c.Req("top_k_experts", an);
      m.intermediate_size = c.Req("moe_intermediate_size", an);
      if (m.intermediate_size == 0 || s.intermediate_size % m.intermediate_size != 0) {
        Fail(
            "{}: the dense MLP's intermediate_size {} is not a whole number of experts of "
            "moe_intermediate_size {}, which a kvplan spec cannot describe",
            c.File(), s.intermediate_size, m.intermediate_size);
      }
      m.shared_experts = s.intermediate_size / m.intermediate_size;
      d.why["moe"] = fmt::format(
          "enable_moe_block: num_experts, top_k_experts, moe_intermediate_size; the dense MLP "
          "(intermediate_size {}) beside them as {} shared experts of that width",
          s.intermediate_size, m.shared_experts);
      break;
    }
    case Family::kGptOss:
      m.experts = c.Req("num_local_experts", an);
      m.experts_per_token =
          c.U("num_experts_per_tok").value_or(c.U("experts_per_token").value_or(4));
      m.intermediate_size = s.intermediate_size;
      d.why["moe"] = "num_local_experts, num_experts_per_tok; experts use intermediate_size";
      break;
    default:
      return;
  }
  // A period of 0 is not a model (transformers would divide by it); refuse it
  // before anything computes i % period (found by fuzz_hf_import).
  if (m.period == 0)
    Fail("{}: the MoE layer period ({}) must be at least 1", c.File(), d.why["moe"]);
  s.moe = m;
}

}  // namespace kvplan
