#include "spec/model_reader.h"

#include <algorithm>

#include "spec/weight_format.h"
#include "spec/yaml_reader.h"
#include "util/suggest.h"

namespace kvplan {
namespace {

LayerKind ParseKind(const std::string& s, const SourcePos& pos) {
  static const std::vector<std::string> kNames = {"full",  "sliding", "chunked", "mla",
                                                  "state", "shared",  "none"};
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (s == kNames[i]) return static_cast<LayerKind>(i);
  }
  Fail(
      "{}kind: unknown layer kind '{}' (known: full, sliding, chunked, mla, state, shared, "
      "none){}",
      pos.Prefix(), s, DidYouMean(s, kNames));
}

std::string ParseWeightDtype(const std::string& s, const SourcePos& pos,
                             std::string_view field = "weight_dtype") {
  static const std::vector<std::string> kNames = {"fp32", "fp16", "bf16",  "fp8",
                                                  "int8", "int4", "nvfp4", "mxfp4"};
  for (const std::string& n : kNames) {
    if (s == n) return s;
  }
  if (s == "float32") return "fp32";
  if (s == "float16") return "fp16";
  if (s == "bfloat16") return "bf16";
  Fail(
      "{}{}: unknown weight dtype '{}' (known: fp32, fp16, bf16, fp8, int8, int4, "
      "nvfp4, mxfp4){}",
      pos.Prefix(), field, s, DidYouMean(s, kNames));
}

// The `quantization:` block: the checkpoint's quantization_config.
QuantSpec ParseQuantization(MapReader& r, const ModelSpec& s, const std::string& file) {
  MapReader q(r.Child("quantization"), file, "quantization",
              {"format", "scheme", "block", "group_size", "parts"});
  QuantSpec out;
  out.format = ParseWeightDtype(q.Str("format"), q.Pos("format"), "format");
  if (out.format == "fp32" || out.format == "fp16" || out.format == "bf16") {
    Fail(
        "{}format: {} is not a quantized format (fp8, int8, int4, nvfp4, mxfp4); an unquantized "
        "checkpoint has no quantization block, its weight_dtype says it all",
        q.Pos("format").Prefix(), out.format);
  }
  // A field only one format takes, within kvplan's width limit; 0 when absent.
  const auto only_for = [&](const char* key, const char* format, const char* what) -> uint64_t {
    const std::optional<uint64_t> v = q.OptU64(key);
    if (!v) return 0;
    if (out.format != format) {
      Fail("{}{}: only {} weights take a {}, not {}", q.Pos(key).Prefix(), key, format, what,
           out.format);
    }
    if (*v > ModelLimits::kMaxWidth) {
      Fail("{}{}: {} is over kvplan's limit of {}", q.Pos(key).Prefix(), key, *v,
           ModelLimits::kMaxWidth);
    }
    return *v;
  };
  // The stored layout (spec/weight_format.h), e.g. gptq: one of the format's.
  if (std::optional<std::string> scheme = q.OptStr("scheme")) {
    WeightFormat layout;
    try {
      layout = FindWeightFormat(*scheme);
    } catch (const Error& e) {
      Fail("{}scheme: {}", q.Pos("scheme").Prefix(), e.what());
    }
    if (layout.name != out.format) {
      Fail("{}scheme: {} stores {} weights, not {}", q.Pos("scheme").Prefix(), *scheme, layout.name,
           out.format);
    }
    out.scheme = *scheme;
  }
  out.block = only_for("block", "fp8", "block (weight_block_size)");
  out.group_size = only_for("group_size", "int4", "group_size");
  if (q.Has("parts")) {
    const SourcePos pos = q.Pos("parts");
    YAML::Node parts = q.Child("parts");
    if (!parts.IsSequence() || parts.size() == 0) {
      Fail("{}parts: expected a non-empty list, e.g. [experts]", pos.Prefix());
    }
    static const std::vector<std::string> kParts = {"attention", "mlp", "experts", "shared_experts",
                                                    "mamba"};
    for (const YAML::Node& p : parts) {
      const SourcePos at = PosOf(p, file);
      if (!p.IsScalar()) Fail("{}parts: expected a part name", at.Prefix());
      const std::string name = p.Scalar();
      if (std::find(kParts.begin(), kParts.end(), name) == kParts.end()) {
        Fail(
            "{}parts: unknown part '{}' (known: attention, mlp, experts, shared_experts, "
            "mamba){}",
            at.Prefix(), name, DidYouMean(name, kParts));
      }
      if (std::find(out.parts.begin(), out.parts.end(), name) != out.parts.end()) {
        Fail("{}parts: '{}' is listed twice", at.Prefix(), name);
      }
      const bool missing = ((name == "experts" || name == "shared_experts") && !s.moe) ||
                           (name == "shared_experts" && s.moe && s.moe->shared_experts == 0) ||
                           (name == "mamba" && !s.mamba);
      if (missing) Fail("{}parts: the model has no {}", at.Prefix(), name);
      if (name == "mlp" && !s.HasDenseMlp()) {
        Fail(
            "{}parts: the model has no dense mlp layers (every layer is MoE: experts, "
            "shared_experts)",
            at.Prefix());
      }
      out.parts.push_back(name);
    }
  }
  q.Finish();
  if ((out.block != 0 || !out.parts.empty()) && !s.HasWeightShapes()) {
    Fail(
        "{}quantization: {} needs the weight shapes (vocab_size, and intermediate_size for "
        "dense MLP layers); without them the weights are `params` spread over the layers",
        q.Pos().Prefix(), out.block != 0 ? "block" : "parts");
  }
  return out;
}

// The `moe:` block: the experts and which layers are MoE.
MoeSpec ParseMoe(const YAML::Node& node, const std::string& file) {
  MapReader m(node, file, "moe",
              {"experts", "experts_per_token", "intermediate_size", "shared_experts",
               "dense_layers", "period", "offset"});
  MoeSpec moe;
  moe.experts = m.U64("experts");
  moe.experts_per_token = m.U64("experts_per_token");
  moe.intermediate_size = m.U64("intermediate_size");
  moe.shared_experts = m.OptU64("shared_experts", true).value_or(0);
  moe.dense_layers = m.OptU64("dense_layers", true).value_or(0);
  moe.period = m.OptU64("period").value_or(1);
  moe.offset = m.OptU64("offset", true).value_or(0);
  m.Finish();
  return moe;
}

// The `mla:` block: multi-head latent attention's ranks and head sizes.
MlaSpec ParseMla(const YAML::Node& node, const std::string& file) {
  MapReader m(node, file, "mla",
              {"kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "q_lora_rank", "v_head_dim",
               "index_heads", "index_head_dim", "index_topk"});
  MlaSpec mla;
  mla.kv_lora_rank = m.U64("kv_lora_rank");
  mla.qk_rope_head_dim = m.U64("qk_rope_head_dim");
  mla.qk_nope_head_dim = m.U64("qk_nope_head_dim");
  mla.q_lora_rank = m.OptU64("q_lora_rank").value_or(0);
  mla.v_head_dim = m.U64("v_head_dim");
  // DeepSeek-V3.2's indexer: all three keys or none.
  const bool any_index = m.Has("index_heads") || m.Has("index_head_dim") || m.Has("index_topk");
  if (any_index) {
    mla.index_heads = m.U64("index_heads");
    mla.index_head_dim = m.U64("index_head_dim");
    mla.index_topk = m.U64("index_topk");
  }
  m.Finish();
  return mla;
}

// The `mamba:` block: the state-space layers' sizes.
MambaSpec ParseMamba(const YAML::Node& node, const std::string& file) {
  MapReader m(node, file, "mamba",
              {"version", "d_state", "d_conv", "expand", "dt_rank", "heads", "head_dim", "groups"});
  MambaSpec mb;
  mb.version = m.OptU64("version").value_or(1);
  if (mb.version != 1 && mb.version != 2) {
    Fail("{}version: {} is not a Mamba version kvplan knows (1: Mamba, 2: Mamba-2)",
         m.Pos("version").Prefix(), mb.version);
  }
  mb.d_state = m.U64("d_state");
  mb.d_conv = m.U64("d_conv");
  if (mb.version == 1) {
    mb.expand = m.U64("expand");
    mb.dt_rank = m.OptU64("dt_rank").value_or(0);
    for (const char* key : {"heads", "head_dim", "groups"}) {
      if (m.Has(key))
        Fail("{}{}: only Mamba-2 (version: 2) takes {}", m.Pos(key).Prefix(), key, key);
    }
  } else {
    mb.expand = m.OptU64("expand").value_or(0);  // documentation: d_inner is heads x head_dim
    mb.heads = m.U64("heads");
    mb.head_dim = m.U64("head_dim");
    mb.groups = m.U64("groups");
    if (m.Has("dt_rank")) {
      Fail("{}dt_rank: Mamba-2 has no dt_rank (one dt per head)", m.Pos("dt_rank").Prefix());
    }
    if (mb.heads % mb.groups != 0) {
      Fail("{}groups: {} does not divide the {} heads", m.Pos("groups").Prefix(), mb.groups,
           mb.heads);
    }
  }
  m.Finish();
  return mb;
}

// The `linear_attention:` block: Gated DeltaNet or lightning attention heads.
LinearAttentionSpec ParseLinearAttention(const YAML::Node& node, const std::string& file) {
  MapReader m(
      node, file, "linear_attention",
      {"kind", "key_heads", "value_heads", "key_head_dim", "value_head_dim", "conv_kernel"});
  LinearAttentionSpec la;
  la.kind = m.Str("kind");
  static const std::vector<std::string> kKinds = {"gated_deltanet", "lightning"};
  if (la.kind != kKinds[0] && la.kind != kKinds[1]) {
    Fail("{}kind: unknown linear attention '{}' (known: gated_deltanet, lightning){}",
         m.Pos("kind").Prefix(), la.kind, DidYouMean(la.kind, kKinds));
  }
  la.key_heads = m.U64("key_heads");
  la.value_heads = m.U64("value_heads");
  la.key_head_dim = m.U64("key_head_dim");
  la.value_head_dim = m.U64("value_head_dim");
  if (la.kind == "gated_deltanet") {
    la.conv_kernel = m.U64("conv_kernel");
    if (la.value_heads % la.key_heads != 0) {
      Fail("{}value_heads: {} is not a multiple of the {} key heads", m.Pos("value_heads").Prefix(),
           la.value_heads, la.key_heads);
    }
  } else {
    if (m.Has("conv_kernel")) {
      Fail("{}conv_kernel: lightning attention has no convolution", m.Pos("conv_kernel").Prefix());
    }
    if (la.key_heads != la.value_heads) {
      Fail(
          "{}value_heads: lightning attention has one state per head: value_heads {} must equal "
          "key_heads {}",
          m.Pos("value_heads").Prefix(), la.value_heads, la.key_heads);
    }
  }
  m.Finish();
  return la;
}

// A group's `at:` list: layer indices, ascending, each once.
std::vector<uint64_t> ParseLayerList(MapReader& g, const std::string& file) {
  const YAML::Node list = g.Child("at");
  const SourcePos pos = g.Pos("at");
  if (!list.IsSequence() || list.size() == 0) {
    Fail("{}at: expected a non-empty list of layer indices, e.g. [3, 7, 12]", pos.Prefix());
  }
  if (list.size() > ModelLimits::kMaxLayers) {
    Fail("{}at: {} layers is over kvplan's limit of {}", pos.Prefix(), list.size(),
         ModelLimits::kMaxLayers);
  }
  std::vector<uint64_t> out;
  for (const YAML::Node& n : list) {
    const uint64_t i = ScalarU64(n, file, "at", true);
    if (!out.empty() && i <= out.back()) {
      Fail("{}at: layer {} {} (list the layers once each, ascending)", PosOf(n, file).Prefix(), i,
           i == out.back() ? "is listed twice" : "comes after a higher layer");
    }
    out.push_back(i);
  }
  return out;
}

// One entry of `layer_groups:` (the `i`th): its kind, layers and shape.
LayerGroup ParseLayerGroup(const YAML::Node& node, const std::string& file, size_t i) {
  MapReader g(node, file, fmt::format("layer_groups[{}]", i),
              {"kind", "layers", "every", "offset", "at", "parallel", "window", "chunk", "kv_heads",
               "head_dim", "v_head_dim", "state_bytes", "state_dtype", "k_eq_v"});
  LayerGroup lg;
  lg.pos = g.Pos();
  lg.kind = ParseKind(g.Str("kind"), g.Pos("kind"));
  lg.every = g.OptU64("every").value_or(0);
  lg.offset = g.OptU64("offset", true).value_or(0);
  if (g.Has("offset") && lg.every == 0) {
    Fail("{}offset: given without 'every'", g.Pos("offset").Prefix());
  }
  if (g.Has("at")) {
    lg.at = ParseLayerList(g, file);
    if (lg.every != 0) Fail("{}at: a group takes 'at' or 'every', not both", g.Pos("at").Prefix());
  }
  // With `at`, the count is the list's length (a written `layers` must agree).
  lg.layers = lg.at.empty() || g.Has("layers") ? g.U64("layers") : lg.at.size();
  lg.parallel = g.OptBool("parallel").value_or(false);
  lg.k_eq_v = g.OptBool("k_eq_v").value_or(false);
  if (lg.k_eq_v && lg.kind != LayerKind::kFull && lg.kind != LayerKind::kSliding &&
      lg.kind != LayerKind::kChunked) {
    Fail(
        "{}k_eq_v: only full, sliding and chunked groups take k_eq_v (their values come from "
        "the key projection)",
        g.Pos("k_eq_v").Prefix());
  }
  if (std::optional<std::string> dtype = g.OptStr("state_dtype")) {
    if (lg.kind != LayerKind::kState) {
      Fail("{}state_dtype: only state groups take state_dtype", g.Pos("state_dtype").Prefix());
    }
    const std::string d = ParseWeightDtype(*dtype, g.Pos("state_dtype"), "state_dtype");
    if (d != "fp32" && d != "fp16" && d != "bf16") {
      Fail("{}state_dtype: {} is not a state dtype (fp32, fp16, bf16)",
           g.Pos("state_dtype").Prefix(), d);
    }
    lg.state_dtype_bytes = d == "fp32" ? 4 : 2;
  }
  lg.window = g.OptU64("window").value_or(0);
  if (auto chunk = g.OptU64("chunk")) {
    if (lg.kind != LayerKind::kChunked) {
      Fail("{}chunk: only chunked groups take a chunk", g.Pos("chunk").Prefix());
    }
    lg.window = *chunk;
  }
  if (lg.kind == LayerKind::kChunked && g.Has("window")) {
    Fail("{}window: a chunked group takes 'chunk', not 'window'", g.Pos("window").Prefix());
  }
  lg.kv_heads = g.OptU64("kv_heads").value_or(0);
  lg.head_dim = g.OptU64("head_dim").value_or(0);
  lg.v_head_dim = g.OptU64("v_head_dim").value_or(0);
  lg.state_bytes = g.OptU64("state_bytes").value_or(0);
  if (lg.state_bytes != 0 && lg.kind != LayerKind::kState) {
    Fail("{}state_bytes: only state groups take state_bytes", g.Pos("state_bytes").Prefix());
  }
  if (lg.state_bytes > ModelLimits::kMaxStateBytes) {
    Fail("{}state_bytes: {} is over kvplan's limit of {} (see docs/reliability.md)",
         g.Pos("state_bytes").Prefix(), lg.state_bytes, ModelLimits::kMaxStateBytes);
  }
  g.Finish();
  return lg;
}

// The `layer_groups:` list, into s.groups.
void ParseLayerGroups(MapReader& r, const std::string& file, ModelSpec& s) {
  YAML::Node groups = r.Child("layer_groups");
  if (!groups.IsSequence() || groups.size() == 0) {
    Fail("{}layer_groups: expected a non-empty list of groups", r.Pos("layer_groups").Prefix());
  }
  if (groups.size() > ModelLimits::kMaxLayerGroups) {
    Fail("{}layer_groups: {} groups is over kvplan's limit of {} (see docs/reliability.md)",
         r.Pos("layer_groups").Prefix(), groups.size(), ModelLimits::kMaxLayerGroups);
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    s.groups.push_back(ParseLayerGroup(groups[i], file, i));
  }
}

}  // namespace

ModelSpec ParseModelYaml(const std::string& text, const std::string& file) {
  YAML::Node root = ParseYaml(text, file);
  MapReader r(root, file, "model spec",
              {"name",
               "hf_repo",
               "source",
               "architecture",
               "layers",
               "hidden_size",
               "query_heads",
               "kv_heads",
               "head_dim",
               "v_head_dim",
               "max_context",
               "params",
               "weight_dtype",
               "vocab_size",
               "intermediate_size",
               "tie_embeddings",
               "mlp",
               "attention_bias",
               "norm",
               "mtp_layers",
               "attention",
               "params_source",
               "moe",
               "mla",
               "mamba",
               "quantization",
               "layer_groups",
               "linear_attention",
               "mixer_mlp"});
  ModelSpec s;
  s.origin = file;
  for (const auto& it : root) {
    s.field_pos[it.first.Scalar()] = r.Pos(it.first.Scalar());
  }
  s.name = r.Str("name");
  CheckNameChars(s.name, r.Pos("name").Prefix(), "name");
  s.hf_repo = r.OptStr("hf_repo").value_or("");
  CheckNameChars(s.hf_repo, r.Pos("hf_repo").Prefix(), "hf_repo");
  s.source = r.Str("source");
  s.architecture = r.OptStr("architecture").value_or("");
  s.layers = r.U64("layers");
  s.hidden_size = r.U64("hidden_size");
  s.query_heads = r.U64("query_heads");
  s.kv_heads = r.U64("kv_heads");
  s.head_dim = r.U64("head_dim");
  s.v_head_dim = r.OptU64("v_head_dim").value_or(0);
  s.max_context = r.U64("max_context");
  s.params = r.U64("params");
  s.weight_dtype = ParseWeightDtype(r.Str("weight_dtype"), r.Pos("weight_dtype"));
  s.vocab_size = r.OptU64("vocab_size").value_or(0);
  s.intermediate_size = r.OptU64("intermediate_size").value_or(0);
  s.tie_embeddings = r.OptBool("tie_embeddings").value_or(false);
  s.mlp = r.OptStr("mlp").value_or("gated");
  if (s.mlp != "gated" && s.mlp != "plain") {
    Fail("{}mlp: must be 'gated' or 'plain', got '{}'", r.Pos("mlp").Prefix(), s.mlp);
  }
  s.attention_bias = r.OptBool("attention_bias").value_or(false);
  s.norm = r.OptStr("norm").value_or("rms");
  if (s.norm != "rms" && s.norm != "layernorm") {
    Fail("{}norm: must be 'rms' or 'layernorm', got '{}'", r.Pos("norm").Prefix(), s.norm);
  }
  s.mixer_mlp = r.OptBool("mixer_mlp").value_or(true);
  s.mtp_layers = r.OptU64("mtp_layers").value_or(0);
  if (s.mtp_layers > 16) {
    Fail("{}mtp_layers: {} multi-token-prediction layers is more than 16",
         r.Pos("mtp_layers").Prefix(), s.mtp_layers);
  }
  s.attention_stated = r.OptStr("attention").value_or("");
  r.OptStr("params_source");  // documentation only

  if (r.Has("moe")) {
    s.moe = ParseMoe(r.Child("moe"), file);
  } else {
    r.OptStr("moe");
  }
  if (r.Has("mla")) {
    s.mla = ParseMla(r.Child("mla"), file);
  } else {
    r.OptStr("mla");
  }
  if (r.Has("mamba")) {
    s.mamba = ParseMamba(r.Child("mamba"), file);
  } else {
    r.OptStr("mamba");
  }
  if (r.Has("linear_attention")) {
    s.linear_attention = ParseLinearAttention(r.Child("linear_attention"), file);
  } else {
    r.OptStr("linear_attention");
  }
  if (r.Has("quantization")) {
    s.quantization = ParseQuantization(r, s, file);
  } else {
    r.OptStr("quantization");
  }
  if (r.Has("layer_groups")) {
    ParseLayerGroups(r, file, s);
  } else {
    r.OptStr("layer_groups");
  }
  r.Finish();
  ValidateModel(s);
  return s;
}

}  // namespace kvplan
