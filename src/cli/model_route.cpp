#include "cli/model_route.h"

#include <fmt/format.h>

#include <cstdio>

#include "import/resolve.h"
#include "util/error.h"

namespace kvplan {

ModelSpec LoadModelAndSay(std::string_view arg, const std::string& revision) {
  ResolveOptions options;
  options.revision = revision;
  ResolvedModel r = ResolveModel(arg, options);
  if (RouteIsIndirect(r.kind)) fmt::print(stderr, "kvplan: {}\n", r.route);
  for (const std::string& note : r.notes) fmt::print(stderr, "kvplan: note: {}\n", note);
  return std::move(r.spec);
}

void ResolveSpeculative(const SpeculativeArgs& s, const ModelSpec& target, const std::string& what,
                        uint64_t& mtp_layers, std::shared_ptr<const ModelSpec>& draft) {
  if (s.Mtp()) {
    if (target.mtp_layers == 0) {
      Fail("{}: method {}: {} has no MTP layers (num_nextn_predict_layers 0); give a draft model",
           what, s.method, target.name);
    }
    if (s.mtp_layers > target.mtp_layers) {
      Fail("{}: {} MTP layers asked for, and {} has {}", what, s.mtp_layers, target.name,
           target.mtp_layers);
    }
    mtp_layers = s.mtp_layers != 0 ? s.mtp_layers : target.mtp_layers;
    return;
  }
  if (s.model.empty()) return;  // ngram, suffix: no draft weights or cache
  ResolvedModel r = ResolveModel(s.model, ResolveOptions{});
  if (r.kind == ModelRoute::kDerivative) {
    Fail(
        "{}: draft model {}: its config.json is not in the local Hugging Face cache or the "
        "catalog, and a draft (an EAGLE head above all) must not be guessed from its name; "
        "download its config.json or give a catalog name",
        what, s.model);
  }
  if (RouteIsIndirect(r.kind)) fmt::print(stderr, "kvplan: draft {}\n", r.route);
  draft = std::make_shared<const ModelSpec>(std::move(r.spec));
}

void AddRevisionOption(CLI::App* sub, std::string& revision) {
  sub->add_option("--revision", revision,
                  "Hub revision of an ORG/NAME model: a branch, tag or commit (the local Hugging "
                  "Face cache's refs, else the Hub)")
      ->capture_default_str();
}

}  // namespace kvplan
