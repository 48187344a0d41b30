// The lookup that turns a MODEL or GPU argument into a spec, in one order
// for every command (docs/model-resolution.md):
//   1. a path: spec YAML, config.json, a checkpoint folder, a .gguf file;
//   2. a catalog name, or a catalog model's hf_repo;
//   3. the local Hugging Face cache (import/hf_cache), at --revision;
//   4. the Hub (import/hub_client), unless HF_HUB_OFFLINE=1: config.json,
//      the safetensors index and headers only, stored in the cache;
//   5. offline and not cached: a derivative name's catalog base
//      (import/derivative_names), with a note saying what was assumed;
//   6. else an error naming the ways to supply the model.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "spec/hardware_spec.h"
#include "spec/model_spec.h"

namespace kvplan {

/// True when `arg` looks like a path (contains '/' or ends in .yaml/.yml/.json)
/// or names an existing file.
bool LooksLikePath(std::string_view arg);

/// The way a MODEL argument was resolved (the step of the order above).
enum class ModelRoute {
  kSpecFile,
  kConfigFile,
  kCheckpointFolder,
  kGgufFile,
  kCatalog,
  kCache,
  kHub,
  kDerivative,
};

/// "spec-file", "config-file", "checkpoint-folder", "gguf-file", "catalog",
/// "hf-cache", "hub", "derivative".
std::string_view ModelRouteName(ModelRoute route);

struct ResolveOptions {
  std::string revision = "main";  // a branch, tag or commit (cache and Hub)
};

/// A model and how it was found.
struct ResolvedModel {
  ModelSpec spec;
  ModelRoute kind = ModelRoute::kCatalog;
  std::string route;               // "model: ORG/NAME, config.json from the local ... "
  std::vector<std::string> notes;  // assumptions and fallbacks, one sentence each
  std::string folder;              // the snapshot or checkpoint folder read, if any
};

/// Resolves `arg` in the order above. Throws Error (one line, exit 2).
ResolvedModel ResolveModel(std::string_view arg, const ResolveOptions& options = {});

/// True when the route is worth a line beside a command's output: the model
/// came from somewhere other than what the argument names outright (the
/// cache, the Hub, a derivative name's base).
bool RouteIsIndirect(ModelRoute route);

/// A model from a path (spec YAML, a Hugging Face config.json, or a
/// checkpoint folder holding one) or a name, as ResolveModel; the route
/// and notes dropped. Throws Error.
ModelSpec LoadModel(std::string_view arg);

/// An accelerator from a path (spec or bench profile) or a catalog name.
HardwareSpec LoadHardware(std::string_view arg);

}  // namespace kvplan
