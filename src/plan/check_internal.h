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

/// Whether the engine caches prefixes unless told otherwise (vLLM, SGLang
/// and TensorRT-LLM do; llama.cpp does not).
bool DefaultPrefixCaching(Engine engine);

}  // namespace kvplan
