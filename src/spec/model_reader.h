// Reads a model spec (models/*.yaml; schema in docs/model-spec.md).
#pragma once

#include <string>

#include "spec/model_spec.h"

namespace kvplan {

/// Parses and validates a model spec from YAML text; `file` names it in errors.
ModelSpec ParseModelYaml(const std::string& text, const std::string& file);

}  // namespace kvplan
