// Speculative decoding's settings as a launch line or a deployment config
// gives them, in each engine's own words: vLLM's --speculative-config JSON
// (or engine.args speculative_config), TensorRT-LLM's speculative_config
// (decoding_type MTP, Eagle, DraftTarget, ...) and SGLang's
// --speculative-algorithm with its draft model. All end as one
// SpeculativeArgs; the capacity model adds the draft's cache and weights
// (plan/capacity_speculative.cpp).
#pragma once

#include <string>
#include <vector>

#include "spec/deploy_config.h"
#include "spec/yaml_reader.h"

namespace kvplan {

/// A --speculative-config JSON object: its method, model and
/// num_speculative_tokens; other keys' names appended to `ignored`. Throws
/// Error naming `what` for text that is not a JSON object, or a key of the
/// wrong type.
SpeculativeArgs ReadSpeculativeConfig(const std::string& json, const std::string& what,
                                      std::vector<std::string>& ignored);

/// The engine.args keys that set speculative decoding for `engine` (vllm,
/// sglang, trtllm; none for llama.cpp).
const std::vector<std::string>& SpeculativeKeys(const std::string& engine);

/// Reads d.engine's speculative keys written in `r` into d.args.speculative
/// (left unset when none is). SGLang's draft path naming d.model means the
/// model's own MTP layers. Keys that size nothing go to `ignored`, methods
/// whose memory kvplan does not model to d.unmodelled; bad values throw
/// Error at the key's file:line.
void ReadSpeculativeKeys(MapReader& r, DeployConfig& d, std::vector<std::string>& ignored);

}  // namespace kvplan
