// vLLM's --speculative-config JSON, read for what sizes memory: the method
// (mtp serves the model's own MTP layers; a draft model or EAGLE head brings
// its own layers), the draft model's name and the tokens proposed a step.
#include "import/speculative_config.h"

#include <fmt/format.h>

#include "import/vllm_args_internal.h"
#include "spec/json_syntax.h"
#include "spec/yaml_reader.h"
#include "util/error.h"
#include "util/units.h"

namespace kvplan {

SpeculativeArgs ReadSpeculativeConfig(const std::string& json, const std::string& what,
                                      std::vector<std::string>& ignored) {
  CheckJsonSyntax(json, what);  // vLLM parses it as JSON
  const YAML::Node root = ParseYaml(json, what);
  if (!root.IsMap()) Fail("{}: expected a JSON object", what);
  SpeculativeArgs s;
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    if (kv.second.IsNull()) continue;  // vLLM's default
    if (key != "method" && key != "model" && key != "num_speculative_tokens") {
      ignored.push_back("speculative_config." + Redacted(key));
      continue;
    }
    if (!kv.second.IsScalar())
      Fail("{}: {}: expected a {}", what, key,
           key == "num_speculative_tokens" ? "number" : "string");
    const std::string v = kv.second.Scalar();
    if (key == "method") {
      s.method = v;
    } else if (key == "model") {
      s.model = v;
    } else {
      s.num_tokens = ParsePythonInt(v, what + ": num_speculative_tokens");
      if (s.num_tokens == 0 || s.num_tokens > 1024) {
        Fail("{}: num_speculative_tokens: expected 1 to 1024, got {}", what, v);
      }
    }
  }
  if (s.method.empty() && s.model.empty()) {
    Fail("{}: give a method (mtp, eagle, ngram, ...) or a draft model", what);
  }
  return s;
}

}  // namespace kvplan
