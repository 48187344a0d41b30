// An estimate of a model's parameter count from its shapes, for specs that
// come without a published count (`kvplan import-hf`). It counts embeddings,
// attention (standard or MLA), dense and MoE MLPs, Mamba mixers and norms;
// it ignores small biases, so it is within about 1% of the published counts
// of the bundled models (tests/hf_import_test.cpp checks every one).
#pragma once

#include <cstdint>
#include <string>

#include "spec/model_spec.h"

namespace kvplan {

/// Parameters of `spec` (layer groups resolved by ValidateModel or set by the
/// caller). Overflow is an Error.
uint64_t EstimateParams(const ModelSpec& spec);

/// One line naming what EstimateParams counts, for comments in generated specs.
std::string ParamsFormula(const ModelSpec& spec);

}  // namespace kvplan
