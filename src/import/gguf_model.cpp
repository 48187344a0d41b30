// GGUF metadata turned into a ModelSpec: the keys llama.cpp reads for each
// architecture ({arch}.block_count, .embedding_length, .attention.*,
// .context_length, .expert_*, .ssm.*), with llama.cpp's per-architecture
// defaults where a file leaves a key out (the sliding-window patterns), and
// the weights from the tensor infos. Layer kinds per layer are gathered first
// and then written as kvplan's periodic layer groups (gguf_layers.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <optional>

#include "import/gguf.h"
#include "import/gguf_internal.h"
#include "util/checked.h"

namespace kvplan {

GgufMeta::GgufMeta(const GgufFile& f) : f_(f) {
  const GgufKv* a = f.Find("general.architecture");
  if (a == nullptr) Fail("{}: general.architecture: missing (every GGUF model names it)", f.path);
  if (a->type != GgufType::kString || a->text.empty()) {
    FailKey(*a, fmt::format("expected a non-empty string, found {}", GgufTypeName(a->type)));
  }
  arch_ = a->text;
}

void GgufMeta::FailKey(const GgufKv& kv, std::string_view msg) const {
  Fail("{}: byte {}: {}: {}", f_.path, kv.offset, kv.key, msg);
}

SourcePos GgufMeta::PosOf(std::string_view suffix) const {
  const GgufKv* kv = Kv(suffix);
  if (kv == nullptr) return SourcePos{f_.path, 0, 0};
  return SourcePos{fmt::format("{}: byte {}: {}", f_.path, kv->offset, kv->key), 0, 0};
}

const GgufKv* GgufMeta::Kv(std::string_view suffix) const {
  return f_.Find(arch_ + "." + std::string(suffix));
}

uint64_t GgufMeta::Number(const GgufKv& kv, const GgufNumber& n) const {
  if (n.is_float) {
    FailKey(kv, "expected an unsigned integer, found a float");
  }
  if (n.negative) FailKey(kv, "expected an unsigned integer, found a negative value");
  return n.u;
}

std::optional<uint64_t> GgufMeta::U(std::string_view suffix) const {
  const GgufKv* kv = Kv(suffix);
  if (kv == nullptr) return std::nullopt;
  if (kv->type == GgufType::kString || kv->type == GgufType::kArray) {
    FailKey(*kv, fmt::format("expected an unsigned integer, found {}", GgufTypeName(kv->type)));
  }
  return Number(*kv, kv->number);
}

uint64_t GgufMeta::Req(std::string_view suffix) const {
  std::optional<uint64_t> v = U(suffix);
  if (!v) {
    Fail("{}: {}.{}: missing (llama.cpp requires it for '{}' models)", f_.path, arch_, suffix,
         arch_);
  }
  return *v;
}

std::optional<std::vector<uint64_t>> GgufMeta::PerLayer(std::string_view suffix,
                                                        uint64_t layers) const {
  const GgufKv* kv = Kv(suffix);
  if (kv == nullptr) return std::nullopt;
  if (kv->type != GgufType::kArray) {
    std::optional<uint64_t> v = U(suffix);
    return std::vector<uint64_t>(layers, *v);
  }
  if (kv->elem == GgufType::kString) FailKey(*kv, "expected numbers, found an array of strings");
  if (kv->count != layers) {
    FailKey(*kv, fmt::format("an array of {} values, but block_count is {} (one per layer)",
                             kv->count, layers));
  }
  if (!kv->kept) FailKey(*kv, "the array is too long for kvplan to keep");
  std::vector<uint64_t> out;
  out.reserve(layers);
  for (const GgufNumber& n : kv->items) out.push_back(Number(*kv, n));
  return out;
}

std::optional<std::string> GgufMeta::Str(std::string_view key) const {
  const GgufKv* kv = f_.Find(key);
  if (kv == nullptr || kv->type != GgufType::kString || kv->text_cut) return std::nullopt;
  return kv->text;
}

const GgufTensor* GgufMeta::Tensor(std::string_view name) const {
  for (const GgufTensor& t : f_.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

bool GgufMeta::HasTensorPart(std::string_view part) const {
  for (const GgufTensor& t : f_.tensors) {
    if (t.name.find(part) != std::string::npos) return true;
  }
  return false;
}

namespace {

// llama.cpp's general.file_type (llama.h's LLAMA_FTYPE_*): the mix's name.
constexpr std::array<std::pair<uint64_t, std::string_view>, 35> kFileTypes = {{
    {0, "F32"},       {1, "F16"},       {2, "Q4_0"},      {3, "Q4_1"},    {7, "Q8_0"},
    {8, "Q5_0"},      {9, "Q5_1"},      {10, "Q2_K"},     {11, "Q3_K_S"}, {12, "Q3_K_M"},
    {13, "Q3_K_L"},   {14, "Q4_K_S"},   {15, "Q4_K_M"},   {16, "Q5_K_S"}, {17, "Q5_K_M"},
    {18, "Q6_K"},     {19, "IQ2_XXS"},  {20, "IQ2_XS"},   {21, "Q2_K_S"}, {22, "IQ3_XS"},
    {23, "IQ3_XXS"},  {24, "IQ1_S"},    {25, "IQ4_NL"},   {26, "IQ3_S"},  {27, "IQ3_M"},
    {28, "IQ2_S"},    {29, "IQ2_M"},    {30, "IQ4_XS"},   {31, "IQ1_M"},  {32, "BF16"},
    {33, "Q4_0_4_4"}, {34, "Q4_0_4_8"}, {35, "Q4_0_8_8"}, {36, "TQ1_0"},  {37, "TQ2_0"},
}};

// Names in the GGUF file as they read in kvplan's names: lower case, and
// anything but letters, digits, '.', '-' and '_' as '-'.
std::string SpecName(std::string_view raw) {
  std::string out;
  for (char ch : raw) {
    const auto u = static_cast<unsigned char>(ch);
    out += std::isalnum(u) || ch == '.' || ch == '-' || ch == '_'
               ? static_cast<char>(std::tolower(u))
               : '-';
    if (out.size() >= 128) break;
  }
  return out;
}

// The Hugging Face class of the architectures whose weights plan/weights
// counts by class name; others keep the GGUF name.
std::string ArchitectureName(const std::string& arch) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 13> kNames = {{
      {"llama", "LlamaForCausalLM"},
      {"qwen2", "Qwen2ForCausalLM"},
      {"qwen2moe", "Qwen2MoeForCausalLM"},
      {"qwen3", "Qwen3ForCausalLM"},
      {"qwen3moe", "Qwen3MoeForCausalLM"},
      {"gemma2", "Gemma2ForCausalLM"},
      {"gemma3", "Gemma3ForCausalLM"},
      {"deepseek2", "DeepseekV3ForCausalLM"},
      {"falcon", "FalconForCausalLM"},
      {"gpt2", "GPT2LMHeadModel"},
      {"jamba", "JambaForCausalLM"},
      {"gpt-oss", "GptOssForCausalLM"},
      {"phi3", "Phi3ForCausalLM"},
  }};
  for (const auto& [gguf, hf] : kNames) {
    if (gguf == arch) return std::string(hf);
  }
  return "gguf:" + arch;
}

// Widths, heads and context.
void ReadShape(const GgufMeta& m, ModelSpec& s) {
  s.layers = m.Req("block_count");
  s.field_pos["layers"] = m.PosOf("block_count");
  if (s.layers == 0) m.FailKey(*m.Kv("block_count"), "a model needs at least one layer");
  if (s.layers > ModelLimits::kMaxLayers) {
    m.FailKey(*m.Kv("block_count"),
              fmt::format("{} layers is over kvplan's limit of {} (see docs/reliability.md)",
                          s.layers, ModelLimits::kMaxLayers));
  }
  s.hidden_size = m.Req("embedding_length");
  s.field_pos["hidden_size"] = m.PosOf("embedding_length");
  if (s.hidden_size == 0) m.FailKey(*m.Kv("embedding_length"), "must be a positive integer");
  s.max_context = m.Req("context_length");
  s.field_pos["max_context"] = m.PosOf("context_length");
}

// Weights: exact bytes and parameters from the tensor infos, the weight
// dtype from the type that holds most of the bytes, and the shapes that
// plan/weights needs to split them over GPUs.
void ReadWeights(const GgufMeta& m, ModelSpec& s) {
  const GgufFile& f = m.File();
  uint64_t params = 0;
  std::vector<std::pair<const GgmlType*, uint64_t>> by_type;
  for (const GgufTensor& t : f.tensors) {
    params = CheckedAdd(params, t.elements, "GGUF parameter count");
    if (t.dims.size() < 2) continue;  // norms and biases stay F32 in every mix
    auto it = std::find_if(by_type.begin(), by_type.end(),
                           [&](const auto& p) { return p.first == t.type; });
    if (it == by_type.end()) {
      by_type.emplace_back(t.type, t.bytes);
    } else {
      it->second += t.bytes;  // bounded by the file size
    }
  }
  if (f.tensors.empty()) Fail("{}: the file lists no tensors (a vocabulary-only GGUF?)", f.path);
  s.params = params;
  s.checkpoint_bytes = f.tensor_bytes;
  const GgmlType* main =
      by_type.empty()
          ? f.tensors[0].type
          : std::max_element(by_type.begin(), by_type.end(), [](const auto& a, const auto& b) {
              return a.second < b.second;
            })->first;
  std::string label(main->name);
  if (const GgufKv* ft = f.Find("general.file_type");
      ft != nullptr && ft->type != GgufType::kString && ft->type != GgufType::kArray &&
      !ft->number.is_float && !ft->number.negative) {
    std::string_view name = GgufFileTypeName(ft->number.u);
    if (!name.empty()) label = std::string(name);
  }
  s.checkpoint_bytes_from = "GGUF tensor infos (" + label + ")";
  const std::string_view t = main->name;
  if (t == "F32" || t == "F16" || t == "BF16") {
    s.weight_dtype = t == "F32" ? "fp32" : t == "F16" ? "fp16" : "bf16";
  } else {
    // llama.cpp computes in f16 and caches f16 by default; the quantized
    // format is the nearest kvplan format, for when the weights are counted
    // from the architecture rather than taken from checkpoint_bytes.
    s.weight_dtype = "fp16";
    QuantSpec q;
    const uint64_t bits_x100 = main->bytes * 800 / main->block;
    q.format = t == "MXFP4" ? "mxfp4" : bits_x100 >= 750 ? "int8" : "int4";
    q.group_size = q.format == "int4" ? main->block : 0;
    s.quantization = q;
  }
  // Shapes: vocabulary from the key or the embedding's rows.
  const GgufTensor* embd = m.Tensor("token_embd.weight");
  if (std::optional<uint64_t> v = m.U("vocab_size")) {
    s.vocab_size = *v;
  } else if (embd != nullptr && embd->dims.size() >= 2) {
    s.vocab_size = embd->dims[1];
  } else if (const GgufKv* tok = f.Find("tokenizer.ggml.tokens");
             tok != nullptr && tok->type == GgufType::kArray) {
    s.vocab_size = tok->count;
  }
  if (std::optional<std::vector<uint64_t>> ffn = m.PerLayer("feed_forward_length", s.layers)) {
    s.intermediate_size = *std::max_element(ffn->begin(), ffn->end());
  } else if (const GgufTensor* up = m.Tensor("blk.0.ffn_up.weight");
             up != nullptr && up->dims.size() >= 2) {
    s.intermediate_size = up->dims[1];
  }
  s.tie_embeddings = m.Tensor("output.weight") == nullptr;
  s.mlp = m.HasTensorPart("ffn_gate") || !m.HasTensorPart("ffn_up") ? "gated" : "plain";
  s.norm = m.HasTensorPart("attn_norm.bias") ? "layernorm" : "rms";
  s.attention_bias = m.HasTensorPart("attn_q.bias") || m.HasTensorPart("attn_qkv.bias") ||
                     m.HasTensorPart("attn_k.bias");
}

// Experts: the keys, and which layers hold them from the tensor names
// (blk.N.ffn_*_exps): leading dense layers, or every period-th layer.
void ReadMoe(const GgufMeta& m, ModelSpec& s) {
  const uint64_t experts = m.U("expert_count").value_or(0);
  if (experts == 0) return;
  MoeSpec moe;
  moe.experts = experts;
  moe.experts_per_token = m.U("expert_used_count").value_or(0);
  moe.shared_experts = m.U("expert_shared_count").value_or(0);
  moe.intermediate_size = m.U("expert_feed_forward_length").value_or(s.intermediate_size);
  moe.dense_layers = m.U("leading_dense_block_count").value_or(0);
  if (std::optional<uint64_t> step = m.U("interleave_moe_layer_step"); step && *step > 1) {
    moe.period = *step;
    moe.offset = *step - 1;
  }
  std::vector<uint64_t> moe_layers;
  for (const GgufTensor& t : m.File().tensors) {
    if (t.name.rfind("blk.", 0) != 0 || t.name.find("_exps") == std::string::npos) continue;
    const uint64_t i = std::strtoull(t.name.c_str() + 4, nullptr, 10);
    if (i < s.layers && (moe_layers.empty() || moe_layers.back() != i)) moe_layers.push_back(i);
  }
  std::sort(moe_layers.begin(), moe_layers.end());
  moe_layers.erase(std::unique(moe_layers.begin(), moe_layers.end()), moe_layers.end());
  if (!moe_layers.empty()) {
    const bool tail = moe_layers.size() == s.layers - moe_layers[0];
    if (tail) {
      moe.dense_layers = moe_layers[0];
      moe.period = 1;
      moe.offset = 0;
    } else if (moe_layers.size() >= 2) {
      const uint64_t p = moe_layers[1] - moe_layers[0];
      bool periodic = p > 0 && moe_layers[0] < p;
      for (size_t k = 0; periodic && k < moe_layers.size(); ++k) {
        periodic = moe_layers[k] == moe_layers[0] + k * p;
      }
      if (periodic && moe_layers.back() + p >= s.layers) {
        moe.dense_layers = 0;
        moe.period = p;
        moe.offset = moe_layers[0];
      }
    }
  }
  if (moe.intermediate_size == 0) {
    m.FailKey(*m.Kv("expert_count"),
              "experts without expert_feed_forward_length or feed_forward_length");
  }
  s.moe = moe;
  s.field_pos["moe"] = m.PosOf("expert_count");
  // A pure MoE model has no dense MLP width of its own.
  if (!s.HasDenseMlp() && s.intermediate_size == 0) s.intermediate_size = moe.intermediate_size;
}

}  // namespace

std::string_view GgufFileTypeName(uint64_t file_type) {
  for (const auto& [id, name] : kFileTypes) {
    if (id == file_type) return name;
  }
  if (file_type == 38) return "MXFP4_MOE";
  return "";
}

ModelSpec GgufToModel(const GgufFile& f) {
  GgufMeta m(f);
  ModelSpec s;
  s.source = f.path;
  s.origin = f.path;
  s.architecture = ArchitectureName(m.Arch());
  std::optional<std::string> name = m.Str("general.name");
  s.name = SpecName(name && !name->empty() ? *name : std::filesystem::path(f.path).stem().string());
  if (s.name.empty()) s.name = "gguf-model";
  ReadShape(m, s);
  ReadWeights(m, s);
  ReadAttention(m, s);
  ReadMoe(m, s);
  ValidateModel(s);
  return s;
}

ModelSpec LoadGgufModel(const std::string& path) {
  return GgufToModel(ReadGgufFile(path));
}

ModelSpec GgufModelFromBytes(std::string_view bytes, const std::string& path) {
  return GgufToModel(ParseGgufBytes(bytes, path));
}

}  // namespace kvplan
