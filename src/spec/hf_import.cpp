#include "spec/hf_import.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "spec/model_reader.h"
#include "spec/params_estimate.h"
#include "spec/yaml_reader.h"
#include "util/checked.h"

namespace kvplan {
namespace {

enum class Family { kLlama, kQwen, kGemma2, kGemma3, kDeepseek, kFalcon, kGpt2, kJamba, kGptOss };

// One supported architecture: how to read it, and the defaults its
// transformers config class applies to keys a config.json leaves out.
struct Arch {
  const char* name;        // config "architectures"[0]
  const char* model_type;  // config "model_type"
  Family family;
  bool moe;
  uint64_t default_max_context;  // max_position_embeddings default
  bool default_tie;              // tie_word_embeddings default
  // The transformers config class's defaults where the key is absent:
  uint64_t default_kv_heads;  // num_key_value_heads (0: None, which means the query heads)
  uint64_t default_head_dim;  // head_dim (0: none, hidden_size / heads)
};

// Class defaults as in transformers' configuration_*.py (read at v5-era
// commit 008e5743; the v4 files agree): Mistral's 8 KV heads, Qwen2's 32,
// Gemma's 4 with a 256-wide head, and so on. Falcon has its own keys.
constexpr Arch kArchs[] = {
    {"LlamaForCausalLM", "llama", Family::kLlama, false, 2048, false, 0, 0},
    {"MistralForCausalLM", "mistral", Family::kLlama, false, 131072, false, 8, 0},
    {"MixtralForCausalLM", "mixtral", Family::kLlama, true, 131072, false, 8, 0},
    {"Phi3ForCausalLM", "phi3", Family::kLlama, false, 4096, false, 0, 0},
    {"Qwen2ForCausalLM", "qwen2", Family::kQwen, false, 32768, false, 32, 0},
    {"Qwen2MoeForCausalLM", "qwen2_moe", Family::kQwen, true, 32768, false, 16, 0},
    {"Qwen3ForCausalLM", "qwen3", Family::kQwen, false, 32768, false, 32, 128},
    {"Qwen3MoeForCausalLM", "qwen3_moe", Family::kQwen, true, 32768, false, 4, 0},
    {"Gemma2ForCausalLM", "gemma2", Family::kGemma2, false, 8192, true, 4, 256},
    {"Gemma3ForCausalLM", "gemma3_text", Family::kGemma3, false, 131072, true, 4, 256},
    {"Gemma3ForConditionalGeneration", "gemma3", Family::kGemma3, false, 131072, true, 4, 256},
    {"DeepseekV2ForCausalLM", "deepseek_v2", Family::kDeepseek, true, 2048, false, 0, 0},
    {"DeepseekV3ForCausalLM", "deepseek_v3", Family::kDeepseek, true, 4096, false, 128, 0},
    {"FalconForCausalLM", "falcon", Family::kFalcon, false, 2048, true, 0, 0},
    {"RWForCausalLM", "RefinedWebModel", Family::kFalcon, false, 2048, true, 0, 0},
    {"GPT2LMHeadModel", "gpt2", Family::kGpt2, false, 1024, true, 0, 0},
    {"JambaForCausalLM", "jamba", Family::kJamba, true, 262144, false, 8, 0},
    {"GptOssForCausalLM", "gpt_oss", Family::kGptOss, true, 131072, false, 8, 64},
};

bool IsAbsent(const YAML::Node& n) { return !n.IsDefined() || n.IsNull(); }

// map[key] without yaml-cpp's "zombie" nodes (which throw when inspected):
// an Undefined node when `map` is not a map or has no such key.
YAML::Node Lookup(const YAML::Node& map, const std::string& key) {
  if (map.IsMap()) {
    for (const auto& it : map) {
      if (it.first.IsScalar() && it.first.Scalar() == key) return it.second;
    }
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

// Read access to one config map (the root, or text_config for multimodal
// wrappers) with typed getters whose errors name file:line:col and the key.
class Config {
 public:
  Config(YAML::Node node, YAML::Node root, std::string file, std::string prefix)
      : node_(std::move(node)), root_(std::move(root)), file_(std::move(file)),
        prefix_(std::move(prefix)) {}

  YAML::Node Get(const std::string& key) const {
    // A key text_config leaves out may sit at the root; a null one is null.
    YAML::Node v = Lookup(node_, key);
    if (!v.IsDefined() && !prefix_.empty()) v = Lookup(root_, key);
    return v;
  }
  bool Has(const std::string& key) const { return !IsAbsent(Get(key)); }
  std::string Name(const std::string& key) const {
    return (!prefix_.empty() && Lookup(node_, key).IsDefined()) ? prefix_ + key : key;
  }

  std::optional<uint64_t> U(const std::string& key) const {
    YAML::Node v = Get(key);
    if (IsAbsent(v)) return std::nullopt;
    return ScalarU64(v, file_, Name(key), true);
  }
  uint64_t Req(const std::string& key, std::string_view arch) const {
    std::optional<uint64_t> v = U(key);
    if (!v) Fail("{}: {} config has no '{}'", file_, arch, key);
    return *v;
  }
  std::optional<bool> B(const std::string& key) const {
    YAML::Node v = Get(key);
    if (IsAbsent(v)) return std::nullopt;
    if (v.IsScalar() && (v.Scalar() == "true" || v.Scalar() == "false")) {
      return v.Scalar() == "true";
    }
    Fail("{}{}: expected true or false", PosOf(v, file_).Prefix(), Name(key));
  }
  std::optional<std::string> S(const std::string& key) const {
    YAML::Node v = Get(key);
    if (IsAbsent(v)) return std::nullopt;
    if (!v.IsScalar()) Fail("{}{}: expected a text value", PosOf(v, file_).Prefix(), Name(key));
    return v.Scalar();
  }
  const std::string& File() const { return file_; }

 private:
  YAML::Node node_, root_;
  std::string file_, prefix_;
};

// The spec being built: values plus a comment per field saying where each
// number came from, so the output documents its own assumptions.
struct Draft {
  ModelSpec s;
  std::map<std::string, std::string> why;  // field -> comment
  std::vector<std::string> header;         // notes for the file header
};

std::string WeightDtype(const Config& c, Draft& d) {
  std::optional<std::string> t = c.S("torch_dtype");
  std::string key = "torch_dtype";
  if (!t) {
    t = c.S("dtype");
    key = "dtype";
  }
  if (!t) {
    d.why["weight_dtype"] = "no torch_dtype in the config: transformers loads float32";
    return "fp32";
  }
  static const std::map<std::string, std::string> kMap = {
      {"float32", "fp32"}, {"float16", "fp16"}, {"bfloat16", "bf16"}, {"float8_e4m3fn", "fp8"}};
  auto it = kMap.find(*t);
  if (it == kMap.end()) {
    Fail("{}{}: unsupported torch_dtype '{}' (known: float32, float16, bfloat16, float8_e4m3fn)",
         PosOf(c.Get(key), c.File()).Prefix(), c.Name(key), *t);
  }
  d.why["weight_dtype"] = fmt::format("{}: {}", c.Name(key), *t);
  return it->second;
}

// quantization_config, where kvplan has its format: fp8 (per tensor or
// square blocks), mxfp4 (gpt-oss: attention left out), AWQ/GPTQ 4-bit.
// Anything else keeps a comment saying the weights are smaller than
// weight_dtype implies. Call after the MoE block is read.
void ReadQuantization(const Config& c, Draft& d) {
  if (!c.Has("quantization_config")) return;
  YAML::Node qc = c.Get("quantization_config");
  const std::string file = c.File();
  auto scalar = [&](const char* key) -> std::optional<std::string> {
    YAML::Node v = Lookup(qc, key);
    if (IsAbsent(v)) return std::nullopt;
    if (!v.IsScalar())
      Fail("{}quantization_config.{}: expected a value", PosOf(v, file).Prefix(), key);
    return v.Scalar();
  };
  auto number = [&](const char* key) -> std::optional<uint64_t> {
    YAML::Node v = Lookup(qc, key);
    if (IsAbsent(v)) return std::nullopt;
    return ScalarU64(v, file, std::string("quantization_config.") + key);
  };
  const std::optional<std::string> method = scalar("quant_method");
  auto not_modelled = [&](const std::string& why) {
    d.why["weight_dtype"] += fmt::format(
        " -- but quantization_config says {}: the published "
        "weights are smaller than this dtype implies ({}; "
        "size them with --weight-dtype)",
        method.value_or("quantized"), why);
  };
  QuantSpec q;
  std::string why = fmt::format("quant_method {}", method.value_or(""));
  if (method == "fp8") {
    q.format = "fp8";
    if (std::optional<std::string> f = scalar("fmt"); f && *f != "e4m3") {
      return not_modelled("fmt " + *f + ", not e4m3");
    }
    YAML::Node block = Lookup(qc, "weight_block_size");
    if (!IsAbsent(block)) {
      const std::string at = "quantization_config.weight_block_size";
      if (!block.IsSequence() || block.size() != 2) {
        Fail("{}{}: expected two numbers, e.g. [128, 128]", PosOf(block, file).Prefix(), at);
      }
      const uint64_t rows = ScalarU64(block[0], file, at);
      const uint64_t cols = ScalarU64(block[1], file, at);
      if (rows != cols)
        return not_modelled("blocks of " + std::to_string(rows) + " x " + std::to_string(cols) +
                            " are not square");
      if (rows > ModelLimits::kMaxWidth) {
        Fail("{}{}: {} is over kvplan's limit of {}", PosOf(block, file).Prefix(), at, rows,
             ModelLimits::kMaxWidth);
      }
      q.block = rows;
      d.why["quantization.block"] = fmt::format("weight_block_size [{0}, {0}]", rows);
    }
  } else if (method == "mxfp4") {
    // vLLM's Mxfp4Config quantizes the fused MoE experts only; every other
    // linear layer stays in the model's dtype (gpt-oss also lists them in
    // modules_to_not_convert).
    if (!d.s.moe) return not_modelled("mxfp4 quantizes MoE experts only, and this model has none");
    q.format = "mxfp4";
    q.parts = {"experts"};
    d.why["quantization.parts"] = "mxfp4 quantizes the MoE experts only";
  } else if (method == "awq" || method == "gptq") {
    const std::optional<uint64_t> bits = number("bits");
    if (bits != 4) return not_modelled(bits ? std::to_string(*bits) + "-bit" : "no bits");
    q.format = "int4";
    if (std::optional<std::string> g = scalar("group_size"); g && !g->empty() && (*g)[0] == '-') {
      return not_modelled("group_size " + *g + ": scales per output channel");
    }
    q.group_size = number("group_size").value_or(128);
    if (q.group_size > ModelLimits::kMaxWidth) {
      Fail("{}quantization_config.group_size: {} is over kvplan's limit of {}",
           PosOf(Lookup(qc, "group_size"), file).Prefix(), q.group_size, ModelLimits::kMaxWidth);
    }
    d.why["quantization.group_size"] = "group_size";
  } else {
    return not_modelled("a method kvplan does not size");
  }
  if ((q.block != 0 || !q.parts.empty()) && !d.s.HasWeightShapes()) {
    return not_modelled("without intermediate_size its blocks and parts cannot be sized");
  }
  d.why["quantization.format"] = why;
  d.why["weight_dtype"] += " (activations; the published weights are quantized, below)";
  d.s.quantization = q;
}

// Layers listed by kind, turned into layer groups: every kind but one must be
// periodic (layer i in the group iff i % every == offset); the remaining one
// takes the rest. Returns false when the pattern cannot be written that way.
struct KindSet {
  LayerKind kind;
  uint64_t window;
  std::vector<uint64_t> layers;
};

bool Periodic(const std::vector<uint64_t>& s, uint64_t total, uint64_t& every, uint64_t& offset) {
  if (s.empty()) return false;
  every = s.size() == 1 ? total : s[1] - s[0];
  offset = s[0];
  if (every == 0 || offset >= every) return false;
  std::vector<uint64_t> want;
  for (uint64_t i = offset; i < total; i += every) want.push_back(i);
  return want == s;
}

bool GroupsFromSets(std::vector<KindSet> sets, uint64_t total, std::vector<LayerGroup>& out) {
  if (sets.size() == 1) {
    LayerGroup g;
    g.kind = sets[0].kind;
    g.layers = total;
    g.window = sets[0].window;
    out = {g};
    return true;
  }
  // The last kind seen takes the rest: gpt-oss [sliding, full, ...] becomes
  // "sliding every 2 offset 0, full the rest", as models/*.yaml write it.
  for (size_t rest = sets.size(); rest-- > 0;) {
    std::vector<LayerGroup> groups;
    bool ok = true;
    for (size_t k = 0; k < sets.size() && ok; ++k) {
      if (k == rest) continue;
      LayerGroup g;
      g.kind = sets[k].kind;
      g.window = sets[k].window;
      g.layers = sets[k].layers.size();
      ok = Periodic(sets[k].layers, total, g.every, g.offset);
      groups.push_back(g);
    }
    if (!ok) continue;
    LayerGroup r;
    r.kind = sets[rest].kind;
    r.window = sets[rest].window;
    r.layers = sets[rest].layers.size();
    groups.push_back(r);
    out = groups;
    return true;
  }
  return false;
}

std::string DescribeGroups(const std::vector<LayerGroup>& groups) {
  std::string s;
  for (const LayerGroup& g : groups) {
    if (!s.empty()) s += ", ";
    s += fmt::format("{} {}", g.layers, LayerKindName(g.kind));
    if (g.every) s += fmt::format(" (i % {} == {})", g.every, g.offset);
  }
  return s;
}

// layer_types: ["sliding_attention", "full_attention", ...] (Gemma 2/3,
// gpt-oss, newer Qwen configs).
bool GroupsFromLayerTypes(const Config& c, uint64_t layers, uint64_t window, Draft& d) {
  YAML::Node lt = c.Get("layer_types");
  if (IsAbsent(lt)) return false;
  SourcePos at = PosOf(lt, c.File());
  if (!lt.IsSequence() || lt.size() != layers) {
    Fail("{}{}: expected a list of {} layer types (num_hidden_layers)", at.Prefix(),
         c.Name("layer_types"), layers);
  }
  std::vector<KindSet> sets;
  for (uint64_t i = 0; i < layers; ++i) {
    std::string t = lt[i].IsScalar() ? lt[i].Scalar() : "";
    LayerKind kind;
    uint64_t w = 0;
    if (t == "full_attention") {
      kind = LayerKind::kFull;
    } else if (t == "sliding_attention") {
      kind = LayerKind::kSliding;
      w = window;
      if (w == 0) Fail("{}: layer_types has sliding layers but sliding_window is not set", c.File());
    } else {
      Fail("{}{}[{}]: unsupported layer type '{}' (known: full_attention, sliding_attention)",
           PosOf(lt[i], c.File()).Prefix(), c.Name("layer_types"), i, t);
    }
    auto it = std::find_if(sets.begin(), sets.end(),
                           [&](const KindSet& k) { return k.kind == kind; });
    if (it == sets.end()) {
      sets.push_back({kind, w, {}});
      it = sets.end() - 1;
    }
    it->layers.push_back(i);
  }
  if (!GroupsFromSets(sets, layers, d.s.groups)) {
    Fail("{}{}: the layer pattern is not periodic, which a kvplan spec cannot describe",
         at.Prefix(), c.Name("layer_types"));
  }
  d.why["layer_groups"] = "from " + c.Name("layer_types") + ": " + DescribeGroups(d.s.groups);
  return true;
}

void SingleGroup(Draft& d, LayerKind kind, uint64_t window, const std::string& why) {
  LayerGroup g;
  g.kind = kind;
  g.layers = d.s.layers;
  g.window = window;
  d.s.groups = {g};
  d.why["layer_groups"] = why;
}

void AttentionGroups(const Config& c, const Arch& a, Draft& d) {
  ModelSpec& s = d.s;
  std::optional<uint64_t> window = c.U("sliding_window");
  switch (a.family) {
    case Family::kLlama:
      if (GroupsFromLayerTypes(c, s.layers, window.value_or(0), d)) return;
      if (window && *window > 0 && *window < s.max_context) {
        SingleGroup(d, LayerKind::kSliding, *window,
                    fmt::format("sliding_window: {} on every layer", *window));
      } else if (window) {
        SingleGroup(d, LayerKind::kFull, 0,
                    fmt::format("sliding_window {} >= max_position_embeddings: full attention",
                                *window));
      } else {
        SingleGroup(d, LayerKind::kFull, 0, "no sliding_window: full attention on every layer");
      }
      return;
    case Family::kQwen: {
      if (GroupsFromLayerTypes(c, s.layers, window.value_or(0), d)) return;
      bool use = c.B("use_sliding_window").value_or(false);
      if (!use || !window) {
        SingleGroup(d, LayerKind::kFull, 0,
                    "use_sliding_window is false: full attention on every layer");
        return;
      }
      // transformers Qwen2: layer i slides iff i >= max_window_layers.
      uint64_t mwl = c.U("max_window_layers").value_or(28);
      if (mwl >= s.layers) {
        SingleGroup(d, LayerKind::kFull, 0,
                    fmt::format("max_window_layers {} >= layers: no layer slides", mwl));
      } else if (mwl == 0) {
        SingleGroup(d, LayerKind::kSliding, *window,
                    fmt::format("use_sliding_window, max_window_layers 0: every layer slides "
                                "over {}", *window));
      } else {
        Fail("{}: use_sliding_window with max_window_layers {} (layers {}+ slide) is a layer "
             "range, which a kvplan spec cannot describe; write the spec by hand",
             c.File(), mwl, mwl);
      }
      return;
    }
    case Family::kGemma2:
    case Family::kGemma3: {
      uint64_t w = window.value_or(4096);
      if (!window) d.header.push_back("sliding_window not in config: class default 4096");
      if (GroupsFromLayerTypes(c, s.layers, w, d)) return;
      uint64_t every = 2, offset = 1;  // Gemma 2: odd layers global
      std::string why = "Gemma 2 (no layer_types): even layers slide over " +
                        std::to_string(w) + ", odd layers are global";
      if (a.family == Family::kGemma3) {
        std::optional<uint64_t> p = c.U("sliding_window_pattern");
        if (p == uint64_t{0}) {
          // Every p-th layer is global: 0 names no layer (and would divide by zero).
          Fail("{}{}: 0 is not a layer period (expected 1 or more: every N-th layer is global)",
               PosOf(c.Get("sliding_window_pattern"), c.File()).Prefix(),
               c.Name("sliding_window_pattern"));
        }
        every = p.value_or(6);
        offset = every - 1;
        why = fmt::format("{}: layer i is global iff (i + 1) % {} == 0, the rest slide over {}",
                          p ? "sliding_window_pattern " + std::to_string(*p)
                            : std::string("no layer_types or sliding_window_pattern: class "
                                          "default 6"),
                          every, w);
      }
      std::vector<KindSet> sets = {{LayerKind::kFull, 0, {}}, {LayerKind::kSliding, w, {}}};
      for (uint64_t i = 0; i < s.layers; ++i) {
        sets[i % every == offset ? 0 : 1].layers.push_back(i);
      }
      if (sets[0].layers.empty()) sets.erase(sets.begin());
      if (sets.back().layers.empty()) sets.pop_back();
      GroupsFromSets(sets, s.layers, s.groups);
      d.why["layer_groups"] = why;
      return;
    }
    case Family::kGptOss:
      if (GroupsFromLayerTypes(c, s.layers, window.value_or(128), d)) return;
      Fail("{}: gpt-oss config has no layer_types; kvplan will not guess which layers slide",
           c.File());
    case Family::kDeepseek:
      SingleGroup(d, LayerKind::kMla, 0,
                  "MLA: kv_lora_rank + qk_rope_head_dim cached per token and layer");
      return;
    case Family::kFalcon:
    case Family::kGpt2:
      SingleGroup(d, LayerKind::kFull, 0, "full attention on every layer");
      return;
    case Family::kJamba: {
      uint64_t period = c.U("attn_layer_period").value_or(8);
      uint64_t offset = c.U("attn_layer_offset").value_or(4);
      if (offset >= period) Fail("{}: attn_layer_offset {} >= attn_layer_period {}", c.File(),
                                 offset, period);
      LayerGroup attn;
      attn.kind = LayerKind::kFull;
      attn.every = period;
      attn.offset = offset;
      for (uint64_t i = offset; i < s.layers; i += period) ++attn.layers;
      // Mamba state per sequence and layer, in the model dtype (vLLM's
      // MambaSpec): conv state d_inner x (d_conv - 1) + SSM state d_inner x d_state.
      uint64_t d_inner = CheckedMul(s.mamba->expand, s.hidden_size);
      uint64_t elems = CheckedAdd(CheckedMul(d_inner, s.mamba->d_conv - 1),
                                  CheckedMul(d_inner, s.mamba->d_state));
      uint64_t elem_bytes = s.weight_dtype == "fp32" ? 4 : 2;
      LayerGroup state;
      state.kind = LayerKind::kState;
      state.layers = s.layers - attn.layers;
      state.state_bytes = CheckedMul(elems, elem_bytes);
      s.groups = {attn};
      if (state.layers > 0) s.groups.push_back(state);
      d.why["layer_groups"] = fmt::format(
          "attention iff i % attn_layer_period {} == attn_layer_offset {}; Mamba layers hold "
          "(d_inner {} x (d_conv {} - 1) + d_inner x d_state {}) x {} B = {} B per sequence",
          period, offset, d_inner, s.mamba->d_conv, s.mamba->d_state, elem_bytes,
          state.state_bytes);
      return;
    }
  }
}

void ReadMoe(const Config& c, const Arch& a, Draft& d) {
  ModelSpec& s = d.s;
  MoeSpec m;
  std::string an = a.name;
  switch (a.family) {
    case Family::kLlama:  // Mixtral
      m.experts = c.Req("num_local_experts", an);
      m.experts_per_token = c.Req("num_experts_per_tok", an);
      m.intermediate_size = s.intermediate_size;
      d.why["moe"] = "num_local_experts, num_experts_per_tok; experts use intermediate_size";
      break;
    case Family::kQwen: {
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
      YAML::Node mlp_only = c.Get("mlp_only_layers");
      if (mlp_only.IsDefined() && mlp_only.IsSequence() && mlp_only.size() > 0) {
        d.header.push_back(fmt::format("mlp_only_layers lists {} dense layers; the spec cannot "
                                       "name them, params treat them as MoE", mlp_only.size()));
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
      d.why["moe"] = "n_routed_experts, num_experts_per_tok, moe_intermediate_size, "
                     "n_shared_experts, first_k_dense_replace, moe_layer_freq";
      break;
    case Family::kJamba:
      m.experts = c.U("num_experts").value_or(16);
      if (m.experts <= 1) return;
      m.experts_per_token = c.U("num_experts_per_tok").value_or(2);
      m.intermediate_size = s.intermediate_size;
      m.period = c.U("expert_layer_period").value_or(2);
      m.offset = c.U("expert_layer_offset").value_or(1);
      d.why["moe"] = "num_experts, num_experts_per_tok, expert_layer_period/offset; experts use "
                     "intermediate_size";
      break;
    case Family::kGptOss:
      m.experts = c.Req("num_local_experts", an);
      m.experts_per_token = c.U("num_experts_per_tok").value_or(c.U("experts_per_token").value_or(4));
      m.intermediate_size = s.intermediate_size;
      d.why["moe"] = "num_local_experts, num_experts_per_tok; experts use intermediate_size";
      break;
    default:
      return;
  }
  // A period of 0 is not a model (transformers would divide by it); refuse it
  // before anything computes i % period (found by fuzz_hf_import).
  if (m.period == 0) Fail("{}: the MoE layer period ({}) must be at least 1", c.File(), d.why["moe"]);
  s.moe = m;
}

const Arch& FindArch(const YAML::Node& root, const std::string& file) {
  std::string name, type;
  YAML::Node archs = Lookup(root, "architectures");
  if (archs.IsDefined() && archs.IsSequence() && archs.size() > 0 && archs[0].IsScalar()) {
    name = archs[0].Scalar();
  }
  if (YAML::Node t = Lookup(root, "model_type"); t.IsDefined() && t.IsScalar()) type = t.Scalar();
  for (const Arch& a : kArchs) {
    if (!name.empty() && name == a.name) return a;
  }
  if (name.empty()) {
    for (const Arch& a : kArchs) {
      if (type == a.model_type) return a;
    }
  }
  std::string list;
  for (const std::string& n : SupportedHfArchitectures()) list += (list.empty() ? "" : ", ") + n;
  std::string what = !name.empty()   ? "unsupported architecture '" + name + "'"
                     : !type.empty() ? "unsupported model_type '" + type + "'"
                                     : std::string("no architectures or model_type in the config");
  Fail(
      "{}: {}: kvplan will not guess its cache layout (supported: {}); write a spec YAML by "
      "hand (docs/model-spec.md)",
      file, what, list);
}

std::string DefaultName(const Config& c, const std::string& file) {
  std::optional<std::string> n = c.S("_name_or_path");
  std::string base;
  if (n && !n->empty()) {
    base = std::filesystem::path(*n).filename().string();
  } else {
    std::filesystem::path p(file);
    base = p.filename() == "config.json" && p.has_parent_path()
               ? std::filesystem::absolute(p).parent_path().filename().string()
               : p.stem().string();
  }
  std::string out;
  for (char ch : base) {
    unsigned char u = static_cast<unsigned char>(ch);
    out += std::isalnum(u) || ch == '.' || ch == '-' || ch == '_'
               ? static_cast<char>(std::tolower(u))
               : '-';
  }
  return out.empty() ? "imported-model" : out;
}

Draft Build(const YAML::Node& root, const std::string& file, const std::string& name) {
  if (!root.IsMap()) Fail("{}: expected a JSON object (a Hugging Face config.json)", file);
  const Arch& a = FindArch(root, file);
  YAML::Node text = Lookup(root, "text_config");
  if (!IsAbsent(text) && !text.IsMap()) {
    Fail("{}text_config: expected a map (the language model's settings)",
         PosOf(text, file).Prefix());
  }
  bool nested = text.IsDefined() && text.IsMap();
  if (a.family == Family::kGemma3 && std::string(a.name) == "Gemma3ForConditionalGeneration" &&
      !nested) {
    Fail("{}: Gemma3ForConditionalGeneration config has no text_config", file);
  }
  Config c(nested ? text : root, root, file, nested ? "text_config." : "");
  Draft d;
  ModelSpec& s = d.s;
  std::string an = a.name;
  s.architecture = a.name;
  s.name = name.empty() ? DefaultName(Config(root, root, file, ""), file) : name;
  std::optional<std::string> repo = Config(root, root, file, "").S("_name_or_path");
  if (repo && repo->find('/') != std::string::npos && repo->front() != '/' &&
      repo->front() != '.') {
    CheckNameChars(*repo, PosOf(Lookup(root, "_name_or_path"), file).Prefix(), "_name_or_path");
    s.hf_repo = *repo;
  }
  s.source = file;
  if (nested) d.header.push_back("language-model values read from text_config");

  // Layers, width and heads, under each family's key names.
  auto first = [&](std::initializer_list<const char*> keys, const char* field) -> uint64_t {
    for (const char* k : keys) {
      if (std::optional<uint64_t> v = c.U(k)) {
        d.why[field] = c.Name(k);
        return *v;
      }
    }
    Fail("{}: {} config has no '{}'", file, an, *keys.begin());
  };
  s.layers = first({"num_hidden_layers", "n_layer", "num_layers"}, "layers");
  s.hidden_size = first({"hidden_size", "n_embd"}, "hidden_size");
  if (a.family == Family::kGemma2 || a.family == Family::kGemma3) {
    // Small Gemma configs leave out what equals the class default (8 heads).
    const std::optional<uint64_t> heads = c.U("num_attention_heads");
    s.query_heads = heads.value_or(8);
    d.why["query_heads"] =
        heads ? c.Name("num_attention_heads")
              : fmt::format("no num_attention_heads: {} class default", a.model_type);
  } else {
    s.query_heads = first({"num_attention_heads", "n_head"}, "query_heads");
  }
  if (s.layers == 0 || s.hidden_size == 0 || s.query_heads == 0) {
    Fail("{}: layers, hidden size and attention heads must be positive", file);
  }
  // Checked before the per-layer loops below (layer patterns, the parameter
  // estimate) rather than only when the emitted spec is read back.
  if (s.layers > ModelLimits::kMaxLayers) {
    Fail("{}: {}: {} layers is over kvplan's limit of {} (see docs/reliability.md)", file,
         d.why["layers"], s.layers, ModelLimits::kMaxLayers);
  }

  // KV heads.
  if (a.family == Family::kFalcon) {
    bool new_arch = c.B("new_decoder_architecture").value_or(false) ||
                    c.S("model_type").value_or("") == "RefinedWeb";
    if (new_arch) {
      std::optional<uint64_t> kv = c.U("num_kv_heads");
      if (!kv) kv = c.U("n_head_kv");
      s.kv_heads = kv.value_or(s.query_heads);
      d.why["kv_heads"] = "new_decoder_architecture: num_kv_heads (n_head_kv)";
    } else if (c.B("multi_query").value_or(true)) {
      s.kv_heads = 1;
      d.why["kv_heads"] = "multi_query: true without new_decoder_architecture: one shared K/V "
                          "head (num_kv_heads is ignored in this mode)";
    } else {
      s.kv_heads = s.query_heads;
      d.why["kv_heads"] = "multi_query: false: one K/V head per query head (MHA)";
    }
  } else if (std::optional<uint64_t> kv = c.U("num_key_value_heads")) {
    s.kv_heads = *kv;
    d.why["kv_heads"] = c.Name("num_key_value_heads");
    if (a.family == Family::kDeepseek) {
      d.why["kv_heads"] += " as published (MLA: the cache is the latent, see mla)";
    }
  } else if (a.default_kv_heads != 0 && !c.Get("num_key_value_heads").IsDefined()) {
    s.kv_heads = a.default_kv_heads;
    d.why["kv_heads"] = fmt::format("no num_key_value_heads: {} class default", a.model_type);
    if (s.query_heads % s.kv_heads != 0) {
      // Named where the heads are (text_config.num_attention_heads for a
      // wrapped config), with the key to add beside them.
      const std::string heads = c.Name("num_attention_heads");
      const std::string kv_key =
          heads.substr(0, heads.size() - std::string_view("num_attention_heads").size()) +
          "num_key_value_heads";
      Fail(
          "{}{}: {} heads, and with no {} the {} class default of {} KV heads does not divide "
          "them; add {}",
          PosOf(c.Get("num_attention_heads"), file).Prefix(), heads, s.query_heads, kv_key,
          a.model_type, s.kv_heads, kv_key);
    }
  } else {
    // Absent where the class default is None, or null: the query heads.
    s.kv_heads = s.query_heads;
    d.why["kv_heads"] = fmt::format("{} num_key_value_heads: MHA, kv heads = query heads",
                                    c.Get("num_key_value_heads").IsDefined() ? "null" : "no");
  }

  // Head width: an explicit head_dim wins over hidden / heads.
  if (a.family == Family::kDeepseek) {
    MlaSpec m;
    m.kv_lora_rank = c.Req("kv_lora_rank", an);
    m.qk_rope_head_dim = c.Req("qk_rope_head_dim", an);
    m.qk_nope_head_dim = c.Req("qk_nope_head_dim", an);
    m.q_lora_rank = c.U("q_lora_rank").value_or(0);
    m.v_head_dim = c.Req("v_head_dim", an);
    s.mla = m;
    s.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
    s.v_head_dim = m.v_head_dim;
    d.why["head_dim"] = fmt::format("q/k head = qk_nope_head_dim {} + qk_rope_head_dim {}",
                                    m.qk_nope_head_dim, m.qk_rope_head_dim);
    d.why["v_head_dim"] = "v_head_dim";
  } else if (std::optional<uint64_t> hd = c.U("head_dim")) {
    s.head_dim = *hd;
    d.why["head_dim"] =
        s.hidden_size % s.query_heads == 0 && s.hidden_size / s.query_heads != *hd
            ? fmt::format("explicit {} (NOT hidden_size / heads = {})", c.Name("head_dim"),
                          s.hidden_size / s.query_heads)
            : "explicit " + c.Name("head_dim");
  } else if (a.default_head_dim != 0 && !c.Get("head_dim").IsDefined()) {
    s.head_dim = a.default_head_dim;
    d.why["head_dim"] = fmt::format("no head_dim: {} class default", a.model_type);
  } else {
    if (s.hidden_size % s.query_heads != 0) {
      Fail("{}: no head_dim and hidden_size {} is not a multiple of {} heads", file,
           s.hidden_size, s.query_heads);
    }
    s.head_dim = s.hidden_size / s.query_heads;
    d.why["head_dim"] = fmt::format("no head_dim: hidden_size / heads = {} / {}", s.hidden_size,
                                    s.query_heads);
  }

  if (s.v_head_dim == 0) s.v_head_dim = s.head_dim;

  // Context.
  if (std::optional<uint64_t> mc = c.U("max_position_embeddings")) {
    s.max_context = *mc;
    d.why["max_context"] = c.Name("max_position_embeddings");
  } else if (std::optional<uint64_t> np = c.U("n_positions")) {
    s.max_context = *np;
    d.why["max_context"] = "n_positions";
  } else {
    s.max_context = a.default_max_context;
    d.why["max_context"] =
        fmt::format("no max_position_embeddings: {} class default", a.model_type);
  }

  s.weight_dtype = WeightDtype(c, d);

  // Shapes that size the weights.
  if (std::optional<uint64_t> v = c.U("vocab_size")) {
    s.vocab_size = *v;
  } else {
    s.vocab_size = a.family == Family::kGemma3 ? 262208 : 32000;
    d.why["vocab_size"] = "not in config: class default";
  }
  if (a.family == Family::kGpt2) {
    std::optional<uint64_t> inner = c.U("n_inner");
    s.intermediate_size = inner.value_or(4 * s.hidden_size);
    d.why["intermediate_size"] = inner ? "n_inner" : "n_inner is null: 4 * n_embd";
  } else if (a.family == Family::kFalcon) {
    std::optional<uint64_t> ffn = c.U("ffn_hidden_size");
    s.intermediate_size = ffn.value_or(4 * s.hidden_size);
    d.why["intermediate_size"] = ffn ? "ffn_hidden_size" : "no ffn_hidden_size: 4 * hidden_size";
  } else {
    // Without it the MLP (most of the weights) would count as nothing and
    // the cache look that much bigger; the class defaults differ by family.
    std::optional<uint64_t> inner = c.U("intermediate_size");
    if (!inner) {
      Fail(
          "{}: {} config has no 'intermediate_size' (the MLP's width, which sizes most of the "
          "weights; add the model class's default)",
          c.File(), a.name);
    }
    s.intermediate_size = *inner;
  }
  std::optional<bool> tie = c.B("tie_word_embeddings");
  s.tie_embeddings = tie.value_or(a.default_tie);
  if (!tie) {
    d.why["tie_embeddings"] =
        fmt::format("not in config: {} default {}", a.model_type, a.default_tie);
  }
  bool classic = a.family == Family::kGpt2 || a.family == Family::kFalcon;
  s.mlp = classic ? "plain" : "gated";
  s.norm = classic ? "layernorm" : "rms";
  if (a.family == Family::kGpt2) {
    s.attention_bias = true;
    d.why["attention_bias"] = "GPT-2 c_attn / c_proj carry biases";
  } else if (a.family == Family::kFalcon) {
    s.attention_bias = c.B("bias").value_or(false);
  } else if (a.family == Family::kQwen && std::string(a.name).rfind("Qwen2", 0) == 0) {
    s.attention_bias = true;
    d.why["attention_bias"] = "Qwen2 q/k/v projections carry biases";
  } else {
    s.attention_bias = c.B("attention_bias").value_or(false);
  }

  if (a.family == Family::kJamba) {
    MambaSpec mb;
    mb.d_state = c.U("mamba_d_state").value_or(16);
    mb.d_conv = c.U("mamba_d_conv").value_or(4);
    mb.expand = c.U("mamba_expand").value_or(2);
    YAML::Node dt = c.Get("mamba_dt_rank");
    mb.dt_rank = dt.IsDefined() && dt.IsScalar() && dt.Scalar() != "auto" ? ScalarU64(dt, file, "mamba_dt_rank")
                                                        : CeilDiv(s.hidden_size, 16);
    if (mb.d_conv == 0) Fail("{}: mamba_d_conv must be positive", file);
    s.mamba = mb;
  }
  if (a.moe) ReadMoe(c, a, d);
  ReadQuantization(c, d);
  AttentionGroups(c, a, d);

  uint64_t params = EstimateParams(s);
  s.params = params;
  d.why["params"] = "ESTIMATED from the config shapes (" + ParamsFormula(s) +
                    "); not a published count";
  return d;
}

// YAML output, laid out like models/*.yaml: value, then the comment at column 39.
void Line(std::string& out, int indent, const std::string& key, const std::string& value,
          const std::string& comment = "") {
  std::string l = std::string(static_cast<size_t>(indent), ' ') + key + ": " + value;
  if (!comment.empty()) {
    if (l.size() < 38) l.resize(38, ' ');
    else l += ' ';
    l += "# " + comment;
  }
  out += l + "\n";
}

bool HasControlChar(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char ch) {
    const auto u = static_cast<unsigned char>(ch);
    return u < 0x20 || u == 0x7f;
  });
}

std::string Quote(const std::string& s) {
  // Plain only where YAML reads it back as this text: not a null or bool
  // word (a name `null` became a missing name), nor something like a number.
  std::string lower;
  for (char ch : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  static const std::set<std::string> kWords = {"null", "~", "true", "false", "yes", "no",
                                               "on", "off", "y", "n"};
  const bool control = HasControlChar(s);
  bool plain =
      !s.empty() && !control && s.find_first_of(":#'\"{}[],&*!|>%@`") == std::string::npos &&
      s.front() != ' ' && s.back() != ' ' && s.front() != '-' && !kWords.count(lower) &&
      !std::isdigit(static_cast<unsigned char>(s.front())) && s.front() != '.' && s.front() != '+';
  // Else double-quoted, control characters escaped (a path with a newline
  // is still one line of YAML).
  return plain ? s : YamlQuote(s);
}

std::string Emit(const Draft& d, const std::string& file) {
  const ModelSpec& s = d.s;
  auto why = [&](const std::string& k) {
    auto it = d.why.find(k);
    return it == d.why.end() ? std::string() : it->second;
  };
  std::string out;
  // A path with a newline must not end the comment: quoted, escaped.
  const bool control = HasControlChar(file);
  out +=
      fmt::format("# Imported by `kvplan import-hf` from {}.\n", control ? YamlQuote(file) : file);
  out += "# Every value is from the config unless its comment says otherwise; check the\n"
         "# comments (assumptions and class defaults) before trusting the numbers.\n";
  for (const std::string& h : d.header) out += "# Note: " + h + "\n";
  Line(out, 0, "name", Quote(s.name));
  if (!s.hf_repo.empty()) Line(out, 0, "hf_repo", Quote(s.hf_repo), "config _name_or_path");
  Line(out, 0, "source", Quote(s.source));
  Line(out, 0, "architecture", s.architecture, "config \"architectures\"[0]");
  auto num = [&](const std::string& k, uint64_t v) { Line(out, 0, k, std::to_string(v), why(k)); };
  num("layers", s.layers);
  num("hidden_size", s.hidden_size);
  num("query_heads", s.query_heads);
  num("kv_heads", s.kv_heads);
  num("head_dim", s.head_dim);
  if (s.v_head_dim != 0 && s.v_head_dim != s.head_dim) num("v_head_dim", s.v_head_dim);
  num("max_context", s.max_context);
  num("params", s.params);
  Line(out, 0, "weight_dtype", s.weight_dtype, why("weight_dtype"));
  if (s.quantization) {
    const QuantSpec& q = *s.quantization;
    out += "quantization:" + std::string(25, ' ') + "# quantization_config\n";
    Line(out, 2, "format", q.format, why("quantization.format"));
    if (q.block) Line(out, 2, "block", std::to_string(q.block), why("quantization.block"));
    if (q.group_size) {
      Line(out, 2, "group_size", std::to_string(q.group_size), why("quantization.group_size"));
    }
    if (!q.parts.empty()) {
      std::string parts;
      for (const std::string& p : q.parts) parts += (parts.empty() ? "" : ", ") + p;
      Line(out, 2, "parts", "[" + parts + "]", why("quantization.parts"));
    }
  }
  num("vocab_size", s.vocab_size);
  if (s.intermediate_size) num("intermediate_size", s.intermediate_size);
  Line(out, 0, "tie_embeddings", s.tie_embeddings ? "true" : "false", why("tie_embeddings"));
  Line(out, 0, "mlp", s.mlp);
  Line(out, 0, "attention_bias", s.attention_bias ? "true" : "false", why("attention_bias"));
  Line(out, 0, "norm", s.norm);
  if (s.moe) {
    const MoeSpec& m = *s.moe;
    out += "moe:" + std::string(34, ' ') + "# " + why("moe") + "\n";
    Line(out, 2, "experts", std::to_string(m.experts));
    Line(out, 2, "experts_per_token", std::to_string(m.experts_per_token));
    Line(out, 2, "intermediate_size", std::to_string(m.intermediate_size));
    Line(out, 2, "shared_experts", std::to_string(m.shared_experts));
    Line(out, 2, "dense_layers", std::to_string(m.dense_layers));
    Line(out, 2, "period", std::to_string(m.period));
    Line(out, 2, "offset", std::to_string(m.offset));
  }
  if (s.mla) {
    const MlaSpec& m = *s.mla;
    out += "mla:\n";
    Line(out, 2, "kv_lora_rank", std::to_string(m.kv_lora_rank));
    Line(out, 2, "qk_rope_head_dim", std::to_string(m.qk_rope_head_dim));
    Line(out, 2, "qk_nope_head_dim", std::to_string(m.qk_nope_head_dim));
    if (m.q_lora_rank) Line(out, 2, "q_lora_rank", std::to_string(m.q_lora_rank));
    Line(out, 2, "v_head_dim", std::to_string(m.v_head_dim));
  }
  if (s.mamba) {
    const MambaSpec& m = *s.mamba;
    out += "mamba:\n";
    Line(out, 2, "d_state", std::to_string(m.d_state), "mamba_d_state");
    Line(out, 2, "d_conv", std::to_string(m.d_conv), "mamba_d_conv");
    Line(out, 2, "expand", std::to_string(m.expand), "mamba_expand");
    Line(out, 2, "dt_rank", std::to_string(m.dt_rank), "mamba_dt_rank");
  }
  out += "layer_groups:" + std::string(25, ' ') + "# " + why("layer_groups") + "\n";
  for (const LayerGroup& g : s.groups) {
    Line(out, 2, "- kind", std::string(LayerKindName(g.kind)));
    Line(out, 4, "layers", std::to_string(g.layers));
    if (g.every) {
      Line(out, 4, "every", std::to_string(g.every));
      Line(out, 4, "offset", std::to_string(g.offset));
    }
    if (g.kind == LayerKind::kSliding) Line(out, 4, "window", std::to_string(g.window));
    if (g.kind == LayerKind::kChunked) Line(out, 4, "chunk", std::to_string(g.window));
    if (g.state_bytes) Line(out, 4, "state_bytes", std::to_string(g.state_bytes));
  }
  return out;
}

}  // namespace

std::vector<std::string> SupportedHfArchitectures() {
  std::vector<std::string> out;
  for (const Arch& a : kArchs) out.emplace_back(a.name);
  return out;
}

HfImport ImportHfConfig(const std::string& text, const std::string& file,
                        const std::string& name) {
  CheckNameChars(name, "", "--name");
  YAML::Node root = ParseYaml(text, file);
  Draft d = Build(root, file, name);
  HfImport out;
  out.yaml = Emit(d, file);
  // The generated YAML's lines mean nothing to the user: an error names the
  // config key the field came from, at its place in the config, where the
  // field's comment is just that key (kv_heads <- num_key_value_heads).
  static const std::string kGenerated = "(generated spec)";
  try {
    out.spec = ParseModelYaml(out.yaml, kGenerated);
  } catch (const Error& e) {
    // "(generated spec):L:C: field: why" -> "field: why"
    static const std::regex kAt(R"(^\(generated spec\):\d+:\d+: (([^:]*):.*)$)");
    std::string msg = e.what(), field;
    std::smatch at;
    if (std::regex_match(msg, at, kAt)) {
      field = at[2];
      msg = at[1];
    }
    auto why = d.why.find(field);
    if (why != d.why.end()) {
      // The key, possibly under text_config (a multimodal wrapper).
      YAML::Node node = root;
      std::string key = why->second;
      for (size_t dot; (dot = key.find('.')) != std::string::npos && node.IsMap();) {
        node = Lookup(node, key.substr(0, dot));
        key = key.substr(dot + 1);
      }
      YAML::Node v = Lookup(node, key);
      if (!IsAbsent(v)) {
        Fail("{}{}: the imported spec is not valid: {}", PosOf(v, file).Prefix(), why->second,
             msg);
      }
    }
    Fail("{}: the imported spec is not valid: {}", file, msg);
  }
  // Positions in the generated YAML mean nothing to the user: point at the config.
  out.spec.field_pos.clear();
  for (LayerGroup& g : out.spec.groups) g.pos = SourcePos{file, 0, 0};
  return out;
}

HfImport ImportHfConfigFile(const std::string& path, const std::string& name) {
  return ImportHfConfig(ReadTextFile(path), path, name);
}

}  // namespace kvplan
