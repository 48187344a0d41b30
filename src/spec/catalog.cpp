#include "spec/catalog.h"

#include <algorithm>

#include "spec/model_reader.h"
#include "spec/yaml_reader.h"

namespace kvplan {

const std::vector<ModelSpec>& CatalogModels() {
  static const std::vector<ModelSpec> kModels = [] {
    std::vector<ModelSpec> out;
    for (const EmbeddedFile& f : EmbeddedFiles()) {
      if (f.path.substr(0, 7) != "models/") continue;
      out.push_back(ParseModelYaml(std::string(f.content), "catalog:" + std::string(f.path)));
    }
    std::sort(out.begin(), out.end(),
              [](const ModelSpec& a, const ModelSpec& b) { return a.name < b.name; });
    return out;
  }();
  return kModels;
}

const std::vector<HardwareSpec>& CatalogHardware() {
  static const std::vector<HardwareSpec> kHardware = [] {
    std::vector<HardwareSpec> out;
    for (const EmbeddedFile& f : EmbeddedFiles()) {
      if (f.path.substr(0, 9) != "hardware/") continue;
      out.push_back(ParseHardwareYaml(std::string(f.content), "catalog:" + std::string(f.path)));
    }
    std::sort(out.begin(), out.end(),
              [](const HardwareSpec& a, const HardwareSpec& b) { return a.name < b.name; });
    return out;
  }();
  return kHardware;
}

}  // namespace kvplan
