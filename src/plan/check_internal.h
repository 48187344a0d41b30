// Private to check*.cpp: the checks without their fixes (check.cpp), the
// search for the changes that make a failed check pass (check_fixes.cpp),
// and the engines' prefix-caching default that both the config
// (check_config.cpp) and the workload check read.
#pragma once

#include <string>
#include <vector>

#include "plan/check.h"

namespace kvplan {

/// RunChecks without CheckItem::fixes.
CheckReport CheckOnce(const ModelSpec& model, const HardwareSpec& gpu, const DeployConfig& deploy);

/// The nearest changes that make the failed item `name` of `deploy` pass,
/// each found by checking again (CheckItem::fixes).
std::vector<std::string> NearestFixes(const ModelSpec& model, const HardwareSpec& gpu,
                                      const DeployConfig& deploy, const CapacityResult& cap,
                                      const std::string& name);

/// One check's result (CheckItem's fields in order).
CheckItem Item(std::string name, bool pass, std::string measured, std::string required,
               std::string detail, SourcePos pos);
/// `i` with its figures as numbers (CheckItem::measured_value, ...).
CheckItem WithNumbers(CheckItem i, std::optional<double> measured, double required,
                      const char* unit, const char* comparison);
/// A check that follows from another one that failed: skipped, with what it
/// requires and why it was not measured.
CheckItem SkippedItem(std::string name, std::string required, double required_value,
                      const char* unit, const char* comparison, std::string why, SourcePos pos);
/// Why a check was skipped when the engine would not start.
extern const char* const kNotStarted;

/// requirements.serving: TTFT and TPOT at a percentile under a request rate
/// or concurrent users, from the fleet's replica model (check_serving.cpp).
void ServingItems(const ModelSpec& m, const HardwareSpec& gpu, const DeployConfig& d,
                  const CapacityResult& cap, bool startup_ok, CheckReport& r);

/// Whether the engine caches prefixes unless told otherwise (vLLM, SGLang
/// and TensorRT-LLM do; llama.cpp does not).
bool DefaultPrefixCaching(Engine engine);

}  // namespace kvplan
