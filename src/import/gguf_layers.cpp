// The layers of a GGUF model: heads and head dims (a number or one value per
// layer), MLA's latent, which layers slide (the file's
// attention.sliding_window_pattern, else llama.cpp's pattern for the
// architecture), and the recurrent state of hybrid layers (head_count_kv 0,
// sized from the ssm.* keys). Each layer's kind is found first, then the
// layers are written as kvplan's periodic layer groups.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "import/gguf_internal.h"
#include "import/layer_sets.h"
#include "util/checked.h"

namespace kvplan {
namespace {

struct LayerInfo {
  LayerKind kind = LayerKind::kFull;
  uint64_t kv_heads = 0;
  uint64_t window = 0;
  bool operator==(const LayerInfo&) const = default;
};

// llama.cpp's sliding-window layout per architecture where the file gives
// none (llama-model.cpp: set_swa_pattern(n), chunked attention for Llama 4,
// whose chunk the file does not store).
struct SwaDefault {
  std::string_view arch;
  LayerKind kind;
  uint64_t pattern;  // layer i slides iff i % pattern < pattern - 1
  uint64_t window;   // 0: the file's attention.sliding_window, required
};
constexpr std::array<SwaDefault, 6> kSwaDefaults = {{
    {"gemma2", LayerKind::kSliding, 2, 0},
    {"gemma3", LayerKind::kSliding, 6, 0},
    {"cohere2", LayerKind::kSliding, 4, 0},
    {"gpt-oss", LayerKind::kSliding, 2, 0},
    {"exaone4", LayerKind::kSliding, 4, 0},
    {"llama4", LayerKind::kChunked, 4, 8192},
}};

// Which layers slide, their kind and window; all false when none does.
std::vector<bool> SlidingLayers(const GgufMeta& m, uint64_t layers, LayerKind& kind,
                                uint64_t& window) {
  const SwaDefault* def = nullptr;
  for (const SwaDefault& d : kSwaDefaults) {
    if (d.arch == m.Arch()) def = &d;
  }
  kind = def != nullptr ? def->kind : LayerKind::kSliding;
  window = m.U("attention.sliding_window").value_or(def != nullptr ? def->window : 0);
  std::vector<bool> slides(layers, false);
  const GgufKv* pat = m.Kv("attention.sliding_window_pattern");
  if (pat != nullptr && pat->type == GgufType::kArray) {
    std::optional<std::vector<uint64_t>> per =
        m.PerLayer("attention.sliding_window_pattern", layers);
    for (uint64_t i = 0; i < layers; ++i) slides[i] = (*per)[i] != 0;
  } else {
    std::optional<uint64_t> n = m.U("attention.sliding_window_pattern");
    if (!n && def != nullptr) n = def->pattern;
    if (!n) return slides;  // llama.cpp applies no window to this architecture
    for (uint64_t i = 0; i < layers; ++i) slides[i] = *n == 0 || i % *n < *n - 1;
  }
  if (window == 0 && std::find(slides.begin(), slides.end(), true) != slides.end()) {
    if (pat != nullptr) {
      m.FailKey(*pat, fmt::format("sliding layers, but no {}.attention.sliding_window", m.Arch()));
    }
    Fail("{}: {}.attention.sliding_window: missing (llama.cpp requires it for '{}' models)",
         m.File().path, m.Arch(), m.Arch());
  }
  return slides;
}

// Bytes of recurrent state per sequence and layer, as the HF importer counts
// Jamba's (the model dtype, vLLM's MambaSpec): the convolution's d_conv - 1
// columns over its channels (d_inner, plus B and C of 2 x group_count x
// d_state for Mamba-2) and the SSM state d_inner x d_state.
uint64_t StateBytes(const GgufMeta& m, ModelSpec& s) {
  const GgufKv* inner_kv = m.Kv("ssm.inner_size");
  const uint64_t d_inner = m.Req("ssm.inner_size");
  const uint64_t d_conv = m.Req("ssm.conv_kernel");
  const uint64_t d_state = m.Req("ssm.state_size");
  const uint64_t groups = m.U("ssm.group_count").value_or(0);
  if (d_conv == 0) m.FailKey(*m.Kv("ssm.conv_kernel"), "must be at least 1");
  if (d_inner == 0 || d_inner > ModelLimits::kMaxWidth || d_state > ModelLimits::kMaxWidth ||
      d_conv > ModelLimits::kMaxWidth || groups > ModelLimits::kMaxHeads) {
    m.FailKey(*inner_kv, fmt::format("inner_size {}, state_size {}, conv_kernel {}, "
                                     "group_count {}: outside kvplan's limits",
                                     d_inner, d_state, d_conv, groups));
  }
  // Each factor is under 2^25, so the sum fits in 128 bits; it must then fit
  // kvplan's limit on a state group.
  __extension__ using U128 = unsigned __int128;
  const U128 channels = static_cast<U128>(d_inner) + static_cast<U128>(2 * groups) * d_state;
  const U128 elem_bytes = s.weight_dtype == "fp32" ? 4 : 2;
  const U128 bytes = (channels * (d_conv - 1) + static_cast<U128>(d_inner) * d_state) * elem_bytes;
  if (bytes > ModelLimits::kMaxStateBytes) {
    m.FailKey(*inner_kv, fmt::format("the state of one layer is over kvplan's limit of {} bytes "
                                     "(see docs/reliability.md)",
                                     ModelLimits::kMaxStateBytes));
  }
  const std::optional<uint64_t> heads = m.U("ssm.time_step_rank");  // Mamba-2: the SSM heads
  if (groups != 0) {
    // Mamba-2 (llama.cpp writes its head count as ssm.time_step_rank): the
    // block when the heads split d_inner and the groups split the heads.
    if (heads && *heads != 0 && *heads <= ModelLimits::kMaxHeads && d_inner % *heads == 0 &&
        *heads % groups == 0) {
      MambaSpec mb;
      mb.version = 2;
      mb.d_state = d_state;
      mb.d_conv = d_conv;
      mb.heads = *heads;
      mb.head_dim = d_inner / *heads;
      mb.groups = groups;
      s.mamba = mb;
    }
  } else if (d_inner % s.hidden_size == 0) {
    MambaSpec mb;
    mb.d_state = d_state;
    mb.d_conv = d_conv;
    mb.expand = d_inner / s.hidden_size;
    mb.dt_rank = m.U("ssm.time_step_rank").value_or(CeilDiv(s.hidden_size, 16));
    s.mamba = mb;
  }
  return static_cast<uint64_t>(bytes);
}

// Qwen3-Next and Qwen3.5 (full_attention_interval): the layers that are not
// every interval-th are Gated DeltaNet, sized from the ssm.* keys as
// llama.cpp maps them -- group_count the key heads, state_size their width,
// time_step_rank the value heads, inner_size value heads x value width.
// Returns which layers are recurrent (none without the key).
std::vector<bool> GatedDeltaNetLayers(const GgufMeta& m, ModelSpec& s) {
  std::vector<bool> recurrent(s.layers, false);
  const std::optional<uint64_t> interval = m.U("full_attention_interval");
  if (!interval || m.Kv("ssm.inner_size") == nullptr) return recurrent;
  if (*interval == 0) m.FailKey(*m.Kv("full_attention_interval"), "0 is not a layer period");
  for (uint64_t i = 0; i < s.layers; ++i) recurrent[i] = (i + 1) % *interval != 0;
  LinearAttentionSpec la;
  la.kind = "gated_deltanet";
  la.key_heads = m.Req("ssm.group_count");
  la.key_head_dim = m.Req("ssm.state_size");
  la.value_heads = m.Req("ssm.time_step_rank");
  la.conv_kernel = m.Req("ssm.conv_kernel");
  const uint64_t inner = m.Req("ssm.inner_size");
  if (la.key_heads == 0 || la.value_heads == 0 || inner % la.value_heads != 0 ||
      la.value_heads % la.key_heads != 0) {
    m.FailKey(*m.Kv("ssm.inner_size"),
              fmt::format("{} is not a whole number of value heads (ssm.time_step_rank {}) "
                          "over {} key heads (ssm.group_count)",
                          inner, la.value_heads, la.key_heads));
  }
  la.value_head_dim = inner / la.value_heads;
  s.linear_attention = la;
  s.field_pos["linear_attention"] = m.PosOf("ssm.inner_size");
  return recurrent;
}

// Head dims: explicit key/value lengths, else hidden / heads; MLA's latent.
void ReadHeadDims(const GgufMeta& m, ModelSpec& s) {
  if (std::optional<uint64_t> lora = m.U("attention.kv_lora_rank")) {
    MlaSpec mla;
    mla.kv_lora_rank = *lora;
    mla.q_lora_rank = m.U("attention.q_lora_rank").value_or(0);
    mla.qk_rope_head_dim = m.Req("rope.dimension_count");
    // Files converted since llama.cpp stores MLA absorbed keep the per-head
    // dims under key_length_mla / value_length_mla.
    const bool absorbed = m.Kv("attention.key_length_mla") != nullptr;
    s.head_dim = m.Req(absorbed ? "attention.key_length_mla" : "attention.key_length");
    s.v_head_dim = m.Req(absorbed ? "attention.value_length_mla" : "attention.value_length");
    s.field_pos["head_dim"] =
        m.PosOf(absorbed ? "attention.key_length_mla" : "attention.key_length");
    if (s.head_dim <= mla.qk_rope_head_dim) {
      m.FailKey(*m.Kv(absorbed ? "attention.key_length_mla" : "attention.key_length"),
                fmt::format("{} is not more than rope.dimension_count {} (MLA's key is the "
                            "no-rope part plus the rope part)",
                            s.head_dim, mla.qk_rope_head_dim));
    }
    mla.qk_nope_head_dim = s.head_dim - mla.qk_rope_head_dim;
    mla.v_head_dim = s.v_head_dim;
    s.mla = mla;
    s.field_pos["mla"] = m.PosOf("attention.kv_lora_rank");
    // As the Hugging Face configs publish it: one K/V head per query head
    // (the cache holds the latent, not per-head K/V).
    s.kv_heads = s.query_heads;
    return;
  }
  if (std::optional<uint64_t> k = m.U("attention.key_length")) {
    s.head_dim = *k;
    s.field_pos["head_dim"] = m.PosOf("attention.key_length");
  } else {
    if (s.hidden_size % s.query_heads != 0) {
      m.FailKey(*m.Kv("embedding_length"),
                fmt::format("no attention.key_length and {} is not a multiple of {} heads",
                            s.hidden_size, s.query_heads));
    }
    s.head_dim = s.hidden_size / s.query_heads;
  }
  s.v_head_dim = m.U("attention.value_length").value_or(s.head_dim);
  s.field_pos["v_head_dim"] = m.PosOf("attention.value_length");
}

}  // namespace

void ReadAttention(const GgufMeta& m, ModelSpec& s) {
  const uint64_t n = s.layers;
  std::optional<std::vector<uint64_t>> heads = m.PerLayer("attention.head_count", n);
  if (!heads) m.Req("attention.head_count");  // fails: missing
  std::optional<std::vector<uint64_t>> kv = m.PerLayer("attention.head_count_kv", n);
  if (!kv) kv = heads;
  const char* kv_key =
      m.Kv("attention.head_count_kv") ? "attention.head_count_kv" : "attention.head_count";
  uint64_t first = n;
  for (uint64_t i = 0; i < n && first == n; ++i) {
    if ((*kv)[i] != 0 && (*heads)[i] != 0) first = i;
  }
  if (first == n) {
    Fail(
        "{}: {}.{}: no layer has attention heads: an attention-free model (Mamba, RWKV), "
        "which kvplan does not plan",
        m.File().path, m.Arch(), kv_key);
  }
  s.query_heads = (*heads)[first];
  s.kv_heads = (*kv)[first];
  s.field_pos["query_heads"] = m.PosOf("attention.head_count");
  s.field_pos["kv_heads"] = m.PosOf(kv_key);
  s.field_pos["layer_groups"] = m.PosOf(kv_key);
  ReadHeadDims(m, s);

  LayerKind swa_kind = LayerKind::kSliding;
  uint64_t window = 0;
  const std::vector<bool> slides = SlidingLayers(m, n, swa_kind, window);
  const bool has_ssm = m.Kv("ssm.inner_size") != nullptr;
  const std::vector<bool> recurrent = GatedDeltaNetLayers(m, s);
  // Gemma 4 (Gemma 3n): the last attention.shared_kv_layers layers reuse
  // earlier layers' cache.
  const uint64_t shared = m.U("attention.shared_kv_layers").value_or(0);
  if (shared >= n && shared != 0) {
    m.FailKey(
        *m.Kv("attention.shared_kv_layers"),
        fmt::format("{} shared layers leave none of the {} layers to keep a cache", shared, n));
  }
  // Nemotron-H: feed_forward_length one value a layer; a layer with neither
  // KV heads nor a state of its own but an MLP is MLP-only (llama.cpp: a
  // layer is recurrent iff it has neither KV heads nor an MLP).
  std::vector<uint64_t> ffn(n, 0);
  const GgufKv* ffn_kv = m.Kv("feed_forward_length");
  const bool ffn_per_layer = ffn_kv != nullptr && ffn_kv->type == GgufType::kArray;
  if (ffn_per_layer) ffn = *m.PerLayer("feed_forward_length", n);
  uint64_t state_bytes = 0;
  std::vector<LayerSet> sets;
  for (uint64_t i = 0; i < n; ++i) {
    LayerInfo info;
    if (i >= n - shared) {
      info.kind = LayerKind::kShared;
    } else if (ffn_per_layer && ffn[i] != 0 && !recurrent[i] &&
               ((*kv)[i] == 0 || (*heads)[i] == 0)) {
      info.kind = LayerKind::kNone;
    } else if (recurrent[i] || (*kv)[i] == 0 || (*heads)[i] == 0) {
      if (!has_ssm) {
        Fail(
            "{}: {}.{}: layer {} has no attention heads and the file has no {}.ssm.* keys to "
            "size its state",
            m.File().path, m.Arch(), kv_key, i, m.Arch());
      }
      if (state_bytes == 0) state_bytes = StateBytes(m, s);
      info.kind = LayerKind::kState;
    } else if (s.mla) {
      info.kind = LayerKind::kMla;
    } else {
      info.kv_heads = (*kv)[i];
      if (slides[i]) {
        info.kind = swa_kind;
        info.window = window;
      }
    }
    auto it = std::find_if(sets.begin(), sets.end(), [&](const LayerSet& k) {
      return LayerInfo{k.kind, k.kv_heads, k.window} == info;
    });
    if (it == sets.end()) {
      sets.push_back({info.kind, info.kv_heads, info.window, {}});
      it = sets.end() - 1;
    }
    it->layers.push_back(i);
  }
  // SSM keys, yet every layer attends: Falcon-H1's state mixer runs beside
  // the attention of every layer; elsewhere it is a layout kvplan does not know.
  const bool beside = has_ssm && state_bytes == 0;
  if (beside && (m.Arch() != "falcon-h1" || s.linear_attention)) {
    m.FailKey(*m.Kv("ssm.inner_size"),
              "SSM keys, but every layer has attention heads: a state beside the attention of "
              "every layer is Falcon-H1's layout, and this is not a falcon-h1 file");
  }
  if (beside) state_bytes = StateBytes(m, s);
  LayerSetsToGroups(sets, n, s.groups);
  if (beside) {
    LayerGroup p;
    p.kind = LayerKind::kState;
    p.layers = n;
    p.parallel = true;
    s.groups.push_back(p);
  }
  // Gated DeltaNet layers: the linear_attention block sizes the state.
  if (s.linear_attention) s.mamba.reset();
  // Sliding layers of their own head width (Gemma 4: attention.key_length_swa
  // 256 beside the global layers' key_length 512).
  const std::optional<uint64_t> swa_k = m.U("attention.key_length_swa");
  const std::optional<uint64_t> swa_v = m.U("attention.value_length_swa");
  for (LayerGroup& g : s.groups) {
    if (g.kind == LayerKind::kSliding || g.kind == LayerKind::kChunked) {
      if (swa_k) g.head_dim = *swa_k;
      if (swa_v) {
        g.v_head_dim = *swa_v;
      } else if (swa_k) {
        g.v_head_dim = *swa_k;
      }
    }
    g.pos = s.field_pos["layer_groups"];
    if (g.kind == LayerKind::kState) g.state_bytes = state_bytes;
    if (g.kind == LayerKind::kMla) g.kv_heads = 0;  // the model's
  }
}

}  // namespace kvplan
