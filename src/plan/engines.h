// The serving engines kvplan imitates, and the facts about each that do not
// depend on a model: flag names, defaults, block sizes, supported cache
// dtypes (/work/shared/engines.md, docs/capacity.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spec/cache_dtype.h"
#include "spec/engine.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"

namespace kvplan {

/// The engine's flag for the memory fraction: "--gpu-memory-utilization",
/// "--mem-fraction-static", "--free-gpu-memory-fraction", "" (llama.cpp).
std::string_view MemoryFractionFlag(Engine engine);

/// Tokens per KV block (page): vLLM 16, TRT-LLM 32, SGLang 1, llama.cpp 256
/// (the cell padding of n_ctx).
uint64_t DefaultBlockSize(Engine engine);

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
