// Reading the command line a team actually runs (`vllm serve MODEL --flags`)
// into a DeployConfig, so `kvplan check --vllm-args "..."` checks exactly it.
//
// Splitting follows POSIX sh word rules for what appears in a launch line:
// whitespace separates words; '...' is literal; "..." keeps spaces and
// honours \" \\ \$ \`; a backslash outside quotes escapes the next character
// and backslash-newline joins lines. Flags take `--flag value` or
// `--flag=value`; vLLM's short aliases (-tp, -pp, -dp, -O) are known.
//
// Flags that change the KV cache are read; every other flag (ports, API
// keys, logging...) is ignored and listed in DeployConfig::notes, because
// vLLM has hundreds of flags and a CI gate should not break when a new one
// appears. A value that cannot be read (--max-model-len abc) is an error.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "spec/deploy_config.h"

namespace kvplan {

/// Splits a shell-like command line into words. Throws Error on an
/// unterminated quote ("--vllm-args: unterminated \" quote starting at column N").
std::vector<std::string> ShellSplit(std::string_view line);

/// Parses `vllm serve MODEL [flags]` (also `python -m vllm.entrypoints.openai.api_server
/// --model MODEL ...` and a bare `MODEL --flags`) into the model and engine
/// args of a DeployConfig (engine "vllm"; hardware and requirements unset).
DeployConfig ParseVllmCommand(std::string_view line);

/// ParseVllmCommand of a line already split into words (a JSON argument
/// list, or words split once for finding the engine).
DeployConfig ParseVllmWords(const std::vector<std::string>& words);

/// vLLM's CUDA-graph mode `mode` (any case: NONE, PIECEWISE, FULL,
/// FULL_DECODE_ONLY, FULL_AND_PIECEWISE) upper-cased; Error "`what`: expected
/// ..., got '...'" for anything else, as vLLM refuses it at startup.
std::string CudagraphMode(std::string_view mode, std::string_view what);

}  // namespace kvplan
