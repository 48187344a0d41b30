// Deployment checks: each requirement of a DeployConfig measured against the
// capacity (and latency) model, plus the startup failures the engine itself
// would hit, each PASS or FAIL with the numbers and the engine's reason.
// Pure: the caller loads the model and GPU; nothing here does I/O.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/capacity.h"
#include "spec/deploy_config.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"

namespace kvplan {

struct CheckItem {
  std::string name;  // "startup", "min_concurrency", "min_tokens_in_cache", ...
  bool pass = false;
  std::string measured;  // "12 requests (12.99x)"
  std::string required;  // ">= 8"
  std::string detail;    // one line: the derivation, or the engine's own reason
  SourcePos pos;         // the requirement's (or offending flag's) place in the file
};

struct CheckReport {
  std::string file;
  std::string name;
  std::string
      summary;  // "llama-3.1-8b on 1 x h100-sxm, vllm tp 1, max_model_len 32,768, fp16 cache"
  CapacityResult capacity;
  std::vector<CheckItem> items;
  std::vector<std::string> notes;  // engine warnings, ignored flags, assumptions

  /// True when every item passes.
  bool Pass() const;
  /// How many items fail.
  size_t Failures() const;
};

/// One checked input (a config file, or "--vllm-args"): its report, or the
/// reason it could not be checked.
struct CheckOutcome {
  std::string file;
  std::optional<CheckReport> report;
  std::string error;  // one line, "file:line:col: field: why" where known
};

/// The engine configuration a deployment config describes (engine defaults
/// left at 0 for ResolveEngineConfig). Throws Error on an unknown engine name.
EngineConfig ToEngineConfig(const DeployConfig& deploy);

/// Checks `deploy` for `model` on `gpu`. Never throws for a failing
/// configuration (that is a FAIL item); throws Error only on overflow.
CheckReport RunChecks(const ModelSpec& model, const HardwareSpec& gpu, const DeployConfig& deploy);

}  // namespace kvplan
