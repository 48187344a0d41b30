// `compare --vary KEY=V1,V2,...`: the flag's text parsed, and one value
// applied to a copy of the deployment flags (one column each).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cli/deploy_flags.h"

namespace kvplan {

/// Parses "key=v1,v2,..." into the key and its values. Throws Error naming
/// `flag` when the form is wrong, a value is empty, or fewer than one value.
std::pair<std::string, std::vector<std::string>> ParseVary(const std::string& text,
                                                           const std::string& flag = "--vary");

/// `flags` with `key` (one of VaryKeys) set to `value`, each value checked
/// as its own flag checks it. With key "engine", the engine flags the engine
/// does not take (EngineFlags) are unset.
DeployFlags WithVaryValue(DeployFlags flags, const std::string& key, const std::string& value);

/// The names of the engine flags (EngineFlags) that `flags` sets.
std::vector<std::string> GivenEngineFlags(const DeployFlags& flags);

}  // namespace kvplan
