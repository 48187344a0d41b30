// Fuzzes the Hugging Face config.json importer (ImportHfConfig). An accepted
// config must give spec YAML that the model spec reader reads back to the
// same numbers: `kvplan import-hf` writes exactly that YAML to disk.
#include "fuzz_common.h"
#include "import/hf_import.h"
#include "spec/model_reader.h"

using namespace kvplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  HfImport imp;
  try {
    imp = ImportHfConfig(fuzz::AsText(data, size), "fuzz/config.json");
  } catch (const Error& e) {
    fuzz::CheckMessage(e);
    return 0;
  }
  ModelSpec back;
  try {
    back = ParseModelYaml(imp.yaml, "imported.yaml");
  } catch (const Error& e) {
    std::fprintf(stderr, "read back failed: %s\n--- written:\n%s\n", e.what(), imp.yaml.c_str());
    fuzz::Require(false, "import-hf output does not read back");
  }
  fuzz::Require(back.layers == imp.spec.layers, "read back: layers");
  fuzz::Require(back.kv_heads == imp.spec.kv_heads, "read back: kv_heads");
  fuzz::Require(back.head_dim == imp.spec.head_dim, "read back: head_dim");
  fuzz::Require(back.max_context == imp.spec.max_context, "read back: max_context");
  fuzz::Require(back.groups.size() == imp.spec.groups.size(), "read back: layer groups");
  return 0;
}
