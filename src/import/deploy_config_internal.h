// The private pieces that the two halves of the deployment-config reader
// share: the document reader (deploy_config_reader.cpp) hands engine.args to
// the key table's reader (deploy_config_args.cpp), and both read token
// counts the same way; the launch-line reader (engine_command.cpp) hands
// its flags to the same key table. Nothing else includes it; the public
// API is import/deploy_config_reader.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/deploy_config.h"
#include "spec/yaml_reader.h"

namespace kvplan {

/// The required token count at `key` ("32K", 4096), as ParseTokens reads it;
/// 0 is refused unless `allow_zero`. Errors name the key's file:line:col.
uint64_t ReadTokenCount(MapReader& r, const std::string& key, bool allow_zero);

/// Reads engine.args (`node`, in `file`) for d.engine into d.args, under the
/// engine's own key names; keys written without a value are named in a note.
void ReadEngineArgs(const YAML::Node& node, const std::string& file, DeployConfig& d);

/// True where `key` is one ReadEngineArgs takes for `engine`: read, or
/// named as a flag kvplan does not model. A command line's other flags are
/// only named (import/engine_command.cpp).
bool IsEngineArgsKey(const std::string& engine, const std::string& key);

// ---- the key tables (deploy_config_keys.cpp) ----

enum class ArgType { kTokens, kCount, kFraction, kRatio, kBool, kNotBool, kText, kBytes };

struct ArgKey {
  const char* key;    // the engine's own name
  const char* field;  // EngineArgs field
  ArgType type;
};

/// Each engine's keys that kvplan reads, under the names its own config
/// files and CLI use (dashes become underscores, as vLLM's and SGLang's YAML
/// configs write them).
const std::vector<ArgKey>& KeysFor(const std::string& engine);

/// The keys each engine takes that kvplan reads no value from: `memory`
/// changes what is left for the cache in ways kvplan does not model (a note,
/// and a failure under `check --strict`), `harmless` does not touch it (a
/// note). Anything else is a typo.
struct OtherKeys {
  std::vector<std::string> memory;
  std::vector<std::string> harmless;
};
const OtherKeys& OtherKeysFor(const std::string& engine);

}  // namespace kvplan
