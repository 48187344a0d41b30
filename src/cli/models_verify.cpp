#include "cli/models_verify.h"

#include <fmt/format.h>

#include "cli/common.h"
#include "import/hf_import.h"
#include "report/json.h"
#include "spec/model_reader.h"
#include "spec/spec_diff.h"
#include "spec/yaml_reader.h"

namespace kvplan {

int RunModelsVerify(const std::string& spec_path, const std::string& config_path,
                    const std::string& format) {
  if (config_path.empty()) Fail("--verify needs --against config.json");
  ModelSpec spec = ParseModelYaml(ReadTextFile(spec_path), spec_path);
  ModelSpec config = ImportHfConfigFile(config_path).spec;
  std::vector<FieldDiff> diffs = DiffSpecs(spec, config);
  if (format == "json") {
    Json j;
    j.Set("spec", spec_path);
    j.Set("config", config_path);
    j.Set("agree", diffs.empty());
    Json arr = Json::MakeArray();
    for (const FieldDiff& d : diffs) {
      Json o;
      o.Set("field", d.field);
      o.Set("spec", d.spec_value);
      o.Set("config", d.config_value);
      o.Set("line", static_cast<uint64_t>(d.pos.line));
      arr.Push(std::move(o));
    }
    j.Set("differences", std::move(arr));
    Print(j.Dump() + "\n");
  } else {
    std::string out;
    for (const FieldDiff& d : diffs) {
      out += fmt::format("{}{}: spec says {}, {} says {}\n", d.pos.Prefix(), d.field, d.spec_value,
                         config_path, d.config_value);
    }
    out += diffs.empty() ? fmt::format(
                               "{} agrees with {} on every compared field (params is not compared: "
                               "a config carries no parameter count)\n",
                               spec_path, config_path)
                         : fmt::format("{} field{} differ between {} and {}\n", diffs.size(),
                                       diffs.size() == 1 ? "" : "s", spec_path, config_path);
    Print(out);
  }
  return diffs.empty() ? 0 : 1;
}

}  // namespace kvplan
