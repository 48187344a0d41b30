// Fuzzes the deployment config reader (ParseDeployConfig), the YAML that
// `kvplan check` gates CI on. The reader only reads: model and GPU names are
// resolved to paths but not opened, so this stays within the reader.
#include "fuzz_common.h"
#include "import/deploy_config_reader.h"
#include "spec/deploy_config.h"

using namespace kvplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    DeployConfig d = ParseDeployConfig(fuzz::AsText(data, size), "deploy/fuzz.yaml");
    fuzz::Require(!d.model.empty(), "accepted config without a model");
    fuzz::Require(!d.gpu.empty(), "accepted config without a GPU");
    if (d.workload) {
      fuzz::Require(!d.workload->requests.empty(), "accepted workload without requests");
    }
    for (const auto& [field, name] : d.args.names) (void)d.args.NameOf(field);
  } catch (const Error& e) {
    fuzz::CheckMessage(e);
  }
  return 0;
}
