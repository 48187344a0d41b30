// The private pieces that the vllm_args files share: the launcher before
// vLLM's own arguments (vllm_args_shell.cpp), the table of vLLM's flags
// (vllm_args_flags.cpp) and its CUDA-graph flags (vllm_args_graphs.cpp).
// ParseVllmCommand (vllm_args.cpp) walks the words with them; the other
// engines' launch lines (engine_command.cpp) share Redacted. Nothing else
// includes it; the public API is import/vllm_args.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spec/deploy_config.h"

namespace kvplan {

// --- the launcher (vllm_args_shell.cpp) ---

/// "NAME=..." for a word with a value in it, the word itself otherwise: what
/// an error or note may echo (values are often secrets).
std::string Redacted(const std::string& word);

/// Skips what comes before vLLM's own arguments: environment assignments and
/// launchers (`env`, `sudo`, `uv run`...), `docker run ... vllm/vllm-openai`
/// with its -e assignments, `vllm serve`, `python -m module`. The two vLLM
/// variables kvplan models are applied to `d`; other assignments are named
/// in `ignored`. Returns the index of the first word after the launcher.
size_t SkipLauncher(const std::vector<std::string>& w, DeployConfig& d,
                    std::vector<std::string>& ignored);

// --- the flag table (vllm_args_flags.cpp) ---

enum class VllmFlagKind { kTokens, kCount, kFraction, kText, kBytes, kFlag, kNegFlag };

struct VllmFlag {
  const char* name;   // long form
  const char* field;  // EngineArgs field ("" = the model)
  VllmFlagKind kind;
};

/// vLLM's flags that size the cache (vllm/engine/arg_utils.py).
const std::vector<VllmFlag>& VllmFlags();

/// The long form of a flag: a short alias (-tp) spelled out, underscores in
/// a long flag turned into dashes.
std::string Canonical(const std::string& word);

/// vLLM flags that take no value (store_true, or BooleanOptionalAction given
/// bare): the word after one is the next argument, perhaps the model.
bool IsSwitch(const std::string& name);

/// vLLM flags that take one or more values (nargs='+').
bool TakesList(const std::string& name);

/// vLLM flags that change the GPU memory the cache is left with, in ways
/// kvplan does not model.
bool ChangesMemory(const std::string& name);

/// vLLM flags known to leave the cache's memory alone: no did-you-mean.
bool KnownHarmless(const std::string& name);

// --- the CUDA-graph flags (vllm_args_graphs.cpp) ---

/// What vLLM's command line says of its CUDA graphs: the compilation
/// config's max_cudagraph_capture_size and cudagraph_capture_sizes (from
/// `--compilation-config`/`-cc` JSON or dotted keys, `--cudagraph-capture-sizes`,
/// the older `--cuda-graph-sizes`, `--max-cudagraph-capture-size`), and
/// whether graphs are off (`-O0`, cudagraph_mode NONE).
struct GraphSizes {
  std::optional<uint64_t> max_capture_size;
  std::string max_by;  // the flag or key that gave the capture size
  std::optional<std::vector<uint64_t>> listed;
  std::string listed_by;  // the flag or key that gave the list
  // cudagraph_mode as given (true: NONE), and optimization level 0, which
  // turns graphs off only where no mode is given (vLLM fills unset fields
  // from the level).
  std::optional<bool> mode_none;
  bool level0 = false;
  std::string level0_by;
};

/// One CUDA-graph batch size: a plain positive integer, as vLLM's int takes
/// it; `in_list`: the word came from a list flag.
uint64_t GraphSize(const std::string& item, const std::string& what, bool in_list);

/// The capture size from `by`; the flag and the compilation config's key
/// both are refused.
void SetMax(GraphSizes& g, uint64_t size, const std::string& by);

/// True for the flags that ReadGraphFlag reads: --compilation-config/-cc
/// (and their dotted keys), -O/--optimization-level, the size lists.
/// `name` is canonical.
bool IsGraphFlag(const std::string& name);

/// Reads one graph flag at w[i] (named `name`, canonical; `shown` as the
/// user wrote it; its `=value` in `value` when `has_value`), taking the
/// words after it that are its values (advancing `i`). Keys kvplan does not
/// read go to `ignored`.
void ReadGraphFlag(const std::vector<std::string>& w, size_t& i, const std::string& name,
                   const std::string& shown, bool has_value, const std::string& value,
                   GraphSizes& graphs, std::vector<std::string>& ignored);

/// Writes what the graph flags said into d.args: graphs off (cudagraph_mode
/// NONE, or level 0 where no mode is given), else the capture size and list.
void ApplyGraphSizes(const GraphSizes& graphs, DeployConfig& d);

}  // namespace kvplan
