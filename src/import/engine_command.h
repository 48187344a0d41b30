// Reading the launch line of any engine kvplan models into a DeployConfig,
// so `kvplan check --engine-args "..."` checks exactly what a team runs:
//   vLLM       vllm serve MODEL ..., python -m vllm.entrypoints.openai.api_server
//   SGLang     python -m sglang.launch_server --model-path MODEL ..., sglang serve
//   llama.cpp  llama-server -m MODEL ..., llama-cli
//   TRT-LLM    trtllm-serve MODEL ... [--extra_llm_api_options FILE]
// bare, after environment assignments and launchers (env, sudo, nohup, uv
// run), inside `docker run [options] IMAGE [command]`, or as a Kubernetes
// argument list (["python3", "-m", "sglang.launch_server", "--tp", "2"]).
// The engine version comes from the image tag where there is one.
//
// vLLM lines go through ParseVllmCommand (import/vllm_args.h). The others'
// flags are turned into the keys of a deployment config's engine.args
// (`--tp-size 4` is `tp_size: 4`, llama.cpp's `-c` is `ctx_size`) and read
// by the same reader, so a flag means the same on a command line and in a
// config. Flags kvplan does not read are named in the notes (those that
// change memory apart, for `check --strict`); a value it cannot read is an
// error naming the flag.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "spec/deploy_config.h"

namespace kvplan {

/// The engine ("vllm", "sglang", "llama.cpp", "trtllm") a launch line runs,
/// with `at`, the index of the first word after its launcher, and `version`,
/// the image tag's version ("" when none). Throws Error when the line names
/// no engine kvplan knows, unless `bare_is_vllm`: then a line that starts
/// with no command is vLLM's arguments (`MODEL --flags`, as --vllm-args
/// has always taken them).
struct EngineLaunch {
  std::string engine;
  size_t at = 0;
  std::string image;    // the docker image, "" when none
  std::string version;  // from the image tag: "0.10.1" for vllm/vllm-openai:v0.10.1
};
EngineLaunch FindEngineLaunch(const std::vector<std::string>& words, bool bare_is_vllm = false);

/// The words of a launch line: a shell line split as sh does, or a JSON
/// array of strings (a Kubernetes command or args list; several arrays, as
/// command followed by args, are joined).
std::vector<std::string> LaunchWords(std::string_view line);

/// Parses a launch line of any engine into the model and engine args of a
/// DeployConfig (hardware and requirements unset). `bare_is_vllm` as for
/// FindEngineLaunch.
DeployConfig ParseEngineCommand(std::string_view line, bool bare_is_vllm = false);

}  // namespace kvplan
