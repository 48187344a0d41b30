// `kvplan capacity` rendered: the memory breakdown table and bar, the KV
// cache figures and the engine's own log lines (text), every figure (JSON),
// and one summary row (CSV). Also the JSON pieces every capacity-based
// command shares: lints and the engine's name and version.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/capacity.h"
#include "report/json.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"

namespace kvplan {

/// Capacity lints as JSON objects: severity, code, message.
Json LintsJson(const std::vector<Lint>& lints);

/// "engine" (the plain name) and, for vLLM, "vllm_version" ("latest" or
/// "0.20") of a capacity result, on `j`.
void SetEngineJson(Json& j, const CapacityResult& r);

/// The text report; `concurrency` (when given) adds the longest
/// max_model_len at that concurrency, `at_concurrency`.
/// Lines fit `width` columns (0: any): the memory table leaves out its exact
/// bytes, then its decimal units; sentences wrap.
std::string CapacityText(const ModelSpec& m, const HardwareSpec& gpu, const CapacityResult& r,
                         std::optional<uint64_t> concurrency, uint64_t at_concurrency,
                         size_t width = 0);

/// Every figure of the result, for machines.
Json CapacityJson(const ModelSpec& m, const HardwareSpec& gpu, const CapacityResult& r,
                  std::optional<uint64_t> concurrency, uint64_t at_concurrency);

/// One header and one row of the main figures.
std::string CapacityCsv(const ModelSpec& m, const HardwareSpec& gpu, const CapacityResult& r);

}  // namespace kvplan
