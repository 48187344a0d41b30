// The serving engines kvplan imitates, and the facts about each that do not
// depend on a model: flag names, defaults, block sizes, supported cache
// dtypes (/work/shared/engines.md, docs/capacity.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spec/cache_dtype.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"

namespace kvplan {

enum class Engine { kVllm, kSglang, kTrtllm, kLlamaCpp };

/// "vllm", "sglang", "trtllm", "llama.cpp".
std::string_view EngineName(Engine engine);

/// Every engine, in the order above.
const std::vector<Engine>& AllEngines();

/// An engine from its name ("vllm", "sglang", "trtllm"/"tensorrt-llm",
/// "llama.cpp"/"llamacpp"). Throws Error listing the names.
Engine ParseEngine(std::string_view name);

/// The engine's flag for the memory fraction: "--gpu-memory-utilization",
/// "--mem-fraction-static", "--free-gpu-memory-fraction", "" (llama.cpp).
std::string_view MemoryFractionFlag(Engine engine);

/// Tokens per KV block (page): vLLM 16, TRT-LLM 32, SGLang 1, llama.cpp 256
/// (the cell padding of n_ctx).
uint64_t DefaultBlockSize(Engine engine);

/// vLLM releases as major * 1000 + minor (0.21 -> 21); kVllmCurrent, above
/// every release, stands for the latest.
inline constexpr uint64_t kVllmCurrent = UINT64_MAX;
/// From vLLM 0.21 the CUDA-graph estimate comes out of the cache budget
/// (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to 1) and
/// --gpu-memory-utilization defaults to 0.92; before, graphs were captured
/// after the cache was sized and the default was 0.9.
inline constexpr uint64_t kVllmGraphProfiling = 21;

/// A vLLM version as vLLM prints it: "0.20", "0.20.1", "v0.21.0rc1", or
/// "latest" (kVllmCurrent). Throws Error naming `what` otherwise.
uint64_t ParseVllmVersion(std::string_view text, std::string_view what);
/// "0.20" for 20; "latest" for kVllmCurrent.
std::string VllmVersionName(uint64_t version);

/// The engine's default memory fraction on this GPU: vLLM 0.92 (0.9 before
/// 0.21, `vllm_version`), TRT-LLM 0.9, SGLang by GPU memory and tp (its
/// server_args heuristic), llama.cpp 1.
double DefaultMemoryFraction(Engine engine, const HardwareSpec& gpu, uint64_t tp,
                             uint64_t vllm_version = kVllmCurrent);

/// "" when `engine` can store this model's cache in `dtype`; else the reason,
/// e.g. "vLLM has no q4_0 KV cache (ggml block types are llama.cpp's)".
std::string CacheDtypeUnsupported(Engine engine, const ModelSpec& model, const CacheDtype& dtype);

/// The cache dtype names `engine` accepts (for help text and messages).
std::vector<std::string> EngineCacheDtypes(Engine engine);

}  // namespace kvplan
