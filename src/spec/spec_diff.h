// Comparing a model spec with what its Hugging Face config says
// (`kvplan models --verify spec.yaml --against config.json`).
#pragma once

#include <string>
#include <vector>

#include "spec/model_spec.h"

namespace kvplan {

struct FieldDiff {
  std::string field;         // "kv_heads", "moe.experts", "layer_groups"
  std::string spec_value;    // as the spec states it
  std::string config_value;  // as the config implies it
  SourcePos pos;             // the field in the spec file (or the file alone)
};

/// Every field where `spec` and `config` (a spec imported from config.json)
/// disagree, in spec order. Fields the spec leaves out (vocab_size,
/// intermediate_size) and params (a config has no count) are not compared;
/// layer groups are compared layer by layer (kind, window, state bytes).
std::vector<FieldDiff> DiffSpecs(const ModelSpec& spec, const ModelSpec& config);

/// "12 sliding (4096) + 4 full" -- the layer groups in one phrase.
std::string LayerPatternSummary(const ModelSpec& spec);

}  // namespace kvplan
