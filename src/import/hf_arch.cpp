// The architectures import-hf knows, and the spec each config.json
// describes: layers, widths, heads, context and weight shapes under each
// family's key names, with the transformers class defaults where a key is
// left out.
#include <fmt/format.h>

#include <filesystem>

#include "import/hf_draft.h"
#include "import/hf_import.h"
#include "plan/weights.h"
#include "spec/model_reader.h"
#include "spec/yaml_reader.h"
#include "util/checked.h"

namespace kvplan {
namespace {

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
    {"DeepseekV32ForCausalLM", "deepseek_v32", Family::kDeepseek, true, 163840, false, 128, 0},
    {"Qwen3NextForCausalLM", "qwen3_next", Family::kQwenNext, true, 32768, false, 2, 256},
    {"Qwen3_5MoeForConditionalGeneration", "qwen3_5_moe", Family::kQwenNext, true, 262144, false, 2,
     256},
    {"Qwen3_5ForConditionalGeneration", "qwen3_5", Family::kQwenNext, false, 262144, false, 4, 256},
    {"NemotronHForCausalLM", "nemotron_h", Family::kNemotronH, false, 4096, false, 8, 128},
    {"GraniteMoeHybridForCausalLM", "granitemoehybrid", Family::kGraniteHybrid, true, 4096, false,
     8, 0},
    {"FalconH1ForCausalLM", "falcon_h1", Family::kFalconH1, false, 8192, false, 8, 0},
    {"MiniMaxM1ForCausalLM", "minimax_m1", Family::kMiniMax, true, 10240000, false, 8, 128},
    {"MiniMaxText01ForCausalLM", "minimax_text_01", Family::kMiniMax, true, 10240000, false, 8,
     128},
    // Llama4TextConfig: max_position_embeddings 4096 x 32, 8 KV heads, head_dim 128.
    {"Llama4ForConditionalGeneration", "llama4", Family::kLlama4, true, 131072, false, 8, 128},
    {"Llama4ForCausalLM", "llama4_text", Family::kLlama4, true, 131072, false, 8, 128},
    // Gemma4TextConfig: head_dim 256 (sliding layers; global_head_dim 512 on full ones).
    {"Gemma4ForConditionalGeneration", "gemma4", Family::kGemma4, true, 131072, true, 0, 256},
    {"Gemma4ForCausalLM", "gemma4_text", Family::kGemma4, true, 131072, true, 0, 256},
};

const Arch& FindArch(const JsonNode& root, const std::string& file) {
  std::string name, type;
  JsonNode archs = Lookup(root, "architectures");
  if (archs.IsDefined() && archs.IsSequence() && archs.size() > 0 && archs[0].IsScalar()) {
    name = archs[0].Scalar();
  }
  if (JsonNode t = Lookup(root, "model_type"); t.IsDefined() && t.IsScalar()) type = t.Scalar();
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

// Layers, width and query heads.
void ReadShape(const Config& c, const Arch& a, Draft& d) {
  ModelSpec& s = d.s;
  const std::string an = a.name;
  const std::string& file = c.File();
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
}

// KV heads: explicit, the class default, or the query heads.
void ReadKvHeads(const Config& c, const Arch& a, Draft& d) {
  ModelSpec& s = d.s;
  const std::string& file = c.File();
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
      d.why["kv_heads"] =
          "multi_query: true without new_decoder_architecture: one shared K/V "
          "head (num_kv_heads is ignored in this mode)";
    } else {
      s.kv_heads = s.query_heads;
      d.why["kv_heads"] = "multi_query: false: one K/V head per query head (MHA)";
    }
  } else if (JsonNode list = c.Get("num_key_value_heads"); list.IsSequence()) {
    // One count per layer (0: a layer without attention): the groups split
    // by it (AttentionGroups); the model's kv_heads is the largest.
    if (list.size() != s.layers) {
      Fail("{}{}: {} entries for {} layers (num_hidden_layers)", PosOf(list, file).Prefix(),
           c.Name("num_key_value_heads"), list.size(), s.layers);
    }
    for (uint64_t i = 0; i < s.layers; ++i) {
      const uint64_t kv = ScalarU64(list[i], file, c.Name("num_key_value_heads"), true);
      if (kv != 0 && (kv > s.query_heads || s.query_heads % kv != 0)) {
        Fail("{}{}[{}]: {} KV heads do not divide the {} query heads",
             PosOf(list[i], file).Prefix(), c.Name("num_key_value_heads"), i, kv, s.query_heads);
      }
      d.layer_kv_heads.push_back(kv);
      s.kv_heads = std::max(s.kv_heads, kv);
    }
    if (s.kv_heads == 0) {
      Fail("{}{}: every layer has 0 KV heads", PosOf(list, file).Prefix(),
           c.Name("num_key_value_heads"));
    }
    d.why["kv_heads"] = c.Name("num_key_value_heads") + ": the largest of the per-layer list";
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
}

// Head width: an explicit head_dim wins over hidden / heads.
void ReadHeadDim(const Config& c, const Arch& a, Draft& d) {
  ModelSpec& s = d.s;
  const std::string an = a.name;
  const std::string& file = c.File();
  if (a.family == Family::kDeepseek) {
    MlaSpec m;
    m.kv_lora_rank = c.Req("kv_lora_rank", an);
    m.qk_rope_head_dim = c.Req("qk_rope_head_dim", an);
    m.qk_nope_head_dim = c.Req("qk_nope_head_dim", an);
    m.q_lora_rank = c.U("q_lora_rank").value_or(0);
    m.v_head_dim = c.Req("v_head_dim", an);
    // DeepSeek-V3.2's sparse attention: the lightning indexer's keys.
    if (std::optional<uint64_t> ihd = c.U("index_head_dim")) {
      m.index_head_dim = *ihd;
      m.index_heads = c.Req("index_n_heads", an);
      m.index_topk = c.Req("index_topk", an);
      d.header.push_back(fmt::format(
          "sparse attention: an indexer key of index_head_dim {} fp8 + scale per token and layer "
          "beside the latent; decode reads the top index_topk {} latents",
          m.index_head_dim, m.index_topk));
    }
    s.mla = m;
    s.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
    s.v_head_dim = m.v_head_dim;
    d.why["head_dim"] = fmt::format("q/k head = qk_nope_head_dim {} + qk_rope_head_dim {}",
                                    m.qk_nope_head_dim, m.qk_rope_head_dim);
    d.why["v_head_dim"] = "v_head_dim";
  } else if (std::optional<uint64_t> ahd =
                 a.family == Family::kNemotronH ? c.U("attention_head_dim") : std::nullopt) {
    s.head_dim = *ahd;
    d.why["head_dim"] = "attention_head_dim";
  } else if (std::optional<uint64_t> hd = c.U("head_dim")) {
    s.head_dim = *hd;
    d.why["head_dim"] = s.hidden_size % s.query_heads == 0 && s.hidden_size / s.query_heads != *hd
                            ? fmt::format("explicit {} (NOT hidden_size / heads = {})",
                                          c.Name("head_dim"), s.hidden_size / s.query_heads)
                            : "explicit " + c.Name("head_dim");
  } else if (a.default_head_dim != 0 && !c.Get("head_dim").IsDefined()) {
    s.head_dim = a.default_head_dim;
    d.why["head_dim"] = fmt::format("no head_dim: {} class default", a.model_type);
  } else {
    if (s.hidden_size % s.query_heads != 0) {
      Fail("{}: no head_dim and hidden_size {} is not a multiple of {} heads", file, s.hidden_size,
           s.query_heads);
    }
    s.head_dim = s.hidden_size / s.query_heads;
    d.why["head_dim"] =
        fmt::format("no head_dim: hidden_size / heads = {} / {}", s.hidden_size, s.query_heads);
  }

  if (s.v_head_dim == 0) s.v_head_dim = s.head_dim;
}

// Context, dtype and the shapes that size the weights.
void ReadWeightShapes(const Config& c, const Arch& a, Draft& d) {
  ModelSpec& s = d.s;
  const std::string& file = c.File();
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
    s.vocab_size = a.family == Family::kGemma3   ? 262208
                   : a.family == Family::kLlama4 ? 202048
                   : a.family == Family::kGemma4 ? 262144
                                                 : 32000;
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
  s.mtp_layers = std::min<uint64_t>(c.U("num_nextn_predict_layers").value_or(0), 16);
  std::optional<bool> tie = c.B("tie_word_embeddings");
  s.tie_embeddings = tie.value_or(a.default_tie);
  if (!tie) {
    d.why["tie_embeddings"] =
        fmt::format("not in config: {} default {}", a.model_type, a.default_tie);
  }
  bool classic = a.family == Family::kGpt2 || a.family == Family::kFalcon;
  // Nemotron-H's MLP is squared ReLU: up and down, no gate.
  s.mlp = classic || a.family == Family::kNemotronH ? "plain" : "gated";
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
    JsonNode dt = c.Get("mamba_dt_rank");
    mb.dt_rank = dt.IsDefined() && dt.IsScalar() && dt.Scalar() != "auto"
                     ? ScalarU64(dt, file, "mamba_dt_rank")
                     : CeilDiv(s.hidden_size, 16);
    if (mb.d_conv == 0) Fail("{}: mamba_d_conv must be positive", file);
    s.mamba = mb;
  }
}

}  // namespace

std::vector<std::string> SupportedHfArchitectures() {
  std::vector<std::string> out;
  for (const Arch& a : kArchs) out.emplace_back(a.name);
  return out;
}

Draft BuildDraft(const JsonNode& root, const std::string& file, const std::string& name) {
  if (!root.IsMap()) Fail("{}: expected a JSON object (a Hugging Face config.json)", file);
  const Arch& a = FindArch(root, file);
  JsonNode text = Lookup(root, "text_config");
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

  ReadShape(c, a, d);
  ReadKvHeads(c, a, d);
  ReadHeadDim(c, a, d);
  ReadWeightShapes(c, a, d);
  if (a.moe) ReadMoe(c, a, d);
  ReadQuantization(c, d);
  AttentionGroups(c, a, d);

  // The count plan/weights makes tensor by tensor (the one used for weight
  // bytes); without vocab_size or a dense intermediate_size it cannot count.
  if (!s.HasWeightShapes()) {
    Fail("{}: cannot count the parameters: the config gives no {}", file,
         s.vocab_size == 0 ? "vocab_size" : "intermediate_size");
  }
  s.params = CountParams(BuildModelTensors(s));
  d.why["params"] = "COUNTED from the config shapes, tensor by tensor; not a published count";
  return d;
}

}  // namespace kvplan
