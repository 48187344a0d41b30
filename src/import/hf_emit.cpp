// The spec YAML an import writes, laid out like models/*.yaml: each value,
// then a comment at column 39 saying where it came from.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "import/hf_draft.h"
#include "spec/yaml_reader.h"

namespace kvplan {
namespace {

// YAML output, laid out like models/*.yaml: value, then the comment at column 39.
void Line(std::string& out, int indent, const std::string& key, const std::string& value,
          const std::string& comment = "") {
  std::string l = std::string(static_cast<size_t>(indent), ' ') + key + ": " + value;
  if (!comment.empty()) {
    if (l.size() < 38)
      l.resize(38, ' ');
    else
      l += ' ';
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
  static const std::set<std::string> kWords = {"null", "~",  "true", "false", "yes",
                                               "no",   "on", "off",  "y",     "n"};
  const bool control = HasControlChar(s);
  bool plain =
      !s.empty() && !control && s.find_first_of(":#'\"{}[],&*!|>%@`") == std::string::npos &&
      s.front() != ' ' && s.back() != ' ' && s.front() != '-' && !kWords.count(lower) &&
      !std::isdigit(static_cast<unsigned char>(s.front())) && s.front() != '.' && s.front() != '+';
  // Else double-quoted, control characters escaped (a path with a newline
  // is still one line of YAML).
  return plain ? s : YamlQuote(s);
}

}  // namespace

std::string EmitSpecYaml(const Draft& d, const std::string& file) {
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
  out +=
      "# Every value is from the config unless its comment says otherwise; check the\n"
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
    if (!q.scheme.empty()) Line(out, 2, "scheme", q.scheme, why("quantization.scheme"));
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
  if (!s.mixer_mlp) {
    Line(out, 0, "mixer_mlp", "false", "one block per layer: MLPs in `none` layers only");
  }
  if (s.mtp_layers) num("mtp_layers", s.mtp_layers);
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
    if (m.index_head_dim) {
      Line(out, 2, "index_heads", std::to_string(m.index_heads), "index_n_heads");
      Line(out, 2, "index_head_dim", std::to_string(m.index_head_dim), "index_head_dim");
      Line(out, 2, "index_topk", std::to_string(m.index_topk), "index_topk");
    }
  }
  if (s.mamba) {
    const MambaSpec& m = *s.mamba;
    out += "mamba:" + std::string(32, ' ') + "# " + why("mamba") + "\n";
    if (m.version == 2) {
      Line(out, 2, "version", "2");
      Line(out, 2, "heads", std::to_string(m.heads));
      Line(out, 2, "head_dim", std::to_string(m.head_dim));
      Line(out, 2, "groups", std::to_string(m.groups));
    }
    Line(out, 2, "d_state", std::to_string(m.d_state));
    Line(out, 2, "d_conv", std::to_string(m.d_conv));
    if (m.version == 1) {
      Line(out, 2, "expand", std::to_string(m.expand));
      Line(out, 2, "dt_rank", std::to_string(m.dt_rank));
    }
  }
  if (s.linear_attention) {
    const LinearAttentionSpec& la = *s.linear_attention;
    out += "linear_attention:" + std::string(21, ' ') + "# " + why("linear_attention") + "\n";
    Line(out, 2, "kind", la.kind);
    Line(out, 2, "key_heads", std::to_string(la.key_heads));
    Line(out, 2, "value_heads", std::to_string(la.value_heads));
    Line(out, 2, "key_head_dim", std::to_string(la.key_head_dim));
    Line(out, 2, "value_head_dim", std::to_string(la.value_head_dim));
    if (la.conv_kernel) Line(out, 2, "conv_kernel", std::to_string(la.conv_kernel));
  }
  out += "layer_groups:" + std::string(25, ' ') + "# " + why("layer_groups") + "\n";
  for (const LayerGroup& g : s.groups) {
    Line(out, 2, "- kind", std::string(LayerKindName(g.kind)));
    Line(out, 4, "layers", std::to_string(g.layers));
    if (g.every) {
      Line(out, 4, "every", std::to_string(g.every));
      Line(out, 4, "offset", std::to_string(g.offset));
    }
    if (!g.at.empty()) {
      std::string at;
      for (uint64_t i : g.at) at += (at.empty() ? "" : ", ") + std::to_string(i);
      Line(out, 4, "at", "[" + at + "]");
    }
    if (g.parallel) Line(out, 4, "parallel", "true");
    if (g.k_eq_v) Line(out, 4, "k_eq_v", "true");
    if (g.HoldsTokens() && g.kv_heads != 0 && g.kv_heads != s.kv_heads) {
      Line(out, 4, "kv_heads", std::to_string(g.kv_heads));
    }
    if (g.HoldsTokens() && g.head_dim != 0 && g.head_dim != s.head_dim) {
      Line(out, 4, "head_dim", std::to_string(g.head_dim));
    }
    if (g.HoldsTokens() && g.v_head_dim != 0 && g.v_head_dim != s.v_head_dim) {
      Line(out, 4, "v_head_dim", std::to_string(g.v_head_dim));
    }
    if (g.state_dtype_bytes == 4 && s.weight_dtype != "fp32") Line(out, 4, "state_dtype", "fp32");
    if (g.kind == LayerKind::kSliding) Line(out, 4, "window", std::to_string(g.window));
    if (g.kind == LayerKind::kChunked) Line(out, 4, "chunk", std::to_string(g.window));
    if (g.state_bytes) Line(out, 4, "state_bytes", std::to_string(g.state_bytes));
  }
  return out;
}

}  // namespace kvplan
