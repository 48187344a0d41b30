// The MODEL argument of size, capacity, latency and check: resolved in the
// one order of import/resolve, with the route written on stderr when the
// model came from somewhere the argument does not name outright (the local
// Hugging Face cache, the Hub, a derivative name's catalog base), and every
// assumption as a note. stdout stays the command's output alone.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "spec/deploy_config.h"
#include "spec/model_spec.h"

namespace kvplan {

/// Resolves `arg` at `revision`; prints "kvplan: model: ..." and
/// "kvplan: note: ..." lines on stderr as above. Throws Error.
ModelSpec LoadModelAndSay(std::string_view arg, const std::string& revision = "main");

/// Speculative decoding's memory for `target`: the MTP layers it serves
/// (method mtp: the model's own num_nextn_predict_layers, an error when it
/// has none) or the draft model, resolved as a MODEL argument (an EAGLE head
/// from its own config.json, never a name's catalog guess). `what` names the
/// flag in errors. Throws Error.
void ResolveSpeculative(const SpeculativeArgs& s, const ModelSpec& target, const std::string& what,
                        uint64_t& mtp_layers, std::shared_ptr<const ModelSpec>& draft);

/// Adds --revision (a branch, tag or commit of the Hub repo; default main).
void AddRevisionOption(CLI::App* sub, std::string& revision);

}  // namespace kvplan
