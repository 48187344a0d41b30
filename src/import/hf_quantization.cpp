// weight_dtype and quantization_config of a config.json: the dtype the
// weights load in and, where kvplan has the format, how they are quantized.
#include <fmt/format.h>

#include <cctype>
#include <map>
#include <set>
#include <vector>

#include "import/hf_draft.h"
#include "spec/model_reader.h"

namespace kvplan {

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

namespace {

// Reads quantization_config's fields with errors at their position.
struct QuantReader {
  JsonNode qc;
  std::string file;

  std::optional<std::string> Str(const JsonNode& map, const char* key,
                                 const std::string& at) const {
    JsonNode v = Lookup(map, key);
    if (IsAbsent(v) || v.IsNull()) return std::nullopt;
    if (!v.IsScalar()) Fail("{}{}.{}: expected a value", PosOf(v, file).Prefix(), at, key);
    return v.Scalar();
  }
  std::optional<std::string> Str(const char* key) const {
    return Str(qc, key, "quantization_config");
  }
  std::optional<uint64_t> Num(const JsonNode& map, const char* key, const std::string& at) const {
    JsonNode v = Lookup(map, key);
    if (IsAbsent(v) || v.IsNull()) return std::nullopt;
    const uint64_t n = ScalarU64(v, file, at + "." + key);
    if (n > ModelLimits::kMaxWidth) {
      Fail("{}{}.{}: {} is over kvplan's limit of {}", PosOf(v, file).Prefix(), at, key, n,
           ModelLimits::kMaxWidth);
    }
    return n;
  }
  std::optional<uint64_t> Num(const char* key) const { return Num(qc, key, "quantization_config"); }
  bool Flag(const JsonNode& map, const char* key) const {
    const std::optional<std::string> v = Str(map, key, "quantization_config");
    return v && *v == "true";
  }
};

// A reader's outcome: "" when `q` is set, else why kvplan does not size it.
using WhyNot = std::string;

WhyNot ReadFp8(const QuantReader& r, QuantSpec& q, Draft& d) {
  q.format = "fp8";
  if (std::optional<std::string> f = r.Str("fmt"); f && *f != "e4m3") {
    return "fmt " + *f + ", not e4m3";
  }
  JsonNode block = Lookup(r.qc, "weight_block_size");
  if (IsAbsent(block) || block.IsNull()) return "";
  const std::string at = "quantization_config.weight_block_size";
  if (!block.IsSequence() || block.size() != 2) {
    Fail("{}{}: expected two numbers, e.g. [128, 128]", PosOf(block, r.file).Prefix(), at);
  }
  const uint64_t rows = ScalarU64(block[0], r.file, at);
  const uint64_t cols = ScalarU64(block[1], r.file, at);
  if (rows != cols) {
    return "blocks of " + std::to_string(rows) + " x " + std::to_string(cols) + " are not square";
  }
  if (rows > ModelLimits::kMaxWidth) {
    Fail("{}{}: {} is over kvplan's limit of {}", PosOf(block, r.file).Prefix(), at, rows,
         ModelLimits::kMaxWidth);
  }
  q.block = rows;
  d.why["quantization.block"] = fmt::format("weight_block_size [{0}, {0}]", rows);
  return "";
}

// AWQ and GPTQ: int32-packed weights, a 16-bit scale and a packed zero per
// group; GPTQ also an int32 g_idx per input.
WhyNot ReadAwqGptq(const QuantReader& r, const std::string& method, QuantSpec& q, Draft& d) {
  const std::optional<uint64_t> bits = r.Num("bits");
  if (std::optional<std::string> g = r.Str("group_size"); g && !g->empty() && (*g)[0] == '-') {
    return "group_size " + *g + ": scales per output channel";
  }
  q.group_size = r.Num("group_size").value_or(128);
  if (q.group_size == 0) return "group_size 0";
  d.why["quantization.group_size"] = "group_size";
  if (method == "awq") {
    if (bits != 4) return bits ? std::to_string(*bits) + "-bit" : "no bits";
    if (std::optional<std::string> z = r.Str("zero_point"); z && *z == "false") {
      return "zero_point false";
    }
    q.format = "int4";
    return "";
  }
  if (bits == 4) {
    q.format = "int4";
    q.scheme = "gptq";
    return "";
  }
  // The spec's group_size belongs to int4; an 8-bit GPTQ of another group
  // size cannot be written back as a spec.
  if (bits == 8 && q.group_size == 128) {
    q.format = "int8";
    q.scheme = "gptq-int8";
    q.group_size = 0;
    d.why.erase("quantization.group_size");
    return "";
  }
  return bits ? std::to_string(*bits) + "-bit, group_size " + std::to_string(q.group_size)
              : "no bits";
}

// compressed-tensors (llm-compressor): one config group's weights scheme.
WhyNot ReadCompressedTensors(const QuantReader& r, QuantSpec& q, Draft& d) {
  JsonNode groups = Lookup(r.qc, "config_groups");
  if (!groups.IsMap()) return "no config_groups";
  JsonNode group;
  for (int i = 0; i < 16 && IsAbsent(group); ++i)
    group = Lookup(groups, fmt::format("group_{}", i));
  if (IsAbsent(group) || groups.size() != 1) return "config groups other than one group_N";
  const std::string at = "quantization_config.config_groups.group_N.weights";
  JsonNode w = Lookup(group, "weights");
  if (!w.IsMap()) return "a group without weights";
  const std::string type = r.Str(w, "type", at).value_or("int");
  const std::optional<uint64_t> bits = r.Num(w, "num_bits", at);
  const std::string strategy = r.Str(w, "strategy", at).value_or("tensor");
  const std::string format = r.Str("format").value_or("");
  const std::string what =
      fmt::format("{} {}-bit {} weights, format {}", type, bits.value_or(0), strategy, format);
  if (std::optional<std::string> a = r.Str(w, "actorder", at); a && *a == "group") {
    return what + " with actorder group (a g_idx per input)";
  }
  // QuantizationArgs' default is symmetric.
  const std::optional<std::string> sym = r.Str(w, "symmetric", at);
  const bool symmetric = !sym || *sym != "false";
  if (type == "int" && bits == 4 && strategy == "group" && format == "pack-quantized") {
    q.format = "int4";
    q.scheme = symmetric ? "ct-w4a16" : "ct-w4a16-asym";
    q.group_size = r.Num(w, "group_size", at).value_or(128);
    if (q.group_size == 0) return what + ", group_size 0";
    d.why["quantization.group_size"] = "config_groups weights group_size";
  } else if (type == "int" && bits == 8 && strategy == "channel") {
    if (!symmetric) return what + ", not symmetric (a zero point per row)";
    // int8 as stored: int-quantized and naive-quantized keep int8 tensors,
    // pack-quantized the same bytes in int32 words; other formats (dense
    // 16-bit, 2:4-sparse marlin-24) store something else.
    if (format == "pack-quantized") {
      q.scheme = "ct-w8a16";
    } else if (format == "int-quantized" || format == "naive-quantized") {
      q.scheme = "ct-w8a8";
    } else {
      return what;
    }
    q.format = "int8";
  } else if (type == "float" && bits == 8 && (strategy == "tensor" || strategy == "channel")) {
    q.format = "fp8";
    q.scheme = strategy == "tensor" ? "fp8-static" : "fp8-channel";
  } else if (type == "float" && bits == 8 && strategy == "block") {
    JsonNode b = Lookup(w, "block_structure");
    if (!b.IsSequence() || b.size() != 2) return what + " without a block_structure";
    const uint64_t rows = ScalarU64(b[0], r.file, at + ".block_structure");
    const uint64_t cols = ScalarU64(b[1], r.file, at + ".block_structure");
    if (rows != cols || rows > ModelLimits::kMaxWidth) return what + ", blocks not square";
    q.format = "fp8";
    q.block = rows;
    d.why["quantization.block"] = fmt::format("block_structure [{0}, {0}]", rows);
  } else if (type == "float" && bits == 4 && strategy == "tensor_group" &&
             r.Num(w, "group_size", at).value_or(16) == 16) {
    q.format = "nvfp4";
  } else {
    return what;
  }
  return "";
}

// NVIDIA ModelOpt: quant_algo FP8 or NVFP4.
WhyNot ReadModelOpt(const QuantReader& r, QuantSpec& q) {
  const std::string algo = r.Str("quant_algo").value_or("");
  if (algo == "FP8") {
    q.format = "fp8";
    q.scheme = "fp8-static";
  } else if (algo == "NVFP4" && r.Num("group_size").value_or(16) == 16) {
    q.format = "nvfp4";
  } else {
    return "quant_algo " + (algo.empty() ? std::string("absent") : algo);
  }
  return "";
}

// bitsandbytes: 4-bit (nf4/fp4, absmax per 64, nested when double quant) or LLM.int8().
WhyNot ReadBitsandbytes(const QuantReader& r, QuantSpec& q) {
  if (r.Flag(r.qc, "load_in_4bit")) {
    q.format = "int4";
    q.scheme = r.Flag(r.qc, "bnb_4bit_use_double_quant") ? "bnb-nf4" : "bnb-nf4-plain";
  } else if (r.Flag(r.qc, "load_in_8bit")) {
    q.format = "int8";
    q.scheme = "bnb-int8";
  } else {
    return "neither load_in_4bit nor load_in_8bit";
  }
  return "";
}

// The parts a module pattern of an ignore list keeps in 16 bits; "" for
// modules that stay 16-bit anyway (lm_head, embeddings, norms, routers,
// vision towers); "?" for one layer's module, which kvplan cannot single out.
std::string IgnoredPart(std::string e) {
  for (char& ch : e) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (e.rfind("re:", 0) == 0) e = e.substr(3);
  while (!e.empty() && (e.back() == '$' || e.back() == '*' || e.back() == '.')) e.pop_back();
  const auto has = [&](const char* s) { return e.find(s) != std::string::npos; };
  if (has("lm_head") || has("embed") || has("norm") || has("router") || has("visual") ||
      has("vision") || has("mm_projector") || has("multi_modal")) {
    return "";
  }
  if (e == "gate" || (e.size() > 5 && e.compare(e.size() - 5, 5, ".gate") == 0)) return "";
  const size_t layers = e.find("layers.");
  if (layers != std::string::npos && layers + 7 < e.size() &&
      std::isdigit(static_cast<unsigned char>(e[layers + 7]))) {
    return "?";
  }
  if (has("shared_expert")) return "shared_experts";
  if (has("experts")) return "experts";
  if (has("attn") || has("attention")) return "attention";
  if (has("mamba") || has("mixer")) return "mamba";
  if (has("mlp") || has("ffn")) return "mlp";
  return "?";
}

// Applies the config's ignore lists to q.parts. Returns why not, or "".
WhyNot ApplyIgnoreLists(const QuantReader& r, QuantSpec& q, Draft& d) {
  std::set<std::string> dropped;
  std::vector<std::string> unknown;
  for (const char* key :
       {"ignore", "modules_to_not_convert", "exclude_modules", "llm_int8_skip_modules"}) {
    JsonNode list = Lookup(r.qc, key);
    if (IsAbsent(list) || list.IsNull()) continue;
    if (!list.IsSequence()) {
      Fail("{}quantization_config.{}: expected a list of module names",
           PosOf(list, r.file).Prefix(), key);
    }
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].IsScalar()) {
        Fail("{}quantization_config.{}: expected a module name", PosOf(list[i], r.file).Prefix(),
             key);
      }
      const std::string part = IgnoredPart(list[i].Scalar());
      if (part == "?") {
        if (unknown.size() < 3) unknown.push_back(list[i].Scalar());
      } else if (!part.empty()) {
        dropped.insert(part);
      }
    }
  }
  if (!unknown.empty()) {
    d.header.push_back(fmt::format(
        "quantization_config leaves modules such as '{}' unquantized; kvplan counts them as "
        "quantized",
        unknown.front()));
  }
  if (dropped.empty()) return "";
  const ModelSpec& s = d.s;
  std::vector<std::string> present;
  if (q.parts.empty()) {
    present.push_back("attention");
    if (s.HasDenseMlp()) present.push_back("mlp");
    if (s.moe) present.push_back("experts");
    if (s.moe && s.moe->shared_experts != 0) present.push_back("shared_experts");
    if (s.mamba) present.push_back("mamba");
  } else {
    present = q.parts;
  }
  std::vector<std::string> kept;
  for (const std::string& p : present) {
    if (!dropped.count(p)) kept.push_back(p);
  }
  if (kept.empty()) return "its ignore list leaves no linear layer quantized";
  if (kept.size() != present.size() || !q.parts.empty()) {
    q.parts = kept;
    d.why["quantization.parts"] =
        fmt::format("the rest stays 16-bit (quantization_config ignore lists)");
  }
  return "";
}

}  // namespace

// fp8 (per tensor, per channel or square blocks), mxfp4 (gpt-oss: attention
// left out), AWQ/GPTQ 4- and 8-bit, compressed-tensors (w4a16, w8a8 int8 and
// fp8, nvfp4), ModelOpt fp8/nvfp4, bitsandbytes 4- and 8-bit. Anything else
// keeps a comment saying the weights are smaller than weight_dtype implies.
void ReadQuantization(const Config& c, Draft& d) {
  if (!c.Has("quantization_config")) return;
  const QuantReader r{c.Get("quantization_config"), c.File()};
  const std::optional<std::string> method = r.Str("quant_method");
  auto not_modelled = [&](const std::string& why) {
    d.why["weight_dtype"] += fmt::format(
        " -- but quantization_config says {}: the published "
        "weights are smaller than this dtype implies ({}; "
        "size them with --weight-dtype)",
        method.value_or("quantized"), why);
  };
  QuantSpec q;
  WhyNot why_not;
  if (method == "fp8") {
    why_not = ReadFp8(r, q, d);
  } else if (method == "mxfp4") {
    // vLLM's Mxfp4Config quantizes the fused MoE experts only; every other
    // linear layer stays in the model's dtype (gpt-oss also lists them in
    // modules_to_not_convert).
    if (!d.s.moe) return not_modelled("mxfp4 quantizes MoE experts only, and this model has none");
    q.format = "mxfp4";
    q.parts = {"experts"};
    d.why["quantization.parts"] = "mxfp4 quantizes the MoE experts only";
  } else if (method == "awq" || method == "gptq") {
    why_not = ReadAwqGptq(r, *method, q, d);
  } else if (method == "compressed-tensors") {
    why_not = ReadCompressedTensors(r, q, d);
  } else if (method == "modelopt") {
    why_not = ReadModelOpt(r, q);
  } else if (method == "bitsandbytes") {
    why_not = ReadBitsandbytes(r, q);
  } else {
    why_not = "a method kvplan does not size";
  }
  if (why_not.empty() && method != "mxfp4") why_not = ApplyIgnoreLists(r, q, d);
  if (!why_not.empty()) return not_modelled(why_not);
  if ((q.block != 0 || !q.parts.empty()) && !d.s.HasWeightShapes()) {
    return not_modelled("without intermediate_size its blocks and parts cannot be sized");
  }
  d.why["quantization.format"] = fmt::format("quant_method {}{}", method.value_or(""),
                                             q.scheme.empty() ? "" : " (" + q.scheme + ")");
  if (!q.scheme.empty()) d.why["quantization.scheme"] = "the layout its tensors are stored in";
  d.why["weight_dtype"] += " (activations; the published weights are quantized, below)";
  d.s.quantization = q;
}

}  // namespace kvplan
