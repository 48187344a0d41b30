// Fuzzes the vLLM command-line parser behind `kvplan check --vllm-args`
// (ShellSplit, then ParseVllmCommand): `vllm serve MODEL --flags`, the
// api_server form, or a bare `MODEL --flags`.
#include "fuzz_common.h"
#include "import/vllm_args.h"
#include "spec/deploy_config.h"

using namespace kvplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text = fuzz::AsText(data, size);
  try {
    (void)ShellSplit(text);
  } catch (const Error& e) {
    fuzz::CheckMessage(e);
  }
  try {
    DeployConfig d = ParseVllmCommand(text);
    fuzz::Require(d.engine == "vllm", "a vLLM command line gives engine vllm");
    fuzz::Require(!d.model.empty(), "accepted command line without a model");
  } catch (const Error& e) {
    fuzz::CheckMessage(e);
  }
  return 0;
}
