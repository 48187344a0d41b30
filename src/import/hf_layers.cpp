// The layer groups of an imported model: which layers hold full, sliding,
// MLA or Mamba state, from layer_types or each family's own keys.
#include <fmt/format.h>

#include <algorithm>

#include "import/hf_draft.h"
#include "import/layer_sets.h"
#include "util/checked.h"

namespace kvplan {
namespace {

std::string DescribeGroups(const std::vector<LayerGroup>& groups) {
  std::string s;
  for (const LayerGroup& g : groups) {
    if (!s.empty()) s += ", ";
    s += fmt::format("{} {}", g.layers, LayerKindName(g.kind));
    if (g.every) s += fmt::format(" (i % {} == {})", g.every, g.offset);
    if (!g.at.empty()) s += fmt::format(" (listed: {} layers)", g.at.size());
  }
  return s;
}

// layer_types of attention layers ("full_attention" / "sliding_attention"),
// into `sliding` (one flag a layer); false when the config has none.
bool ReadAttentionLayerTypes(const Config& c, uint64_t layers, std::vector<bool>& sliding) {
  JsonNode lt = c.Get("layer_types");
  if (IsAbsent(lt)) return false;
  if (!lt.IsSequence() || lt.size() != layers) {
    Fail("{}{}: expected a list of {} layer types (num_hidden_layers)",
         PosOf(lt, c.File()).Prefix(), c.Name("layer_types"), layers);
  }
  sliding.assign(layers, false);
  for (uint64_t i = 0; i < layers; ++i) {
    const std::string t = lt[i].IsScalar() ? lt[i].Scalar() : "";
    if (t != "full_attention" && t != "sliding_attention") {
      Fail("{}{}[{}]: unsupported layer type '{}' (known: full_attention, sliding_attention)",
           PosOf(lt[i], c.File()).Prefix(), c.Name("layer_types"), i, t);
    }
    sliding[i] = t == "sliding_attention";
  }
  return true;
}

// layer_types: ["sliding_attention", "full_attention", ...] (Gemma 2/3,
// gpt-oss, newer Qwen configs).
bool GroupsFromLayerTypes(const Config& c, uint64_t layers, uint64_t window, Draft& d) {
  std::vector<bool> sliding;
  if (!ReadAttentionLayerTypes(c, layers, sliding)) return false;
  // The kinds in the order they first appear (gpt-oss: sliding first).
  const size_t first_sliding = sliding[0] ? 0 : 1;
  std::vector<LayerSet> sets(2);
  sets[first_sliding] = {LayerKind::kSliding, 0, window, {}};
  sets[1 - first_sliding] = {LayerKind::kFull, 0, 0, {}};
  for (uint64_t i = 0; i < layers; ++i) {
    sets[sliding[i] ? first_sliding : 1 - first_sliding].layers.push_back(i);
  }
  if (window == 0 && std::find(sliding.begin(), sliding.end(), true) != sliding.end()) {
    Fail("{}: layer_types has sliding layers but sliding_window is not set", c.File());
  }
  LayerSetsToGroups(std::move(sets), layers, d.s.groups);
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

}  // namespace

namespace {

void FamilyGroups(const Config& c, const Arch& a, Draft& d);

// num_key_value_heads as a list: each group splits by its layers' KV heads,
// and a layer with none keeps nothing.
void SplitByLayerKvHeads(Draft& d) {
  const ModelSpec& s = d.s;
  const std::vector<size_t> group_of = s.LayerToGroup();
  std::vector<LayerSet> sets;
  for (uint64_t i = 0; i < s.layers; ++i) {
    const LayerGroup& g = s.groups[group_of[i]];
    const uint64_t kv = d.layer_kv_heads[i];
    const LayerKind kind = kv == 0 && g.HoldsTokens() ? LayerKind::kNone : g.kind;
    const uint64_t heads = kind == LayerKind::kNone ? 0 : kv;
    const uint64_t window = kind == LayerKind::kNone ? 0 : g.window;
    auto it = std::find_if(sets.begin(), sets.end(), [&](const LayerSet& k) {
      return k.kind == kind && k.kv_heads == heads && k.window == window;
    });
    if (it == sets.end()) {
      sets.push_back({kind, heads, window, {}});
      it = sets.end() - 1;
    }
    it->layers.push_back(i);
  }
  std::vector<LayerGroup> parallel;  // states beside attention stay as they are
  for (const LayerGroup& g : s.groups) {
    if (g.parallel) parallel.push_back(g);
  }
  LayerSetsToGroups(sets, s.layers, d.s.groups);
  d.s.groups.insert(d.s.groups.end(), parallel.begin(), parallel.end());
  d.why["layer_groups"] +=
      "; split by the per-layer num_key_value_heads: " + DescribeGroups(d.s.groups);
}

}  // namespace

void AttentionGroups(const Config& c, const Arch& a, Draft& d) {
  FamilyGroups(c, a, d);
  if (!d.layer_kv_heads.empty()) SplitByLayerKvHeads(d);
}

namespace {

// Llama-4's iRoPE: a layer with RoPE (no_rope_layers[i] == 1, despite the
// name) attends within its attention_chunk_size chunk; a NoPE layer (0)
// attends globally. Without the list, every no_rope_layer_interval-th layer
// (i + 1) is NoPE (transformers' Llama4TextConfig); without a chunk size
// every layer is global.
void Llama4Groups(const Config& c, Draft& d) {
  const uint64_t layers = d.s.layers;
  const std::optional<uint64_t> chunk = c.U("attention_chunk_size");
  if (!chunk || *chunk == 0) {
    SingleGroup(d, LayerKind::kFull, 0, "no attention_chunk_size: global attention on every layer");
    return;
  }
  std::vector<bool> rope(layers);
  JsonNode listed = c.Get("no_rope_layers");
  std::string why;
  if (!IsAbsent(listed) && !(listed.IsSequence() && listed.size() == 0)) {
    if (!listed.IsSequence() || listed.size() != layers) {
      Fail("{}{}: expected a list of {} flags (num_hidden_layers)",
           PosOf(listed, c.File()).Prefix(), c.Name("no_rope_layers"), layers);
    }
    for (uint64_t i = 0; i < layers; ++i) {
      const uint64_t flag = ScalarU64(listed[i], c.File(), c.Name("no_rope_layers"), true);
      if (flag > 1) {
        Fail("{}{}[{}]: expected 1 (RoPE, chunked) or 0 (NoPE, global), got {}",
             PosOf(listed[i], c.File()).Prefix(), c.Name("no_rope_layers"), i, flag);
      }
      rope[i] = flag == 1;
    }
    why = "from " + c.Name("no_rope_layers") + " (1: RoPE, chunked; 0: NoPE, global)";
  } else {
    const uint64_t every = c.U("no_rope_layer_interval").value_or(4);
    if (every == 0) {
      Fail("{}{}: 0 is not a layer period (expected 1 or more)",
           PosOf(c.Get("no_rope_layer_interval"), c.File()).Prefix(),
           c.Name("no_rope_layer_interval"));
    }
    for (uint64_t i = 0; i < layers; ++i) rope[i] = (i + 1) % every != 0;
    why = fmt::format("no no_rope_layers: layer i is global (NoPE) iff (i + 1) % {} == 0", every);
  }
  std::vector<LayerSet> sets = {{LayerKind::kFull, 0, 0, {}}, {LayerKind::kChunked, 0, *chunk, {}}};
  for (uint64_t i = 0; i < layers; ++i) sets[rope[i] ? 1 : 0].layers.push_back(i);
  LayerSetsToGroups(sets, layers, d.s.groups);
  d.why["layer_groups"] = fmt::format("{}; chunks of attention_chunk_size {}: {}", why, *chunk,
                                      DescribeGroups(d.s.groups));
}

// Gemma 4: layer_types (else five sliding layers to one full, the last one
// full); sliding layers keep num_key_value_heads x head_dim over
// sliding_window tokens, full layers global_head_dim wide, with
// num_global_key_value_heads when attention_k_eq_v (their values come from
// k_proj). The last num_kv_shared_layers layers reuse earlier layers' cache.
void Gemma4Groups(const Config& c, Draft& d) {
  ModelSpec& s = d.s;
  const uint64_t layers = s.layers;
  const uint64_t window = c.U("sliding_window").value_or(512);
  const uint64_t global_dim = c.U("global_head_dim").value_or(512);
  const bool k_eq_v = c.B("attention_k_eq_v").value_or(false);
  const uint64_t global_kv =
      k_eq_v ? c.U("num_global_key_value_heads").value_or(s.kv_heads) : s.kv_heads;
  const uint64_t shared = c.U("num_kv_shared_layers").value_or(0);
  if (shared >= layers) {
    Fail("{}{}: {} shared layers leave none of the {} layers to keep a cache",
         PosOf(c.Get("num_kv_shared_layers"), c.File()).Prefix(), c.Name("num_kv_shared_layers"),
         shared, layers);
  }
  if (global_kv == 0 || global_kv > s.query_heads || s.query_heads % global_kv != 0) {
    Fail("{}{}: {} KV heads do not divide the {} query heads",
         PosOf(c.Get("num_global_key_value_heads"), c.File()).Prefix(),
         c.Name("num_global_key_value_heads"), global_kv, s.query_heads);
  }
  std::vector<bool> sliding;
  std::string why;
  if (ReadAttentionLayerTypes(c, layers, sliding)) {
    why = "from " + c.Name("layer_types");
  } else {
    sliding.resize(layers);
    for (uint64_t i = 0; i < layers; ++i) sliding[i] = (i + 1) % 6 != 0 && i + 1 != layers;
    why = "no layer_types: Gemma4TextConfig's five sliding layers to one full, the last full";
  }
  std::vector<LayerSet> sets = {{LayerKind::kFull, global_kv, 0, {}},
                                {LayerKind::kSliding, 0, window, {}},
                                {LayerKind::kShared, 0, 0, {}}};
  for (uint64_t i = 0; i < layers; ++i) {
    sets[i >= layers - shared ? 2 : sliding[i] ? 1 : 0].layers.push_back(i);
  }
  LayerSetsToGroups(sets, layers, s.groups);
  for (LayerGroup& g : s.groups) {
    if (g.kind != LayerKind::kFull) continue;
    g.head_dim = g.v_head_dim = global_dim;
    g.k_eq_v = k_eq_v;
  }
  d.why["layer_groups"] = fmt::format(
      "{}; sliding layers over sliding_window {}; full layers global_head_dim {} with {} KV "
      "heads{}{}: {}",
      why, window, global_dim, global_kv,
      k_eq_v ? " (attention_k_eq_v: values from k_proj, K and V both cached)" : "",
      shared ? fmt::format("; the last {} layers share earlier layers' cache", shared) : "",
      DescribeGroups(s.groups));
  if (c.U("hidden_size_per_layer_input").value_or(0) != 0 ||
      c.B("use_double_wide_mlp").value_or(false)) {
    d.header.push_back(
        "per-layer input embeddings and double-wide MLPs are not counted: params are under the "
        "checkpoint's");
  }
}

void FamilyGroups(const Config& c, const Arch& a, Draft& d) {
  ModelSpec& s = d.s;
  if (HybridGroups(c, a, d)) return;
  std::optional<uint64_t> window = c.U("sliding_window");
  switch (a.family) {
    case Family::kLlama:
      if (GroupsFromLayerTypes(c, s.layers, window.value_or(0), d)) return;
      if (window && *window > 0 && *window < s.max_context) {
        SingleGroup(d, LayerKind::kSliding, *window,
                    fmt::format("sliding_window: {} on every layer", *window));
      } else if (window) {
        SingleGroup(
            d, LayerKind::kFull, 0,
            fmt::format("sliding_window {} >= max_position_embeddings: full attention", *window));
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
                                "over {}",
                                *window));
      } else {
        Fail(
            "{}: use_sliding_window with max_window_layers {} (layers {}+ slide) is a layer "
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
      std::string why = "Gemma 2 (no layer_types): even layers slide over " + std::to_string(w) +
                        ", odd layers are global";
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
      std::vector<LayerSet> sets = {{LayerKind::kFull, 0, 0, {}}, {LayerKind::kSliding, 0, w, {}}};
      for (uint64_t i = 0; i < s.layers; ++i) {
        sets[i % every == offset ? 0 : 1].layers.push_back(i);
      }
      LayerSetsToGroups(sets, s.layers, s.groups);
      d.why["layer_groups"] = why;
      return;
    }
    case Family::kGptOss:
      if (GroupsFromLayerTypes(c, s.layers, window.value_or(128), d)) return;
      Fail("{}: gpt-oss config has no layer_types; kvplan will not guess which layers slide",
           c.File());
    case Family::kLlama4:
      Llama4Groups(c, d);
      return;
    case Family::kGemma4:
      Gemma4Groups(c, d);
      return;
    case Family::kDeepseek:
      SingleGroup(d, LayerKind::kMla, 0,
                  "MLA: kv_lora_rank + qk_rope_head_dim cached per token and layer");
      return;
    case Family::kFalcon:
    case Family::kGpt2:
    case Family::kQwenNext:  // (hybrids: HybridGroups above)
    case Family::kNemotronH:
    case Family::kGraniteHybrid:
    case Family::kFalconH1:
    case Family::kMiniMax:
      SingleGroup(d, LayerKind::kFull, 0, "full attention on every layer");
      return;
    case Family::kJamba: {
      uint64_t period = c.U("attn_layer_period").value_or(8);
      uint64_t offset = c.U("attn_layer_offset").value_or(4);
      if (offset >= period)
        Fail("{}: attn_layer_offset {} >= attn_layer_period {}", c.File(), offset, period);
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

}  // namespace

}  // namespace kvplan
