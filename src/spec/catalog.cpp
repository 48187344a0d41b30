#include "spec/catalog.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "spec/hf_import.h"
#include "spec/model_reader.h"
#include "spec/yaml_reader.h"
#include "util/suggest.h"

namespace kvplan {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

const std::vector<ModelSpec>& CatalogModels() {
  static const std::vector<ModelSpec> kModels = [] {
    std::vector<ModelSpec> out;
    for (const EmbeddedFile& f : EmbeddedFiles()) {
      if (f.path.substr(0, 7) != "models/") continue;
      out.push_back(ParseModelYaml(std::string(f.content), "catalog:" + std::string(f.path)));
    }
    std::sort(out.begin(), out.end(),
              [](const ModelSpec& a, const ModelSpec& b) { return a.name < b.name; });
    return out;
  }();
  return kModels;
}

const std::vector<HardwareSpec>& CatalogHardware() {
  static const std::vector<HardwareSpec> kHardware = [] {
    std::vector<HardwareSpec> out;
    for (const EmbeddedFile& f : EmbeddedFiles()) {
      if (f.path.substr(0, 9) != "hardware/") continue;
      out.push_back(ParseHardwareYaml(std::string(f.content), "catalog:" + std::string(f.path)));
    }
    std::sort(out.begin(), out.end(),
              [](const HardwareSpec& a, const HardwareSpec& b) { return a.name < b.name; });
    return out;
  }();
  return kHardware;
}

namespace {

// A spec file's name: *.yaml, *.yml or *.json.
bool HasSpecExtension(std::string_view arg) {
  return EndsWith(arg, ".yaml") || EndsWith(arg, ".yml") || EndsWith(arg, ".json");
}

}  // namespace

bool LooksLikePath(std::string_view arg) {
  if (arg.find('/') != std::string_view::npos) return true;
  if (HasSpecExtension(arg)) return true;
  std::error_code ec;
  return std::filesystem::is_regular_file(std::filesystem::path(arg), ec);
}

ModelSpec LoadModel(std::string_view arg) {
  if (arg.empty()) Fail("model: empty name");
  // A catalog name wins only when no such file exists; an HF repo id
  // ("meta-llama/Llama-3.1-8B") contains '/' but names no file.
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::path(arg), ec)) {
    std::string path(arg);
    // A downloaded checkpoint's folder, as `vllm serve ./Llama-3.1-8B` takes
    // it: its Hugging Face config.json.
    if (std::filesystem::is_directory(std::filesystem::path(arg), ec) && !HasSpecExtension(arg)) {
      const std::string config = (std::filesystem::path(arg) / "config.json").string();
      if (!std::filesystem::exists(config, ec)) {
        Fail(
            "{}: a folder without config.json (a model folder is a Hugging Face checkpoint "
            "with its config.json)",
            path);
      }
      return ImportHfConfigFile(config).spec;
    }
    if (EndsWith(path, ".json")) return ImportHfConfigFile(path).spec;
    return ParseModelYaml(ReadTextFile(path), path);
  }
  std::string key = Lower(arg);
  std::vector<std::string> names;
  for (const ModelSpec& m : CatalogModels()) {
    if (Lower(m.name) == key || (!m.hf_repo.empty() && Lower(m.hf_repo) == key)) return m;
    names.push_back(m.name);
  }
  // A file name, or a relative or absolute path (an HF repo id has one '/'
  // but starts with neither '.' nor '/'), that is not there.
  if (HasSpecExtension(arg) || arg.starts_with("./") || arg.starts_with("../") ||
      arg.starts_with("/") || arg.starts_with("~/")) {
    Fail("{}: cannot open file: No such file or directory", arg);
  }
  Fail("unknown model '{}'{}; `kvplan models` lists the catalog", arg, DidYouMean(arg, names));
}

HardwareSpec LoadHardware(std::string_view arg) {
  if (arg.empty()) Fail("gpu: empty name");
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::path(arg), ec)) {
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
