// The batch / context trade-off of a deployment: the TradeoffInput that a
// capacity result gives (its blocks, the engine's admission rule, and the
// longest context the grids consider), and the rule that every context asked
// about fits under that limit.
#pragma once

#include <cstdint>
#include <vector>

#include "plan/capacity.h"
#include "plan/tradeoff.h"
#include "spec/model_spec.h"

namespace kvplan {

/// The longest context the grids consider: max-model-len, which for llama.cpp
/// is its -c over -np (4,096 by default) unless --max-model-len was given
/// (`max_model_len_given`). A llama.cpp row is itself a choice of -np and -c
/// (see FitsAtConcurrency), so there the default cap is the model's own
/// context, as for the others.
uint64_t TradeoffContextCap(const ModelSpec& m, const CapacityResult& cap,
                            bool max_model_len_given);

/// The trade-off input of `cap`; its functions refer to `cap`, which must
/// outlive it.
TradeoffInput TradeoffInputFor(const ModelSpec& m, const CapacityResult& cap,
                               bool max_model_len_given);

/// Throws Error when a context of `contexts` is longer than `max_context`.
void CheckContextsFit(const std::vector<uint64_t>& contexts, uint64_t max_context);

}  // namespace kvplan
