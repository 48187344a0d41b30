#include "import/derivative_names.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <utility>

#include "spec/catalog.h"
#include "spec/weight_format.h"

namespace kvplan {
namespace {

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A quantization suffix and the weights it names. Longest first within a
// family, so "-fp8-dynamic" is taken before "-fp8".
struct QuantSuffix {
  std::string_view suffix;       // lower case, with its leading '-'
  std::string_view format;       // QuantSpec format
  std::string_view scheme = {};  // its stored layout where the name says it: llm-compressor's
                                 // (compressed-tensors) names
};
constexpr std::array kQuantSuffixes = {
    QuantSuffix{"-quantized.w4a16", "int4", "ct-w4a16"},
    QuantSuffix{"-quantized.w8a8", "int8", "ct-w8a8"},
    QuantSuffix{"-fp8-dynamic", "fp8", "fp8-channel"},
    QuantSuffix{"-fp8-static", "fp8"},
    QuantSuffix{"-w8a8-fp8", "fp8"},
    QuantSuffix{"-fp8", "fp8"},
    QuantSuffix{"-awq-int4", "int4"},
    QuantSuffix{"-awq", "int4"},
    QuantSuffix{"-gptq-int4", "int4"},
    QuantSuffix{"-gptq-int8", "int8"},
    QuantSuffix{"-gptq", "int4"},
    QuantSuffix{"-w4a16", "int4", "ct-w4a16"},
    QuantSuffix{"-w8a8", "int8", "ct-w8a8"},
    QuantSuffix{"-w8a16", "int8", "ct-w8a16"},
    QuantSuffix{"-int4", "int4"},
    QuantSuffix{"-int8", "int8"},
    QuantSuffix{"-bnb-4bit", "int4"},
    QuantSuffix{"-4bit", "int4"},
    QuantSuffix{"-8bit", "int8"},
    QuantSuffix{"-nvfp4", "nvfp4"},
    QuantSuffix{"-mxfp4", "mxfp4"},
};

// Suffixes that name a tuning or a packaging of the same weights' shapes.
constexpr std::array<std::string_view, 7> kShapeSuffixes = {"-instruct", "-chat", "-it",  "-hf",
                                                            "-base",     "-pt",   "-gguf"};

// Same geometry under another name: the config.json files match field for
// field in every shape the cache and weights depend on. (Llama-3.3-70B and
// DeepSeek-R1 are catalog models of their own.)
constexpr std::array<std::pair<std::string_view, std::string_view>, 2> kAliases = {{
    {"deepseek-r1-0528", "deepseek-r1"},
    {"deepseek-v3-0324", "deepseek-v3"},
}};

struct Stripped {
  std::string key;
  std::vector<std::string> cut;  // as written in the name
  std::string quant_suffix;      // as written
  std::string format;
  std::string scheme;
};

Stripped Strip(std::string_view name) {
  if (const size_t slash = name.rfind('/'); slash != std::string_view::npos) {
    name.remove_prefix(slash + 1);
  }
  std::string original(name);
  if (ToLower(original).ends_with(".gguf")) original.resize(original.size() - 5);
  Stripped s{ToLower(original), {}, "", "", ""};
  for (bool again = true; again;) {
    again = false;
    for (const QuantSuffix& q : kQuantSuffixes) {
      if (s.key.size() > q.suffix.size() && s.key.ends_with(q.suffix)) {
        const size_t at = s.key.size() - q.suffix.size();
        if (s.format.empty()) {
          s.format = std::string(q.format);
          s.scheme = std::string(q.scheme);
          s.quant_suffix = original.substr(at, q.suffix.size());
        }
        s.cut.insert(s.cut.begin(), original.substr(at, q.suffix.size()));
        s.key.resize(at);
        original.resize(at);
        again = true;
        break;
      }
    }
    for (std::string_view suffix : kShapeSuffixes) {
      if (again) break;
      if (s.key.size() > suffix.size() && s.key.ends_with(suffix)) {
        const size_t at = s.key.size() - suffix.size();
        s.cut.insert(s.cut.begin(), original.substr(at, suffix.size()));
        s.key.resize(at);
        original.resize(at);
        again = true;
      }
    }
  }
  if (s.key.starts_with("meta-")) s.key.erase(0, 5);
  for (const auto& [alias, base] : kAliases) {
    if (s.key == alias) s.key = std::string(base);
  }
  return s;
}

QuantSpec QuantFor(const Stripped& s) {
  QuantSpec q;
  q.format = s.format;
  q.scheme = s.scheme;
  if (s.format == "int4") q.group_size = 128;
  return q;
}

}  // namespace

std::string DerivativeBaseKey(std::string_view name) {
  return Strip(name).key;
}

std::optional<Derivative> MatchDerivative(std::string_view name) {
  const Stripped s = Strip(name);
  if (s.key.empty()) return std::nullopt;
  for (const ModelSpec& m : CatalogModels()) {
    const bool match =
        Strip(m.name).key == s.key || (!m.hf_repo.empty() && Strip(m.hf_repo).key == s.key);
    if (!match) continue;
    Derivative d{m, m.name, s.cut, s.quant_suffix, ""};
    d.spec.name = std::string(name);
    d.spec.hf_repo = std::string(name);
    std::string weights;
    if (!s.format.empty()) {
      d.spec.quantization = QuantFor(s);
      weights = fmt::format(", with {} weights from the name's {} suffix",
                            WeightFormatLabel(CheckpointWeightFormat(*d.spec.quantization)),
                            s.quant_suffix);
    }
    std::string cut;
    for (const std::string& c : s.cut) cut += c;
    d.note = fmt::format(
        "assumed {} has the geometry of catalog model {} ({}){}; the real "
        "config.json would make this exact",
        name, m.name, m.hf_repo.empty() ? m.name : m.hf_repo, weights);
    return d;
  }
  return std::nullopt;
}

}  // namespace kvplan
