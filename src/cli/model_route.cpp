#include "cli/model_route.h"

#include <fmt/format.h>

#include <cstdio>

#include "import/resolve.h"

namespace kvplan {

ModelSpec LoadModelAndSay(std::string_view arg, const std::string& revision) {
  ResolveOptions options;
  options.revision = revision;
  ResolvedModel r = ResolveModel(arg, options);
  if (RouteIsIndirect(r.kind)) fmt::print(stderr, "kvplan: {}\n", r.route);
  for (const std::string& note : r.notes) fmt::print(stderr, "kvplan: note: {}\n", note);
  return std::move(r.spec);
}

void AddRevisionOption(CLI::App* sub, std::string& revision) {
  sub->add_option("--revision", revision,
                  "Hub revision of an ORG/NAME model: a branch, tag or commit (the local Hugging "
                  "Face cache's refs, else the Hub)")
      ->capture_default_str();
}

}  // namespace kvplan
