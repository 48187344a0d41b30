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
  // The figures as numbers, for machines (check --format json): `measured`
  // and `required` in `unit` ("requests", "tokens", "percent", "ms"),
  // compared by `comparison` (">=" or "<="); nullopt where there is no
  // number (startup's "starts", or nothing measured).
  std::optional<double> measured_value;
  std::optional<double> required_value;
  std::string unit;
  std::string comparison;
  // Follows from another check that failed (the engine would not start, or
  // the concurrency headroom is counted against is not there): neither a
  // pass nor a failure of its own.
  bool skipped = false;
  // For a failed check: the nearest changes that make it pass, each found
  // by checking again with it ("max_model_len 40080", "kv_cache_dtype fp8",
  // "tp 2", "gpu h200"); empty when none of those does.
  std::vector<std::string> fixes;
};

struct CheckReport {
  std::string file;
  std::string name;
  std::string
      summary;  // "llama-3.1-8b on 1 x h100-sxm, vllm tp 1, max_model_len 32,768, fp16 cache"
  CapacityResult capacity;
  std::vector<CheckItem> items;
  std::vector<std::string> notes;  // engine warnings, ignored flags, assumptions

  /// True when no item fails (skipped items do not).
  bool Pass() const;
  /// How many items fail (not counting the skipped).
  size_t Failures() const;
  /// How many items are skipped.
  size_t Skipped() const;
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

/// Checks `deploy` for `model` on `gpu`, and for each failed item the
/// nearest changes that pass (CheckItem::fixes). Never throws for a failing
/// configuration (that is a FAIL item); throws Error only on overflow.
CheckReport RunChecks(const ModelSpec& model, const HardwareSpec& gpu, const DeployConfig& deploy);

}  // namespace kvplan
