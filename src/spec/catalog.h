// The bundled catalogs (models/*.yaml, hardware/*.yaml), compiled into the
// binary. Turning a MODEL or GPU argument into a spec: import/resolve.h.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spec/hardware_spec.h"
#include "spec/model_spec.h"

namespace kvplan {

struct EmbeddedFile {
  std::string_view path;  // "models/llama-3.1-8b.yaml"
  std::string_view content;
};

/// Every catalog file compiled into the binary (generated at build time).
std::span<const EmbeddedFile> EmbeddedFiles();

/// Every bundled model, parsed and validated, sorted by name.
const std::vector<ModelSpec>& CatalogModels();

/// Every bundled accelerator, sorted by name.
const std::vector<HardwareSpec>& CatalogHardware();
}  // namespace kvplan
