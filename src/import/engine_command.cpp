// Reading any engine's launch line: finding the engine (its command, or the
// docker image it runs), then, for SGLang, llama.cpp and TensorRT-LLM,
// turning the flags into engine.args keys for the deployment config's own
// reader (deploy_config_args.cpp). vLLM lines keep their own parser.
#include "import/engine_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "import/deploy_config_internal.h"
#include "import/vllm_args.h"
#include "import/vllm_args_internal.h"
#include "spec/engine.h"
#include "spec/yaml_reader.h"
#include "util/error.h"

namespace kvplan {
namespace {

constexpr const char* kWhat = "--engine-args";

// The last path component of a command: "/usr/bin/python3" -> "python3".
std::string Base(const std::string& word) {
  const size_t slash = word.rfind('/');
  return slash == std::string::npos ? word : word.substr(slash + 1);
}

struct Image {
  const char* repo;    // matched at the end of the image's name, before the tag
  const char* engine;  // "" where a command follows the image
  bool entrypoint;     // the image runs the engine: its arguments follow it
};

// The engines' published images (Docker Hub, GHCR, NGC).
constexpr Image kImages[] = {
    {"vllm/vllm-openai", "vllm", true},         {"vllm/vllm-openai-rocm", "vllm", true},
    {"lmsysorg/sglang", "sglang", false},       {"ggml-org/llama.cpp", "llama.cpp", true},
    {"ggerganov/llama.cpp", "llama.cpp", true}, {"nvidia/tensorrt-llm/release", "trtllm", false},
    {"nvidia/tritonserver", "trtllm", false},
};

// The image `word` names ([registry/]repo[:tag|@digest]), or nullptr; its
// tag into `tag`.
const Image* MatchImage(const std::string& word, std::string& tag) {
  if (word.empty() || word[0] == '/' || word[0] == '.' || word[0] == '~' || word[0] == '-') {
    return nullptr;  // a path (a mount) or an option
  }
  std::string name = word.substr(0, word.find('@'));
  const size_t colon = name.rfind(':');
  const size_t slash = name.rfind('/');
  tag.clear();
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    tag = name.substr(colon + 1);
    name.resize(colon);
  }
  for (const Image& im : kImages) {
    const std::string repo = im.repo;
    if (name == repo || (name.size() > repo.size() && name.ends_with("/" + repo))) return &im;
  }
  return nullptr;
}

// "v0.10.1", "0.4.6.post1-cu124", "server-b4567" -> the leading version
// ("0.10.1", "0.4.6.post1"), or "" when the tag is no version (latest).
std::string TagVersion(const std::string& tag) {
  std::string t = tag;
  if (!t.empty() && t[0] == 'v') t.erase(0, 1);
  if (t.empty() || !std::isdigit(static_cast<unsigned char>(t[0]))) return "";
  const size_t end = t.find_first_of("-_");
  return t.substr(0, end);
}

// The engine a command word (and the one after it) runs, or "".
std::string EngineOfCommand(const std::vector<std::string>& w, size_t& i) {
  const std::string cmd = Base(w[i]);
  if (cmd == "vllm") return "vllm";
  if (cmd == "llama-server" || cmd == "llama-cli") {
    ++i;
    return "llama.cpp";
  }
  if (cmd == "trtllm-serve") {
    ++i;
    if (i < w.size() && w[i] == "serve") ++i;  // trtllm-serve serve MODEL
    return "trtllm";
  }
  if (cmd == "sglang" && i + 1 < w.size() && w[i + 1] == "serve") {
    i += 2;
    return "sglang";
  }
  if (cmd.rfind("python", 0) == 0) {
    for (size_t k = i + 1; k + 1 < w.size(); ++k) {
      if (w[k] != "-m") continue;
      const std::string& module = w[k + 1];
      if (module.rfind("vllm", 0) == 0) return "vllm";
      if (module == "sglang.launch_server") {
        i = k + 2;
        return "sglang";
      }
      break;
    }
  }
  return "";
}

// Flags that take no value, per engine (after the same renaming as keys).
bool IsSwitchKey(const std::string& engine, const std::string& key) {
  static const std::set<std::string> kSglang = {
      "disable_radix_cache",      "disable_cuda_graph",
      "enable_dp_attention",      "trust_remote_code",
      "enable_metrics",           "enable_torch_compile",
      "skip_tokenizer_init",      "enable_mixed_chunk",
      "disable_overlap_schedule", "enable_ep_moe",
      "enable_deepep_moe",        "log_requests",
      "enable_cache_report",      "disable_custom_all_reduce",
      "show_time_cost",           "enable_hierarchical_cache"};
  static const std::set<std::string> kLlamaCpp = {
      "swa_full",  "kv_unified", "no_kv_offload", "cont_batching", "no_cont_batching",
      "jinja",     "mlock",      "no_mmap",       "metrics",       "verbose",
      "embedding", "rerank",     "no_webui",      "log_disable",   "cpu_moe"};
  static const std::set<std::string> kTrtllm = {"trust_remote_code", "enable_attention_dp"};
  if (engine == "sglang") return kSglang.count(key) != 0;
  if (engine == "llama.cpp") return kLlamaCpp.count(key) != 0;
  if (engine == "trtllm") return kTrtllm.count(key) != 0;
  return false;
}

// A flag's engine.args key: its aliases spelled out, dashes as underscores.
// "model" for the flags that name the model.
std::string KeyOf(const std::string& engine, const std::string& flag) {
  static const std::map<std::string, std::string> kSglang = {
      {"--model-path", "model"},
      {"--model", "model"},
      {"--tp", "tp_size"},
      {"--tensor-parallel-size", "tp_size"},
      {"--dp", "dp_size"},
      {"--data-parallel-size", "dp_size"},
      {"--pipeline-parallel-size", "pp_size"}};
  static const std::map<std::string, std::string> kLlamaCpp = {
      {"-m", "model"},          {"--model", "model"},
      {"-hf", "model"},         {"-hfr", "model"},
      {"--hf-repo", "model"},   {"-c", "ctx_size"},
      {"-np", "parallel"},      {"-ctk", "cache_type_k"},
      {"-ctv", "cache_type_v"}, {"-ub", "ubatch_size"},
      {"-b", "batch_size"},     {"-fa", "flash_attn"},
      {"-ngl", "n_gpu_layers"}, {"--gpu-layers", "n_gpu_layers"},
      {"-ts", "tensor_split"},  {"-sm", "split_mode"},
      {"-mg", "main_gpu"},      {"-nkvo", "no_kv_offload"},
      {"-kvu", "kv_unified"},   {"-t", "threads"},
      {"-tb", "threads_batch"}, {"-a", "alias"},
      {"-cb", "cont_batching"}, {"-nocb", "no_cont_batching"},
      {"-n", "n_predict"},      {"-s", "seed"},
      {"-md", "model_draft"},   {"-ot", "override_tensor"},
      {"-v", "verbose"},        {"-to", "timeout"}};
  static const std::map<std::string, std::string> kTrtllm = {
      {"--model", "model"},
      {"--kv_cache_free_gpu_memory_fraction", "free_gpu_memory_fraction"},
      {"--tensor_parallel_size", "tp_size"},
      {"--pipeline_parallel_size", "pp_size"}};
  const std::map<std::string, std::string>& aliases = engine == "sglang"      ? kSglang
                                                      : engine == "llama.cpp" ? kLlamaCpp
                                                                              : kTrtllm;
  auto it = aliases.find(flag);
  if (it != aliases.end()) return it->second;
  const size_t start = flag.find_first_not_of('-');
  if (start == std::string::npos) return "";  // "--" alone: no flag
  std::string key = flag.substr(start);
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

// TensorRT-LLM's --extra_llm_api_options YAML: its LLM API keys that size the
// cache, as engine.args keys ("kv_cache_config.free_gpu_memory_fraction" is
// free_gpu_memory_fraction); the others named in `ignored` (the file is the
// engine's: an option kvplan does not know is no typo of kvplan's).
void ReadTrtllmOptions(const std::string& path, YAML::Node& args,
                       std::vector<std::string>& ignored) {
  const YAML::Node root = ParseYaml(ReadTextFile(path), path);
  if (!root.IsMap()) Fail("{}: expected a map of LLM API options", path);
  for (const auto& it : root) {
    const std::string key = it.first.Scalar();
    if (key == "kv_cache_config" && it.second.IsMap()) {
      for (const auto& kv : it.second) {
        const std::string k = kv.first.Scalar();
        if (k == "free_gpu_memory_fraction" || k == "enable_block_reuse" ||
            k == "max_gpu_total_bytes" || k == "host_cache_size" || k == "max_tokens") {
          args[k] = kv.second;
        } else if (k == "dtype") {
          args["kv_cache_dtype"] = kv.second;
        } else {
          ignored.push_back("kv_cache_config." + k);
        }
      }
    } else if (key == "tensor_parallel_size" || key == "pipeline_parallel_size") {
      args[key == "tensor_parallel_size" ? "tp_size" : "pp_size"] = it.second;
    } else if (IsEngineArgsKey("trtllm", key)) {
      args[key] = it.second;  // read, or noted as TensorRT-LLM's own
    } else {
      ignored.push_back(key);  // an LLM API option kvplan does not know: named, not refused
    }
  }
}

// Parses the flags of an SGLang, llama.cpp or TensorRT-LLM line from w[i].
DeployConfig ParseOtherEngine(const std::vector<std::string>& w, size_t i,
                              const std::string& engine) {
  DeployConfig d;
  d.engine = engine;
  d.name = "engine-args";
  YAML::Node args(YAML::NodeType::Map);
  std::map<std::string, std::string> given;  // key -> the flag that set it
  std::vector<std::string> ignored;
  for (; i < w.size(); ++i) {
    const std::string& word = w[i];
    if (word.empty() || word[0] != '-' || word == "-") {
      // TensorRT-LLM takes the model as its positional argument.
      if (engine == "trtllm" && d.model.empty()) {
        d.model = word;
        continue;
      }
      Fail("{}: unexpected argument '{}' ({} takes its model with {})", kWhat, Redacted(word),
           engine == "sglang" ? "SGLang" : "llama.cpp", engine == "sglang" ? "--model-path" : "-m");
    }
    const size_t eq = word.find('=');
    const std::string flag = word.substr(0, eq);
    const std::string key = KeyOf(engine, flag);
    if (key.empty()) {
      Fail("{}: '{}' names no flag ({} takes no positional arguments after it)", kWhat, flag,
           engine);
    }
    std::string value;
    bool has_value = eq != std::string::npos;
    if (has_value) value = word.substr(eq + 1);
    const bool fa_switch =
        key == "flash_attn" && !has_value &&
        (i + 1 >= w.size() || (w[i + 1] != "on" && w[i + 1] != "off" && w[i + 1] != "auto"));
    if (!has_value && (IsSwitchKey(engine, key) || fa_switch)) {
      value = "true";  // llama.cpp's -fa alone (older builds) is on
      has_value = true;
    }
    if (!has_value) {
      if (i + 1 >= w.size()) Fail("{}: {} needs a value", kWhat, flag);
      const std::string& next = w[i + 1];
      // A value may be negative (-ngl -1, --seed -1) but is no flag.
      if (next.size() > 1 && next[0] == '-' && !std::isdigit(static_cast<unsigned char>(next[1]))) {
        Fail("{}: {} needs a value (the next word is the flag {})", kWhat, flag, Redacted(next));
      }
      value = w[++i];
    }
    if (key == "model") {
      if (!d.model.empty()) Fail("{}: {}: the model is already '{}'", kWhat, flag, d.model);
      d.model = value;
      continue;
    }
    // TensorRT-LLM's LLM API options file (--config in newer releases).
    if (engine == "trtllm" && (key == "extra_llm_api_options" || key == "config")) {
      ReadTrtllmOptions(value, args, ignored);
      continue;
    }
    if (!IsEngineArgsKey(engine, key)) {
      ignored.push_back(flag);
      continue;
    }
    // llama.cpp's -ngl all (or -1, or 999 and more, as guides write it) puts
    // every layer on the GPU: what kvplan models, so only named.
    if (key == "n_gpu_layers" &&
        (value == "all" || value == "-1" ||
         (value.size() >= 3 && value.find_first_not_of("0123456789") == std::string::npos &&
          std::stoull(value.substr(0, 9)) >= 999))) {
      ignored.push_back(flag + " " + value);
      continue;
    }
    if (given.count(key)) {
      Fail("{}: {} sets the same setting as {}", kWhat, flag, given[key]);
    }
    given[key] = flag;
    args[key] = value;
  }
  if (d.model.empty()) {
    Fail("{}: no model (expected {})", kWhat,
         engine == "sglang"      ? "--model-path MODEL"
         : engine == "llama.cpp" ? "-m MODEL.gguf or -hf REPO"
                                 : "trtllm-serve MODEL");
  }
  ReadEngineArgs(args, kWhat, d);
  if (!ignored.empty()) {
    d.notes.push_back(
        fmt::format("ignored (kvplan does not read them): {}", fmt::join(ignored, ", ")));
  }
  return d;
}

}  // namespace

std::vector<std::string> LaunchWords(std::string_view line) {
  const size_t first = line.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || line[first] != '[') return ShellSplit(line);
  // JSON arrays of strings, one after another: ["python3", "-m", ...] ["--tp", "2"].
  std::vector<std::string> words;
  size_t at = first;
  while (at < line.size()) {
    const size_t end = line.find(']', at);
    if (line[at] != '[' || end == std::string_view::npos) {
      Fail("{}: expected JSON arrays of strings, such as [\"llama-server\", \"-m\", \"m.gguf\"]",
           kWhat);
    }
    nlohmann::json list;
    try {
      list = nlohmann::json::parse(line.substr(at, end - at + 1));
    } catch (const nlohmann::json::exception&) {
      Fail("{}: not a JSON array of strings at column {}", kWhat, at + 1);
    }
    for (const nlohmann::json& item : list) {
      if (!item.is_string()) Fail("{}: every item of the list must be a string", kWhat);
      words.push_back(item.get<std::string>());
    }
    at = line.find_first_not_of(" \t\r\n,", end + 1);
    if (at == std::string_view::npos) break;
  }
  return words;
}

EngineLaunch FindEngineLaunch(const std::vector<std::string>& w, bool bare_is_vllm) {
  EngineLaunch l;
  size_t i = 0;
  // Environment assignments and launchers before the command.
  while (i < w.size()) {
    if (w[i] == "uv" && i + 1 < w.size() && w[i + 1] == "run") {
      i += 2;
    } else if ((w[i].find('=') != std::string::npos && w[i][0] != '-') || w[i] == "env" ||
               w[i] == "sudo" || w[i] == "-E" || w[i] == "nohup" || w[i] == "exec" ||
               w[i] == "time") {
      ++i;
    } else {
      break;
    }
  }
  if (i < w.size() && (Base(w[i]) == "docker" || Base(w[i]) == "podman")) {
    size_t k = i + 1;
    std::string tag;
    const Image* image = nullptr;
    for (; k < w.size(); ++k) {
      image = MatchImage(w[k], tag);
      if (image != nullptr) break;
    }
    if (image == nullptr) {
      Fail(
          "{}: a {} command without an engine image kvplan knows (vllm/vllm-openai, "
          "lmsysorg/sglang, ggml-org/llama.cpp, nvcr.io/nvidia/tensorrt-llm): give the "
          "engine's own command line",
          kWhat, Base(w[i]));
    }
    l.image = w[k];
    l.version = TagVersion(tag);
    i = k + 1;
    if (image->entrypoint) {
      l.engine = image->engine;
      l.at = i;
      return l;
    }
    if (i >= w.size()) Fail("{}: no command after the image {}", kWhat, l.image);
  }
  if (i >= w.size()) Fail("{}: no command (expected the engine's launch line)", kWhat);
  size_t at = i;
  l.engine = EngineOfCommand(w, at);
  if (l.engine.empty()) {
    // A bare vLLM line: `MODEL --flags`.
    if (bare_is_vllm && i == 0 && !w[i].empty() && w[i][0] != '-') {
      l.engine = "vllm";
      l.at = i;
      return l;
    }
    Fail(
        "{}: cannot tell the engine of '{}' (expected vllm serve, python -m "
        "sglang.launch_server, sglang serve, llama-server, llama-cli or trtllm-serve)",
        kWhat, Redacted(w[i]));
  }
  l.at = at;
  return l;
}

DeployConfig ParseEngineCommand(std::string_view line, bool bare_is_vllm) {
  const std::vector<std::string> w = LaunchWords(line);
  if (w.empty()) Fail("{}: empty command line", kWhat);
  const EngineLaunch l = FindEngineLaunch(w, bare_is_vllm);
  DeployConfig d;
  if (l.engine == "vllm") {
    // vLLM's own parser reads the whole line, launcher and image included.
    d = ParseVllmWords(w);
  } else {
    d = ParseOtherEngine(w, l.at, l.engine);
  }
  // vLLM's and SGLang's --revision: the Hub revision the model resolves at.
  for (size_t k = l.at; k < w.size(); ++k) {
    if (w[k] == "--revision" && k + 1 < w.size()) d.model_revision = w[k + 1];
    if (w[k].rfind("--revision=", 0) == 0) d.model_revision = w[k].substr(11);
  }
  if (!l.version.empty()) {
    if (l.engine == "vllm") {
      if (!d.vllm_version) d.vllm_version = ParseVllmVersion(l.version, "--engine-args: image tag");
    } else {
      d.notes.push_back(fmt::format("{} {} (the image tag); kvplan models its current release",
                                    l.engine, l.version));
    }
  }
  return d;
}

}  // namespace kvplan
