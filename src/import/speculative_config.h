// Speculative decoding's settings as a launch line or a deployment config
// gives them (vLLM's --speculative-config JSON): which method, which draft
// model, how many tokens a step. The capacity model adds the draft's cache
// and weights (plan/capacity_speculative.cpp).
#pragma once

#include <string>
#include <vector>

#include "spec/deploy_config.h"

namespace kvplan {

/// A --speculative-config JSON object: its method, model and
/// num_speculative_tokens; other keys' names appended to `ignored`. Throws
/// Error naming `what` for text that is not a JSON object, or a key of the
/// wrong type.
SpeculativeArgs ReadSpeculativeConfig(const std::string& json, const std::string& what,
                                      std::vector<std::string>& ignored);

}  // namespace kvplan
