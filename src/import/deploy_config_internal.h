// The private pieces that the two halves of the deployment-config reader
// share: the document reader (deploy_config_reader.cpp) hands engine.args to
// the key table's reader (deploy_config_args.cpp), and both read token
// counts the same way. Nothing outside src/import/deploy_config_*.cpp
// includes it; the public API is import/deploy_config_reader.h.
#pragma once

#include <cstdint>
#include <string>

#include "spec/deploy_config.h"
#include "spec/yaml_reader.h"

namespace kvplan {

/// The required token count at `key` ("32K", 4096), as ParseTokens reads it;
/// 0 is refused unless `allow_zero`. Errors name the key's file:line:col.
uint64_t ReadTokenCount(MapReader& r, const std::string& key, bool allow_zero);

/// Reads engine.args (`node`, in `file`) for d.engine into d.args, under the
/// engine's own key names; keys written without a value are named in a note.
void ReadEngineArgs(const YAML::Node& node, const std::string& file, DeployConfig& d);

}  // namespace kvplan
