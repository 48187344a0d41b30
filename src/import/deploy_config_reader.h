// Reading a deployment config (docs/deploy-config.md): the YAML file, its
// engine.args under the engine's own names, and the engine's environment.
// The reader is strict: unknown keys are errors with a did-you-mean, and
// every error names file:line:col.
#pragma once

#include <string>

#include "spec/deploy_config.h"

namespace kvplan {

/// The server's environment variable `name` set to `value`: the two vLLM
/// variables that change what kvplan models are applied to `d` (true); any
/// other name is left alone (false). A bad value throws Error "`what`: ...".
bool ApplyVllmEnv(const std::string& name, const std::string& value, const std::string& what,
                  DeployConfig& d);

/// Parses and validates a deployment config; `file` names it in errors and
/// anchors relative model/GPU paths. Throws Error (file:line:col: field: why).
DeployConfig ParseDeployConfig(const std::string& text, const std::string& file);

/// Reads and parses a deployment config file.
DeployConfig ReadDeployConfig(const std::string& path);

}  // namespace kvplan
