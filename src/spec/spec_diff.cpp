#include "spec/spec_diff.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kvplan {
namespace {

struct Differ {
  const ModelSpec& spec;
  std::vector<FieldDiff> out;

  void Add(const std::string& field, const std::string& a, const std::string& b,
           const std::string& pos_field) {
    if (a != b) out.push_back({field, a, b, spec.PosOf(pos_field)});
  }
  void U(const std::string& field, uint64_t a, uint64_t b, const std::string& pos_field = "") {
    Add(field, std::to_string(a), std::to_string(b), pos_field.empty() ? field : pos_field);
  }
};

std::string LayerDesc(const ModelSpec& m, size_t layer, const std::vector<size_t>& map) {
  const LayerGroup& g = m.groups[map[layer]];
  std::string s(LayerKindName(g.kind));
  if (g.window) s += fmt::format(" ({})", g.window);
  if (g.state_bytes) s += fmt::format(" ({} B)", g.state_bytes);
  if (g.k_eq_v) s += " (K = V projection)";
  // A group of its own KV heads (a per-layer num_key_value_heads list).
  if (g.HoldsTokens() && g.kv_heads != m.kv_heads) s += fmt::format(" ({} KV heads)", g.kv_heads);
  // A group of its own head width (Gemma 4's global layers).
  if (g.HoldsTokens() && g.head_dim != m.head_dim) s += fmt::format(" (K {} wide)", g.head_dim);
  if (g.HoldsTokens() && g.v_head_dim != m.v_head_dim) {
    s += fmt::format(" (V {} wide)", g.v_head_dim);
  }
  return s;
}

// Per layer, the state mixers beside its attention (Falcon-H1's parallel groups).
std::vector<std::string> ParallelDescs(const ModelSpec& m) {
  std::vector<std::string> out(m.layers);
  for (size_t gi = 0; gi < m.groups.size(); ++gi) {
    const LayerGroup& p = m.groups[gi];
    if (!p.parallel) continue;
    for (uint64_t i : m.GroupLayers(gi)) {
      if (i < out.size())
        out[i] += fmt::format(" + {} ({} B)", LayerKindName(p.kind), p.state_bytes);
    }
  }
  return out;
}

std::string QuantSummary(const std::optional<QuantSpec>& q) {
  if (!q) return "none";
  std::string s = q->format;
  if (!q->scheme.empty()) s += fmt::format(" ({})", q->scheme);
  if (q->block) s += fmt::format(", block {}", q->block);
  if (q->group_size) s += fmt::format(", group_size {}", q->group_size);
  if (!q->parts.empty()) s += fmt::format(", parts [{}]", fmt::join(q->parts, ", "));
  return s;
}

}  // namespace

std::string LayerPatternSummary(const ModelSpec& m) {
  std::string s;
  for (const LayerGroup& g : m.groups) {
    if (!s.empty()) s += " + ";
    s += fmt::format("{} {}", g.layers, LayerKindName(g.kind));
    if (g.window) s += fmt::format(" ({})", g.window);
    if (g.every) s += fmt::format(" [i % {} == {}]", g.every, g.offset);
  }
  return s;
}

std::vector<FieldDiff> DiffSpecs(const ModelSpec& s, const ModelSpec& c) {
  Differ d{s, {}};
  if (!s.architecture.empty())
    d.Add("architecture", s.architecture, c.architecture, "architecture");
  d.U("layers", s.layers, c.layers);
  d.U("hidden_size", s.hidden_size, c.hidden_size);
  d.U("query_heads", s.query_heads, c.query_heads);
  d.U("kv_heads", s.kv_heads, c.kv_heads);
  d.U("head_dim", s.head_dim, c.head_dim);
  d.U("v_head_dim", s.v_head_dim, c.v_head_dim,
      s.field_pos.count("v_head_dim") ? "v_head_dim" : "head_dim");
  d.U("max_context", s.max_context, c.max_context);
  d.Add("weight_dtype", s.weight_dtype, c.weight_dtype, "weight_dtype");
  d.Add("quantization", QuantSummary(s.quantization), QuantSummary(c.quantization),
        s.quantization ? "quantization" : "weight_dtype");
  if (s.vocab_size) d.U("vocab_size", s.vocab_size, c.vocab_size);
  if (s.intermediate_size) d.U("intermediate_size", s.intermediate_size, c.intermediate_size);
  d.Add("tie_embeddings", s.tie_embeddings ? "true" : "false", c.tie_embeddings ? "true" : "false",
        "tie_embeddings");
  d.Add("mlp", s.mlp, c.mlp, "mlp");
  d.Add("attention_bias", s.attention_bias ? "true" : "false", c.attention_bias ? "true" : "false",
        "attention_bias");
  d.Add("norm", s.norm, c.norm, "norm");

  if (s.moe.has_value() != c.moe.has_value()) {
    d.Add("moe", s.moe ? fmt::format("{} experts", s.moe->experts) : "none",
          c.moe ? fmt::format("{} experts", c.moe->experts) : "none", "moe");
  } else if (s.moe) {
    const MoeSpec &a = *s.moe, &b = *c.moe;
    d.U("moe.experts", a.experts, b.experts, "moe");
    d.U("moe.experts_per_token", a.experts_per_token, b.experts_per_token, "moe");
    d.U("moe.intermediate_size", a.intermediate_size, b.intermediate_size, "moe");
    d.U("moe.shared_experts", a.shared_experts, b.shared_experts, "moe");
    d.U("moe.dense_layers", a.dense_layers, b.dense_layers, "moe");
    d.U("moe.period", a.period, b.period, "moe");
    d.U("moe.offset", a.offset, b.offset, "moe");
  }
  if (s.mla.has_value() != c.mla.has_value()) {
    d.Add("mla", s.mla ? "present" : "none", c.mla ? "present" : "none", "mla");
  } else if (s.mla) {
    const MlaSpec &a = *s.mla, &b = *c.mla;
    d.U("mla.kv_lora_rank", a.kv_lora_rank, b.kv_lora_rank, "mla");
    d.U("mla.qk_rope_head_dim", a.qk_rope_head_dim, b.qk_rope_head_dim, "mla");
    d.U("mla.qk_nope_head_dim", a.qk_nope_head_dim, b.qk_nope_head_dim, "mla");
    d.U("mla.q_lora_rank", a.q_lora_rank, b.q_lora_rank, "mla");
    d.U("mla.v_head_dim", a.v_head_dim, b.v_head_dim, "mla");
    d.U("mla.index_heads", a.index_heads, b.index_heads, "mla");
    d.U("mla.index_head_dim", a.index_head_dim, b.index_head_dim, "mla");
    d.U("mla.index_topk", a.index_topk, b.index_topk, "mla");
  }
  if (s.mamba.has_value() != c.mamba.has_value()) {
    d.Add("mamba", s.mamba ? "present" : "none", c.mamba ? "present" : "none", "mamba");
  } else if (s.mamba) {
    const MambaSpec &a = *s.mamba, &b = *c.mamba;
    d.U("mamba.version", a.version, b.version, "mamba");
    d.U("mamba.d_state", a.d_state, b.d_state, "mamba");
    d.U("mamba.d_conv", a.d_conv, b.d_conv, "mamba");
    if (a.version == 1) {
      d.U("mamba.expand", a.expand, b.expand, "mamba");
      if (a.dt_rank) d.U("mamba.dt_rank", a.dt_rank, b.dt_rank, "mamba");
    } else {
      d.U("mamba.heads", a.heads, b.heads, "mamba");
      d.U("mamba.head_dim", a.head_dim, b.head_dim, "mamba");
      d.U("mamba.groups", a.groups, b.groups, "mamba");
    }
  }
  if (s.linear_attention.has_value() != c.linear_attention.has_value()) {
    d.Add("linear_attention", s.linear_attention ? s.linear_attention->kind : "none",
          c.linear_attention ? c.linear_attention->kind : "none", "linear_attention");
  } else if (s.linear_attention) {
    const LinearAttentionSpec &a = *s.linear_attention, &b = *c.linear_attention;
    d.Add("linear_attention.kind", a.kind, b.kind, "linear_attention");
    d.U("linear_attention.key_heads", a.key_heads, b.key_heads, "linear_attention");
    d.U("linear_attention.value_heads", a.value_heads, b.value_heads, "linear_attention");
    d.U("linear_attention.key_head_dim", a.key_head_dim, b.key_head_dim, "linear_attention");
    d.U("linear_attention.value_head_dim", a.value_head_dim, b.value_head_dim, "linear_attention");
    d.U("linear_attention.conv_kernel", a.conv_kernel, b.conv_kernel, "linear_attention");
  }
  d.Add("mixer_mlp", s.mixer_mlp ? "true" : "false", c.mixer_mlp ? "true" : "false",
        s.field_pos.count("mixer_mlp") ? "mixer_mlp" : "layers");
  if (s.layers == c.layers) {
    std::vector<size_t> sm = s.LayerToGroup(), cm = c.LayerToGroup();
    const std::vector<std::string> sp = ParallelDescs(s), cp = ParallelDescs(c);
    size_t differing = 0, first = 0;
    for (size_t i = 0; i < s.layers; ++i) {
      if (LayerDesc(s, i, sm) + sp[i] != LayerDesc(c, i, cm) + cp[i]) {
        if (differing++ == 0) first = i;
      }
    }
    if (differing) {
      d.out.push_back({"layer_groups",
                       fmt::format("{} (layer {}: {}{})", LayerPatternSummary(s), first,
                                   LayerDesc(s, first, sm), sp[first]),
                       fmt::format("{} (layer {}: {}{}); {} layers differ", LayerPatternSummary(c),
                                   first, LayerDesc(c, first, cm), cp[first], differing),
                       s.PosOf("layer_groups")});
    }
  }
  return d.out;
}

}  // namespace kvplan
