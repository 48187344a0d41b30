// Importing a Hugging Face config.json as a kvplan model spec.
//
// The importer reads the fields the serving engines read (vLLM's and
// transformers' config classes), prefers an explicit head_dim, applies the
// documented class defaults for keys a config omits, and writes every such
// assumption as a YAML comment. It refuses architectures it does not know
// rather than guess their cache layout. Schema: docs/model-spec.md.
#pragma once

#include <string>
#include <vector>

#include "spec/model_spec.h"

namespace kvplan {

struct HfImport {
  ModelSpec spec;    // validated, as ParseModelYaml reads `yaml` back
  std::string yaml;  // the spec YAML, assumptions as comments
};

/// Imports a config.json given as text; `file` names it in messages and in
/// the spec's `source`. `name` overrides the spec name (default: from
/// _name_or_path or the file's folder). Throws Error naming file:line:col.
HfImport ImportHfConfig(const std::string& text, const std::string& file,
                        const std::string& name = "");

/// Reads `path` and imports it (see ImportHfConfig).
HfImport ImportHfConfigFile(const std::string& path, const std::string& name = "");

/// The `architectures` values the importer supports, in documentation order.
std::vector<std::string> SupportedHfArchitectures();

}  // namespace kvplan
