// Fuzzes the launch-line reader behind `kvplan check --engine-args`
// (LaunchWords, FindEngineLaunch, ParseEngineCommand): every engine's line,
// bare, after launchers, in docker run, or as a JSON argument list.
#include <string>

#include "fuzz_common.h"
#include "import/engine_command.h"
#include "spec/deploy_config.h"

using namespace kvplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text = fuzz::AsText(data, size);
  // TensorRT-LLM's --extra_llm_api_options names a file kvplan reads; a
  // descriptor path (/dev/stdin) would wait on the fuzzer's own input.
  if (text.find("/dev/") != std::string::npos || text.find("/proc/") != std::string::npos) {
    return 0;
  }
  try {
    DeployConfig d = ParseEngineCommand(text);
    fuzz::Require(d.engine == "vllm" || d.engine == "sglang" || d.engine == "llama.cpp" ||
                      d.engine == "trtllm",
                  "a launch line gives an engine kvplan models");
    fuzz::Require(!d.model.empty(), "accepted launch line without a model");
  } catch (const Error& e) {
    fuzz::CheckMessage(e);
  }
  return 0;
}
