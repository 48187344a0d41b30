// The bundled catalogs (models/*.yaml, hardware/*.yaml), compiled into the
// binary, and the lookup that turns a MODEL or GPU argument into a spec:
// a path to a file always wins over a catalog name.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spec/hardware_spec.h"
#include "spec/model_spec.h"

namespace kvplan {

struct EmbeddedFile {
  std::string_view path;     // "models/llama-3.1-8b.yaml"
  std::string_view content;
};

/// Every catalog file compiled into the binary (generated at build time).
std::span<const EmbeddedFile> EmbeddedFiles();

/// Every bundled model, parsed and validated, sorted by name.
const std::vector<ModelSpec>& CatalogModels();

/// Every bundled accelerator, sorted by name.
const std::vector<HardwareSpec>& CatalogHardware();

/// True when `arg` looks like a path (contains '/' or ends in .yaml/.yml/.json)
/// or names an existing file.
bool LooksLikePath(std::string_view arg);

/// A model from a path (spec YAML, a Hugging Face config.json, or a
/// checkpoint folder holding one) or a catalog name / HF repo id
/// (case-insensitive). Unknown names get the closest matches suggested.
/// Throws Error.
ModelSpec LoadModel(std::string_view arg);

/// An accelerator from a path (spec or bench profile) or a catalog name.
HardwareSpec LoadHardware(std::string_view arg);

}  // namespace kvplan
