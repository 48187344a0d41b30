// Derivative names: a fine-tune or re-published quantization of a catalog
// model ("meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-8B-FP8",
// "hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4") keeps its base's
// geometry. When neither the local Hugging Face cache nor the Hub can give
// the real config.json, the resolver maps such a name to its catalog base
// and says so: the name's tuning suffixes (-Instruct, -Chat, -it, -hf) change
// no shape, its quantization suffix (-FP8, -AWQ-INT4, -GPTQ-Int4, -W4A16,
// ...) gives the weight format, and the owner may be any re-publisher.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/model_spec.h"

namespace kvplan {

struct Derivative {
  ModelSpec spec;                // the base's geometry, named as asked, weights from the suffix
  std::string base;              // the catalog base's name, e.g. "llama-3.1-8b"
  std::vector<std::string> cut;  // the suffixes taken off, as written ("-Instruct", "-AWQ-INT4")
  std::string quant_suffix;      // the suffix the weight format came from; "" when none
  std::string note;              // one sentence: what was assumed
};

/// The base key of a model name: the part after '/', lower case, with the
/// tuning and quantization suffixes, a leading "meta-" and a trailing
/// ".gguf" taken off, and the catalog's same-geometry aliases applied
/// (DeepSeek-R1-0528 -> deepseek-r1, DeepSeek-V3-0324 -> deepseek-v3).
std::string DerivativeBaseKey(std::string_view name);

/// The catalog base of `name` with the assumptions made; nullopt when the
/// name's base key is no catalog model's.
std::optional<Derivative> MatchDerivative(std::string_view name);

}  // namespace kvplan
