// Speculative decoding's settings in each engine's words, read for what
// sizes memory: whether the model's own MTP layers serve as the draft, or a
// draft model (an EAGLE head, a small model) brings its own layers, and the
// tokens proposed a step. vLLM: --speculative-config / speculative_config
// (method, model, num_speculative_tokens). TensorRT-LLM: speculative_config
// (decoding_type, num_nextn_predict_layers, max_draft_len,
// speculative_model_dir). SGLang: speculative_algorithm with
// speculative_draft_model_path and speculative_num_draft_tokens.
#include "import/speculative_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "import/vllm_args_internal.h"
#include "spec/json_syntax.h"
#include "util/error.h"
#include "util/units.h"

namespace kvplan {
namespace {

// A count of draft tokens or layers: 1 to 1024.
uint64_t DraftCount(const YAML::Node& v, const std::string& what, const std::string& key) {
  if (!v.IsScalar()) Fail("{}: {}: expected a number", what, key);
  const uint64_t n = ParsePythonInt(v.Scalar(), what + ": " + key);
  if (n == 0 || n > 1024) Fail("{}: {}: expected 1 to 1024, got {}", what, key, v.Scalar());
  return n;
}

std::string Text(const YAML::Node& v, const std::string& what, const std::string& key) {
  if (!v.IsScalar()) Fail("{}: {}: expected a string", what, key);
  return v.Scalar();
}

// vLLM's speculative_config object (parsed): method, model,
// num_speculative_tokens.
SpeculativeArgs VllmSpeculative(const YAML::Node& root, const std::string& what,
                                std::vector<std::string>& ignored) {
  if (!root.IsMap()) Fail("{}: expected a JSON object", what);
  SpeculativeArgs s;
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    if (kv.second.IsNull()) continue;  // vLLM's default
    if (key == "method") {
      s.method = Text(kv.second, what, key);
    } else if (key == "model") {
      s.model = Text(kv.second, what, key);
    } else if (key == "num_speculative_tokens") {
      s.num_tokens = DraftCount(kv.second, what, key);
    } else {
      ignored.push_back("speculative_config." + Redacted(key));
    }
  }
  if (s.method.empty() && s.model.empty()) {
    Fail("{}: give a method (mtp, eagle, ngram, ...) or a draft model", what);
  }
  return s;
}

// TensorRT-LLM's decoding types: the vLLM method each becomes, and whether it
// loads a draft model (speculative_model_dir). The ones marked unmodelled
// bring weights kvplan does not size (Medusa and ReDrafter heads built into
// the engine) or leave the choice to TensorRT-LLM (AUTO).
struct TrtllmDecoding {
  const char* type;
  const char* method;
  bool draft;
  bool unmodelled;
};
constexpr TrtllmDecoding kTrtllmDecoding[] = {
    {"MTP", "mtp", false, false},
    {"Eagle", "eagle", true, false},
    {"Eagle3", "eagle3", true, false},
    {"DraftTarget", "draft_model", true, false},
    {"NGram", "ngram", false, false},
    {"Lookahead", "lookahead", false, false},
    {"UserProvided", "user", false, false},
    {"Medusa", "medusa", false, true},
    {"ReDrafter", "redrafter", false, true},
    {"AUTO", "auto", false, true},
    {"SaveHidden", "save_hidden", false, true},
};

SpeculativeArgs TrtllmSpeculative(const YAML::Node& root, const std::string& what,
                                  std::vector<std::string>& ignored, bool& unmodelled) {
  std::vector<std::string> types;
  for (const TrtllmDecoding& t : kTrtllmDecoding) types.push_back(t.type);
  if (!root.IsMap()) {
    Fail("{}: expected a map with decoding_type ({})", what, fmt::join(types, ", "));
  }
  std::string type;
  uint64_t layers = 0, draft_len = 0;
  bool vanilla = false;
  SpeculativeArgs s;
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    if (kv.second.IsNull()) continue;
    if (key == "decoding_type") {
      type = Text(kv.second, what, key);
    } else if (key == "num_nextn_predict_layers") {
      layers = DraftCount(kv.second, what, key);
    } else if (key == "max_draft_len") {
      draft_len = DraftCount(kv.second, what, key);
    } else if (key == "speculative_model_dir" || key == "speculative_model") {
      s.model = Text(kv.second, what, key);
    } else if (key == "use_mtp_vanilla") {
      vanilla = Text(kv.second, what, key) == "true" || kv.second.Scalar() == "True";
    } else {
      ignored.push_back("speculative_config." + Redacted(key));
    }
  }
  if (type.empty()) Fail("{}: decoding_type is missing ({})", what, fmt::join(types, ", "));
  const auto it = std::find_if(std::begin(kTrtllmDecoding), std::end(kTrtllmDecoding),
                               [&](const TrtllmDecoding& t) { return type == t.type; });
  if (it == std::end(kTrtllmDecoding)) {
    Fail("{}: decoding_type: '{}' is none of {}", what, Redacted(type), fmt::join(types, ", "));
  }
  if (it->draft && s.model.empty()) {
    Fail("{}: decoding_type {} needs speculative_model_dir (the draft model)", what, type);
  }
  if (!it->draft) s.model.clear();  // an MTP or n-gram run loads no draft
  s.method = it->method;
  unmodelled = it->unmodelled;
  // MTP proposes num_nextn_predict_layers tokens; vanilla MTP runs that many
  // of the model's layers, MTP-Eagle reruns the first.
  s.num_tokens = s.Mtp() ? std::max<uint64_t>(layers, 1) : draft_len;
  if (s.Mtp() && vanilla) s.mtp_layers = std::max<uint64_t>(layers, 1);
  return s;
}

// SGLang's algorithms and the vLLM method each becomes. EAGLE without a
// draft path (or NEXTN) serves the model's own MTP layers, as SGLang sets
// the draft path to the model for DeepSeek-style checkpoints.
constexpr const char* kSglangAlgorithms[] = {"EAGLE",      "EAGLE3", "NEXTN",
                                             "STANDALONE", "NGRAM",  "LOOKAHEAD"};

SpeculativeArgs SglangSpeculative(MapReader& r, const std::string& model,
                                  std::vector<std::string>& ignored) {
  const std::string algorithm = r.Str("speculative_algorithm");
  const std::string what = r.Pos("speculative_algorithm").Prefix() + "speculative_algorithm";
  if (std::find(std::begin(kSglangAlgorithms), std::end(kSglangAlgorithms), algorithm) ==
      std::end(kSglangAlgorithms)) {
    Fail("{}: '{}' is none of {}", what, Redacted(algorithm), fmt::join(kSglangAlgorithms, ", "));
  }
  SpeculativeArgs s;
  const std::string path = r.OptStr("speculative_draft_model_path").value_or("");
  const std::optional<uint64_t> tokens = r.OptU64("speculative_num_draft_tokens");
  const std::optional<uint64_t> steps = r.OptU64("speculative_num_steps");
  if (r.Has("speculative_eagle_topk")) r.U64("speculative_eagle_topk");  // checked, sizes nothing
  if (algorithm == "NGRAM" || algorithm == "LOOKAHEAD") {
    s.method = "ngram";
    if (!path.empty()) ignored.push_back("speculative_draft_model_path");
  } else if (algorithm == "NEXTN" || (algorithm == "EAGLE" && (path.empty() || path == model))) {
    s.method = "mtp";
  } else {
    if (path.empty()) {
      Fail("{}: {} needs speculative_draft_model_path (the draft model)", what, algorithm);
    }
    s.method = algorithm == "STANDALONE" ? "draft_model"
               : algorithm == "EAGLE"    ? "eagle"
                                         : "eagle3";
    s.model = path;
  }
  s.num_tokens = tokens.value_or(steps.value_or(0));
  return s;
}

}  // namespace

SpeculativeArgs ReadSpeculativeConfig(const std::string& json, const std::string& what,
                                      std::vector<std::string>& ignored) {
  CheckJsonSyntax(json, what);  // vLLM parses it as JSON
  return VllmSpeculative(ParseYaml(json, what), what, ignored);
}

const std::vector<std::string>& SpeculativeKeys(const std::string& engine) {
  static const std::vector<std::string> kSglang = {
      "speculative_algorithm", "speculative_draft_model_path", "speculative_num_steps",
      "speculative_eagle_topk", "speculative_num_draft_tokens"};
  static const std::vector<std::string> kConfig = {"speculative_config"};
  static const std::vector<std::string> kNone;
  if (engine == "sglang") return kSglang;
  if (engine == "vllm" || engine == "trtllm") return kConfig;
  return kNone;
}

void ReadSpeculativeKeys(MapReader& r, DeployConfig& d, std::vector<std::string>& ignored) {
  if (d.engine == "sglang") {
    if (r.Has("speculative_algorithm")) {
      d.args.speculative = SglangSpeculative(r, d.model, ignored);
      return;
    }
    // Without an algorithm SGLang runs no speculation: the others are idle.
    for (const std::string& k : SpeculativeKeys("sglang")) {
      if (r.Written(k)) {
        r.Skip(k);
        ignored.push_back(k);
      }
    }
    return;
  }
  if (SpeculativeKeys(d.engine).empty() || !r.Has("speculative_config")) {
    if (r.Written("speculative_config")) r.Skip("speculative_config");
    return;
  }
  const std::string what = r.Pos("speculative_config").Prefix() + "speculative_config";
  YAML::Node node = r.Child("speculative_config");
  if (node.IsScalar()) {  // vLLM's JSON as a string, as on its command line
    CheckJsonSyntax(node.Scalar(), what);
    node = ParseYaml(node.Scalar(), what);
  }
  if (d.engine == "vllm") {
    d.args.speculative = VllmSpeculative(node, what, ignored);
    return;
  }
  bool unmodelled = false;
  d.args.speculative = TrtllmSpeculative(node, what, ignored, unmodelled);
  if (unmodelled) d.unmodelled.push_back("speculative_config " + d.args.speculative->method);
}

}  // namespace kvplan
