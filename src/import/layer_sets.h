// Layers listed by what they hold, written as kvplan's periodic layer
// groups: the one step the HF importer and the GGUF reader share after each
// has found every layer's kind.
#pragma once

#include <cstdint>
#include <vector>

#include "spec/model_spec.h"

namespace kvplan {

/// The layers (ascending indices) that hold one kind of state.
struct LayerSet {
  LayerKind kind = LayerKind::kFull;
  uint64_t kv_heads = 0;  // 0: the model's
  uint64_t window = 0;    // sliding or chunked layers' window
  std::vector<uint64_t> layers;
};

/// True when `indices` are exactly offset, offset + every, ... below
/// `total` (one index: every = total), with `every` and `offset` set.
bool IsPeriodic(const std::vector<uint64_t>& indices, uint64_t total, uint64_t& every,
                uint64_t& offset);

/// The sets as layer groups in `out`: every set but one periodic (layer i in
/// it iff i % every == offset), the remaining one taking the rest. The last
/// set that can take the rest is tried first, so gpt-oss [sliding, full,
/// ...] becomes "sliding every 2 offset 0, full the rest", as models/*.yaml
/// write it. A pattern that is not periodic lists its layers (`at`) in every
/// group but the largest, which takes the rest. Empty sets are left out.
void LayerSetsToGroups(std::vector<LayerSet> sets, uint64_t total, std::vector<LayerGroup>& out);

}  // namespace kvplan
