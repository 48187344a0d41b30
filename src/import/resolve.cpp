#include "import/resolve.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "import/derivative_names.h"
#include "import/gguf.h"
#include "import/hf_cache.h"
#include "import/hf_import.h"
#include "import/hub_client.h"
#include "import/safetensors.h"
#include "spec/catalog.h"
#include "spec/hardware_spec.h"
#include "spec/model_reader.h"
#include "spec/yaml_reader.h"
#include "util/suggest.h"

namespace kvplan {
namespace fs = std::filesystem;
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// A spec file's name: *.yaml, *.yml or *.json.
bool HasSpecExtension(std::string_view arg) {
  return EndsWith(arg, ".yaml") || EndsWith(arg, ".yml") || EndsWith(arg, ".json");
}

// The checkpoint's exact weight bytes from the safetensors metadata beside
// its config.json (the index, the shards or their stored headers).
void AddCheckpointBytes(ModelSpec& spec, const std::string& folder) {
  if (std::optional<CheckpointBytes> b = ReadCheckpointBytes(folder)) {
    spec.checkpoint_bytes = b->bytes;
    spec.checkpoint_bytes_from = b->from;
  }
}

// Step 1: a path that exists.
ResolvedModel FromPath(const std::string& path) {
  ResolvedModel r;
  std::error_code ec;
  if (fs::is_directory(fs::path(path), ec) && !HasSpecExtension(path)) {
    // A downloaded checkpoint's folder, as `vllm serve ./Llama-3.1-8B` takes
    // it: its Hugging Face config.json.
    const std::string config = (fs::path(path) / "config.json").string();
    if (!fs::exists(config, ec)) {
      Fail(
          "{}: a folder without config.json (a model folder is a Hugging Face checkpoint "
          "with its config.json)",
          path);
    }
    r.spec = ImportHfConfigFile(config).spec;
    AddCheckpointBytes(r.spec, path);
    r.kind = ModelRoute::kCheckpointFolder;
    r.folder = path;
    r.route =
        fmt::format("model: {}, config.json from the checkpoint folder {}", r.spec.name, path);
  } else if (EndsWith(Lower(path), ".gguf")) {
    // A llama.cpp model file: its header, metadata and tensor infos only.
    r.spec = LoadGgufModel(path);
    r.kind = ModelRoute::kGgufFile;
    r.route = fmt::format("model: {}, GGUF file {}", r.spec.name, path);
  } else if (EndsWith(path, ".json")) {
    r.spec = ImportHfConfigFile(path).spec;
    r.kind = ModelRoute::kConfigFile;
    r.route = fmt::format("model: {}, config.json {}", r.spec.name, path);
  } else {
    r.spec = ParseModelYaml(ReadTextFile(path), path);
    r.kind = ModelRoute::kSpecFile;
    r.route = fmt::format("model: {}, spec file {}", r.spec.name, path);
  }
  return r;
}

// A snapshot folder's config.json, named as the repo.
ResolvedModel FromSnapshot(const std::string& repo, const std::string& folder) {
  ResolvedModel r;
  r.spec = ImportHfConfigFile((fs::path(folder) / "config.json").string(), repo).spec;
  r.spec.hf_repo = repo;
  AddCheckpointBytes(r.spec, folder);
  r.folder = folder;
  return r;
}

// Step 5: a derivative name's catalog base; `why` says why the model's own
// config.json was not read ("" for a bare name).
std::optional<ResolvedModel> FromDerivative(std::string_view arg, const std::string& why) {
  std::optional<Derivative> d = MatchDerivative(arg);
  if (!d) return std::nullopt;
  ResolvedModel r;
  r.spec = std::move(d->spec);
  r.kind = ModelRoute::kDerivative;
  r.route = fmt::format("model: {}, catalog model {} assumed from the name", arg, d->base);
  r.notes.push_back(why.empty() ? d->note : why + "; " + d->note);
  return r;
}

// Step 6: none of the ways found it; `hub` says why the Hub did not answer.
[[noreturn]] void Unknown(std::string_view arg, const std::string& hub_dir,
                          const std::string& hub) {
  Fail(
      "unknown model '{}': no such file or catalog name, not in the local Hugging Face cache "
      "({}), and {}; give a config.json or checkpoint folder path, fetch only its config with "
      "`huggingface-cli download {} config.json`, or pick a name from `kvplan models`",
      arg, hub_dir, hub, arg);
}

}  // namespace

bool LooksLikePath(std::string_view arg) {
  if (arg.find('/') != std::string_view::npos) return true;
  if (HasSpecExtension(arg)) return true;
  std::error_code ec;
  return fs::is_regular_file(fs::path(arg), ec);
}

std::string_view ModelRouteName(ModelRoute route) {
  switch (route) {
    case ModelRoute::kSpecFile:
      return "spec-file";
    case ModelRoute::kConfigFile:
      return "config-file";
    case ModelRoute::kCheckpointFolder:
      return "checkpoint-folder";
    case ModelRoute::kGgufFile:
      return "gguf-file";
    case ModelRoute::kCatalog:
      return "catalog";
    case ModelRoute::kCache:
      return "hf-cache";
    case ModelRoute::kHub:
      return "hub";
    case ModelRoute::kDerivative:
      return "derivative";
  }
  return "";
}

bool RouteIsIndirect(ModelRoute route) {
  return route == ModelRoute::kCache || route == ModelRoute::kHub ||
         route == ModelRoute::kDerivative;
}

ResolvedModel ResolveModel(std::string_view arg, const ResolveOptions& options) {
  if (arg.empty()) Fail("model: empty name");
  // 1. A path that exists wins over any name; an HF repo id
  // ("meta-llama/Llama-3.1-8B") contains '/' but names no file.
  std::error_code ec;
  if (fs::exists(fs::path(arg), ec)) return FromPath(std::string(arg));
  // 2. The catalog, by name or hf_repo, case-insensitive.
  std::string key = Lower(arg);
  std::vector<std::string> names;
  for (const ModelSpec& m : CatalogModels()) {
    if (Lower(m.name) == key || (!m.hf_repo.empty() && Lower(m.hf_repo) == key)) {
      ResolvedModel r;
      r.spec = m;
      r.kind = ModelRoute::kCatalog;
      r.route = fmt::format("model: {}, the bundled catalog ({})", m.name, m.origin);
      return r;
    }
    names.push_back(m.name);
  }
  // A file name, or a relative or absolute path (an HF repo id has one '/'
  // but starts with neither '.' nor '/'), that is not there.
  if (HasSpecExtension(arg) || arg.starts_with("./") || arg.starts_with("../") ||
      arg.starts_with("/") || arg.starts_with("~/") || EndsWith(Lower(arg), ".gguf")) {
    Fail("{}: cannot open file: No such file or directory", arg);
  }
  const std::string repo(arg);
  if (IsHfRepoId(repo)) {
    if (!IsHfRevision(options.revision)) {
      Fail("--revision: '{}' is not a branch, tag or commit name", options.revision);
    }
    // 3. The local Hugging Face cache.
    const std::string hub_dir = HfHubCacheDir();
    if (std::optional<CachedSnapshot> snap = FindCachedSnapshot(hub_dir, repo, options.revision)) {
      ResolvedModel r = FromSnapshot(repo, snap->folder);
      r.kind = ModelRoute::kCache;
      r.route = fmt::format("model: {}, config.json from the local Hugging Face cache, snapshot {}",
                            repo, snap->commit.substr(0, 7));
      return r;
    }
    // 4. The Hub: only the small files, stored in the cache for next time.
    const HubSettings hub = HubSettingsFromEnv();
    std::string off = "HF_HUB_OFFLINE forbids the Hub";
    if (!hub.offline) {
      try {
        HubFiles got = FetchFromHub(hub, repo, options.revision);
        const std::string folder =
            StoreSnapshot(hub_dir, repo, options.revision, got.commit, got.files);
        ResolvedModel r = FromSnapshot(repo, folder);
        r.kind = ModelRoute::kHub;
        r.route = fmt::format(
            "model: {}, config.json from the Hub ({}), snapshot {}, now in the local Hugging Face "
            "cache",
            repo, hub.endpoint, got.commit.substr(0, 7));
        r.notes = got.notes;
        return r;
      } catch (const HubUnreachable& e) {
        off = e.what();
      }
    }
    // 5. A derivative name's catalog base.
    const std::string why =
        fmt::format("{} is not in the local Hugging Face cache ({}) and {}", repo, hub_dir, off);
    if (std::optional<ResolvedModel> r = FromDerivative(repo, why)) return *r;
    Unknown(repo, hub_dir, off);
  }
  // A bare name: a derivative of a catalog name ("llama-3.1-8b-instruct"),
  // else the closest catalog names.
  if (std::optional<ResolvedModel> r = FromDerivative(arg, "")) return *r;
  Fail("unknown model '{}'{}; `kvplan models` lists the catalog", arg, DidYouMean(arg, names));
}

ModelSpec LoadModel(std::string_view arg) {
  return ResolveModel(arg).spec;
}

HardwareSpec LoadHardware(std::string_view arg) {
  if (arg.empty()) Fail("gpu: empty name");
  std::error_code ec;
  if (fs::exists(fs::path(arg), ec)) {
    std::string path(arg);
    return ParseHardwareYaml(ReadTextFile(path), path);
  }
  std::string key = Lower(arg);
  std::vector<std::string> names;
  for (const HardwareSpec& h : CatalogHardware()) {
    if (Lower(h.name) == key) return h;
    names.push_back(h.name);
  }
  if (LooksLikePath(arg)) Fail("{}: cannot open file: No such file or directory", arg);
  Fail("unknown GPU '{}'{}; `kvplan gpus` lists the catalog", arg, DidYouMean(arg, names));
}

}  // namespace kvplan
