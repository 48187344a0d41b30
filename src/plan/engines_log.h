// The startup lines each engine prints about its KV cache, predicted from a
// CapacityResult, so users can compare kvplan with a real log line by line.
#pragma once

#include <string>
#include <vector>

#include "spec/cache_dtype.h"
#include "spec/model_spec.h"

namespace kvplan {

struct CapacityResult;

/// The engine's own log lines for this capacity (vLLM "GPU KV cache size:
/// N tokens", SGLang "KV Cache is allocated. #tokens: ...", TRT-LLM
/// "Allocate X bytes for k/v cache.", llama.cpp "llama_kv_cache: size = ...").
std::vector<std::string> EngineLogLines(const ModelSpec& model, const CapacityResult& r,
                                        const CacheDtype& dtype);

}  // namespace kvplan
