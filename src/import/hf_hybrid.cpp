// The hybrid architectures import-hf knows: Qwen3-Next and Qwen3.5 (Gated
// DeltaNet), Nemotron-H, granite-4.0-h and Falcon-H1 (Mamba-2), MiniMax-M1
// (lightning attention): their state mixer's shapes and which layers hold
// attention, state or nothing, from each family's keys.
#include <fmt/format.h>

#include <utility>

#include "import/hf_draft.h"
#include "import/layer_sets.h"

namespace kvplan {
namespace {

// The layers of each kind, as layer groups (periodic where they can be).
void SetGroups(std::vector<LayerSet> sets, uint64_t layers, Draft& d, const std::string& why) {
  LayerSetsToGroups(std::move(sets), layers, d.s.groups);
  d.why["layer_groups"] = why;
}

// Mamba-2 from the family's key names: heads, head_dim, groups, d_state, conv.
void ReadMamba2(const Config& c, const Arch& a, Draft& d, const char* heads, const char* head_dim,
                const char* groups, const char* d_state, const char* conv) {
  MambaSpec mb;
  mb.version = 2;
  mb.heads = c.Req(heads, a.name);
  mb.head_dim = c.Req(head_dim, a.name);
  mb.groups = c.Req(groups, a.name);
  mb.d_state = c.Req(d_state, a.name);
  mb.d_conv = c.Req(conv, a.name);
  if (mb.heads == 0 || mb.head_dim == 0 || mb.groups == 0 || mb.d_state == 0 || mb.d_conv == 0 ||
      mb.heads % mb.groups != 0) {
    Fail(
        "{}: {} {}, {} {}, {} {}, {} {}, {} {}: a Mamba-2 mixer needs positive sizes and groups "
        "that divide the heads",
        c.File(), heads, mb.heads, head_dim, mb.head_dim, groups, mb.groups, d_state, mb.d_state,
        conv, mb.d_conv);
  }
  d.s.mamba = mb;
  d.why["mamba"] =
      fmt::format("Mamba-2: {}, {}, {}, {}, {}", heads, head_dim, groups, d_state, conv);
}

// The SSM state's dtype where the config names one (Qwen3.5's
// mamba_ssm_dtype, Nemotron-H's mamba_ssm_cache_dtype): fp32 is kept.
// Nemotron-H without one is fp32 too: vLLM's NemotronH model config then
// takes float32, the only dtype NVIDIA knows to be accurate.
void ReadStateDtype(const Config& c, Family family, Draft& d) {
  std::string why;
  for (const char* key : {"mamba_ssm_dtype", "mamba_ssm_cache_dtype"}) {
    if (c.S(key).value_or("") == "float32") {
      why = c.Name(key) + " float32: the recurrent state is kept in fp32";
    }
  }
  if (why.empty() && family == Family::kNemotronH && !c.Has("mamba_ssm_cache_dtype")) {
    why =
        "no mamba_ssm_cache_dtype: the recurrent state is kept in fp32 (vLLM's NemotronH default)";
  }
  if (why.empty()) return;
  for (LayerGroup& g : d.s.groups) {
    if (g.kind == LayerKind::kState) g.state_dtype_bytes = 4;
  }
  d.header.push_back(why);
}

// Qwen3-Next, Qwen3.5: layer_types ("linear_attention" / "full_attention"),
// else every full_attention_interval-th layer is full.
void QwenNextGroups(const Config& c, const Arch& a, Draft& d) {
  LinearAttentionSpec la;
  la.kind = "gated_deltanet";
  la.key_heads = c.Req("linear_num_key_heads", a.name);
  la.value_heads = c.Req("linear_num_value_heads", a.name);
  la.key_head_dim = c.Req("linear_key_head_dim", a.name);
  la.value_head_dim = c.Req("linear_value_head_dim", a.name);
  la.conv_kernel = c.U("linear_conv_kernel_dim").value_or(4);
  d.s.linear_attention = la;
  d.why["linear_attention"] =
      "Gated DeltaNet: linear_num_key_heads, linear_num_value_heads, linear_key_head_dim, "
      "linear_value_head_dim, linear_conv_kernel_dim";
  const uint64_t n = d.s.layers;
  std::vector<LayerSet> sets = {{LayerKind::kFull, 0, 0, {}}, {LayerKind::kState, 0, 0, {}}};
  JsonNode lt = c.Get("layer_types");
  std::string why;
  if (!IsAbsent(lt)) {
    if (!lt.IsSequence() || lt.size() != n) {
      Fail("{}{}: expected a list of {} layer types (num_hidden_layers)",
           PosOf(lt, c.File()).Prefix(), c.Name("layer_types"), n);
    }
    for (uint64_t i = 0; i < n; ++i) {
      const std::string t = lt[i].IsScalar() ? lt[i].Scalar() : "";
      if (t != "full_attention" && t != "linear_attention") {
        Fail(
            "{}{}[{}]: layer type '{}' has no cache form in kvplan (known here: full_attention, "
            "linear_attention)",
            PosOf(lt[i], c.File()).Prefix(), c.Name("layer_types"), i, t);
      }
      sets[t == "full_attention" ? 0 : 1].layers.push_back(i);
    }
    why = "from " + c.Name("layer_types");
  } else {
    const uint64_t every = c.U("full_attention_interval").value_or(4);
    if (every == 0) Fail("{}: full_attention_interval must be at least 1", c.File());
    for (uint64_t i = 0; i < n; ++i) sets[(i + 1) % every == 0 ? 0 : 1].layers.push_back(i);
    why = fmt::format("layer i is full attention iff (i + 1) % full_attention_interval {} == 0",
                      every);
  }
  SetGroups(sets, n, d, why + "; the others keep a Gated DeltaNet state");
}

// Nemotron-H: hybrid_override_pattern, one character per layer: M Mamba-2,
// * attention, - MLP only, E MoE (no cache either).
void NemotronHGroups(const Config& c, const Arch& a, Draft& d) {
  ReadMamba2(c, a, d, "mamba_num_heads", "mamba_head_dim", "n_groups", "ssm_state_size",
             "conv_kernel");
  const std::string p = c.S("hybrid_override_pattern").value_or("");
  if (p.size() != d.s.layers) {
    Fail("{}: hybrid_override_pattern has {} characters for {} layers (num_hidden_layers)",
         c.File(), p.size(), d.s.layers);
  }
  std::vector<LayerSet> sets = {
      {LayerKind::kFull, 0, 0, {}}, {LayerKind::kNone, 0, 0, {}}, {LayerKind::kState, 0, 0, {}}};
  for (uint64_t i = 0; i < p.size(); ++i) {
    switch (p[i]) {
      case '*':
        sets[0].layers.push_back(i);
        break;
      case '-':
      case 'E':
        sets[1].layers.push_back(i);
        break;
      case 'M':
        sets[2].layers.push_back(i);
        break;
      default:
        Fail(
            "{}: hybrid_override_pattern[{}] is '{}', a block kvplan has no cache form for "
            "(known: M Mamba-2, * attention, - MLP, E MoE)",
            c.File(), i, std::string(1, p[i]));
    }
  }
  SetGroups(sets, d.s.layers, d,
            "from hybrid_override_pattern: * attention, M Mamba-2 state, - and E no cache");
  d.s.mixer_mlp = false;  // each character is one block: the MLP is a layer of its own
}

// granite-4.0-h: layer_types "mamba" / "attention".
void GraniteGroups(const Config& c, const Arch& a, Draft& d) {
  ReadMamba2(c, a, d, "mamba_n_heads", "mamba_d_head", "mamba_n_groups", "mamba_d_state",
             "mamba_d_conv");
  JsonNode lt = c.Get("layer_types");
  if (!lt.IsSequence() || lt.size() != d.s.layers) {
    Fail("{}: {} needs layer_types, a list of {} \"mamba\" or \"attention\"", c.File(), a.name,
         d.s.layers);
  }
  std::vector<LayerSet> sets = {{LayerKind::kFull, 0, 0, {}}, {LayerKind::kState, 0, 0, {}}};
  for (uint64_t i = 0; i < d.s.layers; ++i) {
    const std::string t = lt[i].IsScalar() ? lt[i].Scalar() : "";
    if (t != "attention" && t != "mamba") {
      Fail("{}{}[{}]: layer type '{}' has no cache form in kvplan (known here: attention, mamba)",
           PosOf(lt[i], c.File()).Prefix(), c.Name("layer_types"), i, t);
    }
    sets[t == "attention" ? 0 : 1].layers.push_back(i);
  }
  SetGroups(sets, d.s.layers, d, "from layer_types: attention, or a Mamba-2 state");
}

// Falcon-H1: attention and a Mamba-2 mixer side by side in every layer.
void FalconH1Groups(const Config& c, const Arch& a, Draft& d) {
  ReadMamba2(c, a, d, "mamba_n_heads", "mamba_d_head", "mamba_n_groups", "mamba_d_state",
             "mamba_d_conv");
  if (std::optional<uint64_t> ssm = c.U("mamba_d_ssm");
      ssm && *ssm != d.s.mamba->heads * d.s.mamba->head_dim) {
    Fail("{}: mamba_d_ssm {} is not mamba_n_heads x mamba_d_head = {}", c.File(), *ssm,
         d.s.mamba->heads * d.s.mamba->head_dim);
  }
  LayerGroup attn;
  attn.layers = d.s.layers;
  LayerGroup state;
  state.kind = LayerKind::kState;
  state.layers = d.s.layers;
  state.parallel = true;
  d.s.groups = {attn, state};
  d.why["layer_groups"] = "every layer: attention, and a Mamba-2 state beside it";
}

// MiniMax-M1 / Text-01: attn_type_list, 1 softmax attention, 0 lightning.
void MiniMaxGroups(const Config& c, const Arch& a, Draft& d) {
  LinearAttentionSpec la;
  la.kind = "lightning";
  la.key_heads = la.value_heads = d.s.query_heads;
  la.key_head_dim = la.value_head_dim = d.s.head_dim;
  d.s.linear_attention = la;
  d.why["linear_attention"] = "lightning attention: num_attention_heads x head_dim";
  JsonNode list = c.Get("attn_type_list");
  if (!list.IsSequence() || list.size() != d.s.layers) {
    Fail("{}: {} needs attn_type_list, {} entries of 0 (lightning) or 1 (softmax)", c.File(),
         a.name, d.s.layers);
  }
  std::vector<LayerSet> sets = {{LayerKind::kFull, 0, 0, {}}, {LayerKind::kState, 0, 0, {}}};
  for (uint64_t i = 0; i < d.s.layers; ++i) {
    const std::string t = list[i].IsScalar() ? list[i].Scalar() : "";
    if (t != "0" && t != "1") {
      Fail("{}{}[{}]: '{}' is neither 0 (lightning) nor 1 (softmax attention)",
           PosOf(list[i], c.File()).Prefix(), c.Name("attn_type_list"), i, t);
    }
    sets[t == "1" ? 0 : 1].layers.push_back(i);
  }
  SetGroups(sets, d.s.layers, d, "from attn_type_list: 1 softmax attention, 0 lightning state");
}

}  // namespace

bool HybridGroups(const Config& c, const Arch& a, Draft& d) {
  switch (a.family) {
    case Family::kQwenNext:
      QwenNextGroups(c, a, d);
      break;
    case Family::kNemotronH:
      NemotronHGroups(c, a, d);
      break;
    case Family::kGraniteHybrid:
      GraniteGroups(c, a, d);
      break;
    case Family::kFalconH1:
      FalconH1Groups(c, a, d);
      break;
    case Family::kMiniMax:
      MiniMaxGroups(c, a, d);
      break;
    default:
      return false;
  }
  ReadStateDtype(c, a.family, d);
  d.header.push_back(
      "params counts the state mixers by their projections, convolution, per-head vectors and "
      "norm; family extras (gated queries, shared-expert gates, muP) are not counted, so it is "
      "approximate (Qwen3-Next-80B: 0.13% under its exact count)");
  return true;
}

}  // namespace kvplan
