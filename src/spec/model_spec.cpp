#include "spec/model_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "spec/state_shape.h"

namespace kvplan {

std::string_view LayerKindName(LayerKind kind) {
  switch (kind) {
    case LayerKind::kFull:
      return "full";
    case LayerKind::kSliding:
      return "sliding";
    case LayerKind::kChunked:
      return "chunked";
    case LayerKind::kMla:
      return "mla";
    case LayerKind::kState:
      return "state";
    case LayerKind::kShared:
      return "shared";
    case LayerKind::kNone:
      return "none";
  }
  return "?";
}

bool LayerGroup::Selects(uint64_t i) const {
  if (!at.empty()) return std::binary_search(at.begin(), at.end(), i);
  if (every != 0) return i % every == offset;
  return false;
}

SourcePos ModelSpec::PosOf(std::string_view field) const {
  auto it = field_pos.find(field);
  if (it != field_pos.end()) return it->second;
  return SourcePos{origin, 0, 0};
}

std::string ModelSpec::AttentionKind() const {
  if (!HasAttention()) return "attention-free";  // state layers only (Mamba, RWKV)
  for (const LayerGroup& g : groups) {
    if (g.kind == LayerKind::kMla) return "MLA";
  }
  if (kv_heads == query_heads) return "MHA";
  if (kv_heads == 1) return "MQA";
  return "GQA";
}

std::vector<size_t> ModelSpec::LayerToGroup() const {
  std::vector<size_t> out(layers, groups.size());
  size_t rest = groups.size();
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].parallel) continue;
    if (groups[g].every == 0 && groups[g].at.empty()) {
      rest = g;
      continue;
    }
    for (uint64_t i = 0; i < layers; ++i) {
      if (groups[g].Selects(i)) out[i] = g;
    }
  }
  for (size_t& g : out) {
    if (g == groups.size()) g = rest;
  }
  return out;
}

std::vector<uint64_t> ModelSpec::GroupLayers(size_t g) const {
  std::vector<uint64_t> out;
  const LayerGroup& lg = groups.at(g);
  if (lg.parallel) {
    const bool all = lg.every == 0 && lg.at.empty();
    for (uint64_t i = 0; i < layers; ++i) {
      if (all || lg.Selects(i)) out.push_back(i);
    }
    return out;
  }
  const std::vector<size_t> owner = LayerToGroup();
  for (uint64_t i = 0; i < layers; ++i) {
    if (owner[i] == g) out.push_back(i);
  }
  return out;
}

bool ModelSpec::HasDenseMlp() const {
  return !moe || moe->dense_layers > 0 || moe->period > 1;
}

bool ModelSpec::HasWeightShapes() const {
  return vocab_size != 0 && (!HasDenseMlp() || intermediate_size != 0);
}

bool ModelSpec::HasAttention() const {
  for (const LayerGroup& g : groups) {
    if (g.HoldsTokens()) return true;
  }
  return false;
}

namespace {

void Positive(const ModelSpec& s, std::string_view field, uint64_t value) {
  if (value == 0) Fail("{}{}: must be a positive integer", s.PosOf(field).Prefix(), field);
}

// `at` (a position prefix) and `field` name the value in the message.
void AtMost(const std::string& at, std::string_view field, uint64_t value, uint64_t limit) {
  if (value > limit) {
    Fail("{}{}: {} is over kvplan's limit of {} (see docs/reliability.md)", at, field, value,
         limit);
  }
}

void CheckLimits(const ModelSpec& s) {
  auto top = [&](std::string_view field, uint64_t value, uint64_t limit) {
    AtMost(s.PosOf(field).Prefix(), field, value, limit);
  };
  top("layers", s.layers, ModelLimits::kMaxLayers);
  top("max_context", s.max_context, ModelLimits::kMaxContext);
  top("hidden_size", s.hidden_size, ModelLimits::kMaxWidth);
  top("query_heads", s.query_heads, ModelLimits::kMaxHeads);
  top("kv_heads", s.kv_heads, ModelLimits::kMaxHeads);
  top("head_dim", s.head_dim, ModelLimits::kMaxHeadDim);
  top("v_head_dim", s.v_head_dim, ModelLimits::kMaxHeadDim);
  top("vocab_size", s.vocab_size, ModelLimits::kMaxWidth);
  top("intermediate_size", s.intermediate_size, ModelLimits::kMaxWidth);
  top("params", s.params, ModelLimits::kMaxParams);
  if (s.groups.size() > ModelLimits::kMaxLayerGroups) {
    Fail("{}layer_groups: {} groups is over kvplan's limit of {} (see docs/reliability.md)",
         s.PosOf("layer_groups").Prefix(), s.groups.size(), ModelLimits::kMaxLayerGroups);
  }
  if (s.moe) {
    std::string at = s.PosOf("moe").Prefix() + "moe: ";
    AtMost(at, "experts", s.moe->experts, ModelLimits::kMaxExperts);
    AtMost(at, "shared_experts", s.moe->shared_experts, ModelLimits::kMaxExperts);
    AtMost(at, "intermediate_size", s.moe->intermediate_size, ModelLimits::kMaxWidth);
    if (s.moe->dense_layers > s.layers || s.moe->period > s.layers) {
      Fail("{}dense_layers {} and period {} must not exceed the model's {} layers", at,
           s.moe->dense_layers, s.moe->period, s.layers);
    }
  }
  if (s.mla) {
    std::string at = s.PosOf("mla").Prefix() + "mla: ";
    AtMost(at, "kv_lora_rank", s.mla->kv_lora_rank, ModelLimits::kMaxHeadDim);
    AtMost(at, "qk_rope_head_dim", s.mla->qk_rope_head_dim, ModelLimits::kMaxHeadDim);
    AtMost(at, "qk_nope_head_dim", s.mla->qk_nope_head_dim, ModelLimits::kMaxHeadDim);
    AtMost(at, "q_lora_rank", s.mla->q_lora_rank, ModelLimits::kMaxWidth);
    AtMost(at, "v_head_dim", s.mla->v_head_dim, ModelLimits::kMaxHeadDim);
  }
  if (s.mamba) {
    std::string at = s.PosOf("mamba").Prefix() + "mamba: ";
    AtMost(at, "d_state", s.mamba->d_state, ModelLimits::kMaxWidth);
    AtMost(at, "d_conv", s.mamba->d_conv, ModelLimits::kMaxWidth);
    AtMost(at, "expand", s.mamba->expand, ModelLimits::kMaxHeads);
    AtMost(at, "dt_rank", s.mamba->dt_rank, ModelLimits::kMaxWidth);
    AtMost(at, "heads", s.mamba->heads, ModelLimits::kMaxHeads);
    AtMost(at, "head_dim", s.mamba->head_dim, ModelLimits::kMaxHeadDim);
    AtMost(at, "groups", s.mamba->groups, ModelLimits::kMaxHeads);
  }
  if (s.linear_attention) {
    const LinearAttentionSpec& la = *s.linear_attention;
    std::string at = s.PosOf("linear_attention").Prefix() + "linear_attention: ";
    AtMost(at, "key_heads", la.key_heads, ModelLimits::kMaxHeads);
    AtMost(at, "value_heads", la.value_heads, ModelLimits::kMaxHeads);
    AtMost(at, "key_head_dim", la.key_head_dim, ModelLimits::kMaxHeadDim);
    AtMost(at, "value_head_dim", la.value_head_dim, ModelLimits::kMaxHeadDim);
    AtMost(at, "conv_kernel", la.conv_kernel, ModelLimits::kMaxHeadDim);
  }
  if (s.mla) {
    std::string at = s.PosOf("mla").Prefix() + "mla: ";
    AtMost(at, "index_heads", s.mla->index_heads, ModelLimits::kMaxHeads);
    AtMost(at, "index_head_dim", s.mla->index_head_dim, ModelLimits::kMaxHeadDim);
    AtMost(at, "index_topk", s.mla->index_topk, ModelLimits::kMaxContext);
  }
  for (const LayerGroup& g : s.groups) {
    std::string at = g.pos.Prefix();
    if (g.layers > s.layers || g.every > s.layers) {
      Fail("{}{}: {} is more than the model's {} layers", at,
           g.layers > s.layers ? "layers" : "every", g.layers > s.layers ? g.layers : g.every,
           s.layers);
    }
    AtMost(at, "kv_heads", g.kv_heads, ModelLimits::kMaxHeads);
    AtMost(at, "head_dim", g.head_dim, ModelLimits::kMaxHeadDim);
    AtMost(at, "v_head_dim", g.v_head_dim, ModelLimits::kMaxHeadDim);
  }
}

/// A state group's form and bytes per sequence and layer: from the model's
/// mamba or linear_attention shapes when it has them (a written state_bytes
/// must then agree), else the written state_bytes.
void ResolveState(const ModelSpec& s, LayerGroup& g) {
  const std::string at = g.pos.Prefix();
  g.state_form = ModelStateForm(s);
  const bool explicit_dtype = g.state_dtype_bytes != 0;
  g.state_dtype_given = explicit_dtype;
  if (g.state_dtype_bytes == 0) g.state_dtype_bytes = s.weight_dtype == "fp32" ? 4 : 2;
  if (g.state_form == StateForm::kGiven) {
    if (g.state_dtype_bytes != 0 && explicit_dtype) {
      Fail(
          "{}state_dtype: a state given as bare state_bytes has no recurrent part to re-type (add "
          "the model's mamba or linear_attention block)",
          at);
    }
    if (g.state_bytes == 0) {
      Fail(
          "{}state_bytes: a state group needs state_bytes > 0, or the model's mamba or "
          "linear_attention block to compute it from",
          at);
    }
    return;
  }
  const char* block = s.linear_attention ? "linear_attention" : "mamba";
  StateShape shape;
  uint64_t derived = 0;
  try {
    shape = LayerState(s, g, 1);
    derived = shape.Bytes();
  } catch (const Error&) {
    Fail("{}state_bytes: the {} block's shapes give a state over 64 bits", at, block);
  }
  if (g.state_bytes != 0 && g.state_bytes != derived) {
    Fail("{}state_bytes: {} but the {} block's shapes give {} = {}", at, g.state_bytes, block,
         derived, shape.Arithmetic());
  }
  AtMost(at, "state_bytes", derived, ModelLimits::kMaxStateBytes);
  g.state_bytes = derived;
}

/// One layer group's own checks (layers, heads, window, kind), with its
/// unset kv_heads, head_dim and v_head_dim taken from the model.
void ValidateGroup(const ModelSpec& s, LayerGroup& g) {
  const std::string at = g.pos.Prefix();
  std::string_view kind = LayerKindName(g.kind);
  if (g.layers == 0) Fail("{}layers: a {} group must hold at least one layer", at, kind);
  if (g.kv_heads == 0) g.kv_heads = s.kv_heads;
  if (g.head_dim == 0) g.head_dim = s.head_dim;
  if (g.v_head_dim == 0) g.v_head_dim = (g.head_dim == s.head_dim) ? s.v_head_dim : g.head_dim;
  if (g.kv_heads > s.query_heads || s.query_heads % g.kv_heads != 0) {
    Fail("{}kv_heads: {} does not divide query_heads {}", at, g.kv_heads, s.query_heads);
  }
  switch (g.kind) {
    case LayerKind::kSliding:
    case LayerKind::kChunked:
      if (g.window == 0) {
        Fail("{}{}: a {} group needs a positive {}", at,
             g.kind == LayerKind::kSliding ? "window" : "chunk", kind,
             g.kind == LayerKind::kSliding ? "window" : "chunk");
      }
      break;
    case LayerKind::kMla:
      if (!s.mla) Fail("{}kind: an mla group needs the model's mla block", at);
      break;
    case LayerKind::kState:
      ResolveState(s, g);
      break;
    default:
      if (g.window != 0) Fail("{}window: only sliding and chunked groups take a window", at);
      break;
  }
}

}  // namespace

void ValidateModel(ModelSpec& s) {
  Positive(s, "layers", s.layers);
  Positive(s, "hidden_size", s.hidden_size);
  Positive(s, "query_heads", s.query_heads);
  Positive(s, "kv_heads", s.kv_heads);
  Positive(s, "head_dim", s.head_dim);
  Positive(s, "max_context", s.max_context);
  CheckLimits(s);
  if (s.v_head_dim == 0) s.v_head_dim = s.head_dim;
  if (s.kv_heads > s.query_heads) {
    Fail("{}kv_heads: {} is more than query_heads {}", s.PosOf("kv_heads").Prefix(), s.kv_heads,
         s.query_heads);
  }
  if (s.query_heads % s.kv_heads != 0) {
    Fail("{}kv_heads: {} does not divide query_heads {}", s.PosOf("kv_heads").Prefix(), s.kv_heads,
         s.query_heads);
  }
  if (s.moe) {
    const MoeSpec& m = *s.moe;
    Positive(s, "moe", m.experts);
    if (m.experts_per_token == 0 || m.experts_per_token > m.experts) {
      Fail("{}moe: experts_per_token {} must be between 1 and experts {}", s.PosOf("moe").Prefix(),
           m.experts_per_token, m.experts);
    }
    if (m.period == 0 || m.offset >= m.period) {
      Fail("{}moe: offset {} must be below period {}", s.PosOf("moe").Prefix(), m.offset, m.period);
    }
  }
  if (s.mamba && s.linear_attention) {
    Fail("{}linear_attention: a model has a mamba block or a linear_attention block, not both",
         s.PosOf("linear_attention").Prefix());
  }
  if (s.groups.empty()) {
    LayerGroup g;
    g.kind = LayerKind::kFull;
    g.layers = s.layers;
    g.pos = SourcePos{s.origin, 0, 0};
    s.groups.push_back(g);
  }

  uint64_t total = 0;
  int rest_groups = 0;
  std::vector<int> owner(s.layers, -1);
  for (size_t gi = 0; gi < s.groups.size(); ++gi) {
    LayerGroup& g = s.groups[gi];
    const std::string at = g.pos.Prefix();
    ValidateGroup(s, g);
    if (g.every != 0 && g.offset >= g.every) {
      Fail("{}offset: {} must be below every {}", at, g.offset, g.every);
    }
    for (uint64_t i : g.at) {
      if (i >= s.layers) Fail("{}at: layer {} is past the model's {} layers", at, i, s.layers);
    }
    const bool selects = g.every != 0 || !g.at.empty();
    uint64_t count = 0;
    for (uint64_t i = 0; i < s.layers; ++i) count += g.Selects(i) ? 1 : 0;
    if (g.parallel) {
      // Beside the other groups' layers: every layer, or those it selects.
      if (g.kind != LayerKind::kState) {
        Fail("{}parallel: only a state group runs beside attention in the same layers", at);
      }
      if (!selects) count = s.layers;
    } else if (!selects) {
      ++rest_groups;
      total += g.layers;
      continue;
    } else {
      total += g.layers;
      for (uint64_t i = 0; i < s.layers; ++i) {
        if (!g.Selects(i)) continue;
        if (owner[i] >= 0) {
          Fail("{}{}: layer {} is already in group {} ({})", at, g.at.empty() ? "every" : "at", i,
               owner[i] + 1, LayerKindName(s.groups[owner[i]].kind));
        }
        owner[i] = static_cast<int>(gi);
      }
    }
    if (count != g.layers) {
      Fail("{}layers: {} but {} selects {} of the model's {} layers", at, g.layers,
           !g.at.empty()  ? "at"
           : g.every != 0 ? fmt::format("every {} offset {}", g.every, g.offset)
                          : std::string("parallel (every layer)"),
           count, s.layers);
    }
  }
  if (rest_groups > 1) {
    Fail("{}layer_groups: {} groups have no 'every'; at most one may take the remaining layers",
         s.PosOf("layer_groups").Prefix(), rest_groups);
  }
  if (total != s.layers) {
    Fail("{}layer_groups: the groups hold {} layers but layers is {}",
         s.PosOf("layer_groups").Prefix(), total, s.layers);
  }
  // A parallel state runs beside attention: every layer it selects must keep tokens.
  const std::vector<size_t> primary = s.LayerToGroup();
  for (const LayerGroup& g : s.groups) {
    if (!g.parallel) continue;
    for (uint64_t i = 0; i < s.layers; ++i) {
      if ((g.every == 0 && g.at.empty()) || g.Selects(i)) {
        const LayerGroup& host = s.groups[primary[i]];
        if (!host.HoldsTokens()) {
          Fail("{}parallel: layer {} is a {} layer; a parallel state runs beside attention only",
               g.pos.Prefix(), i, LayerKindName(host.kind));
        }
      }
    }
  }
  // A shared layer reads another layer's cache: some layer must keep one.
  if (std::any_of(s.groups.begin(), s.groups.end(),
                  [](const LayerGroup& g) { return g.kind == LayerKind::kShared; }) &&
      !s.HasAttention()) {
    Fail("{}layer_groups: no layer keeps a cache for the 'shared' layers to read",
         s.PosOf("layer_groups").Prefix());
  }
  if (s.mla) {
    Positive(s, "mla", s.mla->kv_lora_rank);
  }
  if (!s.attention_stated.empty()) {
    const std::string derived = s.AttentionKind();
    auto upper = [](const std::string& t) {
      std::string u;
      for (char c : t) u += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return u;
    };
    if (upper(s.attention_stated) != upper(derived)) {
      Fail("{}attention: says {} but the heads make it {} ({} query heads, {} KV heads)",
           s.PosOf("attention").Prefix(), s.attention_stated, derived, s.query_heads, s.kv_heads);
    }
  }
}

}  // namespace kvplan
