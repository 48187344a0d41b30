// The serving engines kvplan imitates, as names: the engine enum, its
// spellings, and the vLLM release numbers that select a version's rules.
// What each engine does with memory lives in plan/engines.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvplan {

enum class Engine { kVllm, kSglang, kTrtllm, kLlamaCpp };

/// "vllm", "sglang", "trtllm", "llama.cpp".
std::string_view EngineName(Engine engine);

/// Every engine, in the order above.
const std::vector<Engine>& AllEngines();

/// An engine from its name ("vllm", "sglang", "trtllm"/"tensorrt-llm",
/// "llama.cpp"/"llamacpp"). Throws Error listing the names.
Engine ParseEngine(std::string_view name);

/// vLLM releases as major * 1000 + minor (0.21 -> 21); kVllmCurrent, above
/// every release, stands for the latest.
inline constexpr uint64_t kVllmCurrent = UINT64_MAX;

/// From vLLM 0.21 the CUDA-graph estimate comes out of the cache budget
/// (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to 1) and
/// --gpu-memory-utilization defaults to 0.92; before, graphs were captured
/// after the cache was sized and the default was 0.9.
inline constexpr uint64_t kVllmGraphProfiling = 21;

/// From vLLM 0.24 a KV-cache page that does not divide the largest page is
/// padded to it (PR #45181); before, vLLM refused to start.
inline constexpr uint64_t kVllmPagePadding = 24;

/// From vLLM 0.29 the startup fit check, its max_model_len estimate and the
/// auto-fit plan against the blocks left after the block pool's null block
/// (PR #47272); before, against every block.
inline constexpr uint64_t kVllmNullBlockChecked = 29;

/// A vLLM version as vLLM prints it: "0.20", "0.20.1", "v0.21.0rc1", or
/// "latest" (kVllmCurrent). Throws Error naming `what` otherwise.
uint64_t ParseVllmVersion(std::string_view text, std::string_view what);

/// "0.20" for 20; "latest" for kVllmCurrent.
std::string VllmVersionName(uint64_t version);

/// llama.cpp's -ngl: a layer count, or nullopt for every layer ("all",
/// "auto", -1, or 999 and more as guides write it). Throws Error naming
/// `what` otherwise.
std::optional<uint64_t> ParseGpuLayers(std::string_view text, std::string_view what);

/// llama.cpp's -ts: one non-negative share per GPU, separated by ',' or '/'
/// ("10,6", "3/1"), at most 64 of them, not all 0. Throws Error naming
/// `what` otherwise.
std::vector<double> ParseTensorSplit(std::string_view text, std::string_view what);

}  // namespace kvplan
