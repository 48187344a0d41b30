#include "import/hf_import.h"

#include <regex>

#include "import/hf_draft.h"
#include "spec/model_reader.h"
#include "spec/yaml_reader.h"

namespace kvplan {

HfImport ImportHfConfig(const std::string& text, const std::string& file, const std::string& name) {
  CheckNameChars(name, "", "--name");
  JsonNode root = ParseConfigJson(text, file);
  Draft d = BuildDraft(root, file, name);
  HfImport out;
  out.yaml = EmitSpecYaml(d, file);
  // The generated YAML's lines mean nothing to the user: an error names the
  // config key the field came from, at its place in the config, where the
  // field's comment is just that key (kv_heads <- num_key_value_heads).
  static const std::string kGenerated = "(generated spec)";
  try {
    out.spec = ParseModelYaml(out.yaml, kGenerated);
  } catch (const Error& e) {
    // "(generated spec):L:C: field: why" -> "field: why"
    static const std::regex kAt(R"(^\(generated spec\):\d+:\d+: (([^:]*):.*)$)");
    std::string msg = e.what(), field;
    std::smatch at;
    if (std::regex_match(msg, at, kAt)) {
      field = at[2];
      msg = at[1];
    }
    auto why = d.why.find(field);
    if (why != d.why.end()) {
      // The key, possibly under text_config (a multimodal wrapper).
      JsonNode node = root;
      std::string key = why->second;
      for (size_t dot; (dot = key.find('.')) != std::string::npos && node.IsMap();) {
        node = Lookup(node, key.substr(0, dot));
        key = key.substr(dot + 1);
      }
      JsonNode v = Lookup(node, key);
      if (!IsAbsent(v)) {
        Fail("{}{}: the imported spec is not valid: {}", PosOf(v, file).Prefix(), why->second, msg);
      }
    }
    Fail("{}: the imported spec is not valid: {}", file, msg);
  }
  // Positions in the generated YAML mean nothing to the user: point at the config.
  out.spec.field_pos.clear();
  for (LayerGroup& g : out.spec.groups) g.pos = SourcePos{file, 0, 0};
  return out;
}

HfImport ImportHfConfigFile(const std::string& path, const std::string& name) {
  return ImportHfConfig(ReadTextFile(path), path, name);
}

}  // namespace kvplan
