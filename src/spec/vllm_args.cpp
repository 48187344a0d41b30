#include "spec/vllm_args.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>

#include "plan/weights.h"
#include "spec/cache_dtype.h"
#include "spec/json_syntax.h"
#include "spec/yaml_reader.h"
#include "util/suggest.h"
#include "util/units.h"

namespace kvplan {
namespace {

enum class Kind { kTokens, kCount, kFraction, kText, kBytes, kFlag, kNegFlag };

struct Flag {
  const char* name;   // long form
  const char* field;  // EngineArgs field ("" = the model)
  Kind kind;
};

// vLLM's flags that size the cache (vllm/engine/arg_utils.py), with their aliases.
const std::vector<Flag>& Flags() {
  static const std::vector<Flag> kFlags = {
      {"--model", "", Kind::kText},
      {"--max-model-len", "max_model_len", Kind::kTokens},
      {"--max-num-seqs", "max_num_seqs", Kind::kCount},
      {"--gpu-memory-utilization", "memory_fraction", Kind::kFraction},
      {"--kv-cache-dtype", "kv_cache_dtype", Kind::kText},
      {"--tensor-parallel-size", "tp", Kind::kCount},
      {"--pipeline-parallel-size", "pp", Kind::kCount},
      {"--data-parallel-size", "dp", Kind::kCount},
      {"--block-size", "block_size", Kind::kCount},
      {"--enable-prefix-caching", "prefix_caching", Kind::kFlag},
      {"--no-enable-prefix-caching", "prefix_caching", Kind::kNegFlag},
      {"--max-num-batched-tokens", "max_num_batched_tokens", Kind::kTokens},
      {"--kv-cache-memory-bytes", "kv_cache_memory_bytes", Kind::kBytes},
      {"--kv-cache-memory", "kv_cache_memory_bytes", Kind::kBytes},
      {"--max-cudagraph-capture-size", "cuda_graph_max_bs", Kind::kCount},
      {"--enforce-eager", "enforce_eager", Kind::kFlag},
      {"--no-enforce-eager", "enforce_eager", Kind::kNegFlag},
      {"--dtype", "weight_dtype", Kind::kText},
      {"--quantization", "quantization", Kind::kText},
  };
  return kFlags;
}

std::string Canonical(const std::string& word) {
  static const std::map<std::string, std::string> kAliases = {
      {"-tp", "--tensor-parallel-size"}, {"-pp", "--pipeline-parallel-size"},
      {"-dp", "--data-parallel-size"},   {"-q", "--quantization"},
  };
  auto it = kAliases.find(word);
  if (it != kAliases.end()) return it->second;
  std::string w = word;
  // vLLM accepts --max_model_len as well as --max-model-len.
  if (w.rfind("--", 0) == 0) {
    for (size_t i = 2; i < w.size(); ++i) {
      if (w[i] == '_') w[i] = '-';
    }
  }
  return w;
}

// True where `name` is in `list`.
template <size_t N>
bool Listed(const char* const (&list)[N], const std::string& name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

// vLLM flags that take no value (store_true, or BooleanOptionalAction given
// bare): the word after one is the next argument, perhaps the model.
bool IsSwitch(const std::string& name) {
  static const char* const kSwitches[] = {
      "--trust-remote-code",          "--skip-tokenizer-init",       "--headless",
      "--async-scheduling",           "--calculate-kv-scales",       "--fully-sharded-loras",
      "--return-tokens-as-token-ids", "--multi-step-stream-outputs", "--use-tqdm-on-load",
      "--ray-workers-use-nsight",     "--data-parallel-hybrid-lb",   "--data-parallel-external-lb",
      "--allow-credentials"};
  if (name.starts_with("--enable-") || name.starts_with("--disable-") ||
      name.starts_with("--no-")) {
    return true;
  }
  return Listed(kSwitches, name);
}

// vLLM flags that take one or more values (nargs='+').
bool TakesList(const std::string& name) {
  static const char* const kLists[] = {
      "--served-model-name", "--lora-modules",    "--prompt-adapters",
      "--allowed-origins",   "--allowed-methods", "--allowed-headers",
      "--middleware",        "--api-key",         "--long-lora-scaling-factors"};
  return Listed(kLists, name);
}

// vLLM flags that change the GPU memory the cache is left with, in ways
// kvplan does not model: named apart from the harmless ones, since the
// figures assume them absent.
bool ChangesMemory(const std::string& name) {
  static const char* const kFlags[] = {"--cpu-offload-gb",
                                       "--speculative-config",
                                       "--enable-lora",
                                       "--max-loras",
                                       "--max-lora-rank",
                                       "--limit-mm-per-prompt",
                                       "--mm-encoder-tp-mode",
                                       "--hf-overrides",
                                       "--rope-scaling",
                                       "--rope-theta",
                                       "--kv-transfer-config",
                                       "--enable-expert-parallel",
                                       "--enable-eplb",
                                       "--num-redundant-experts",
                                       "--decode-context-parallel-size",
                                       "--num-gpu-blocks-override",
                                       "--disable-sliding-window",
                                       "--disable-hybrid-kv-cache-manager"};
  return Listed(kFlags, name);
}

// vLLM flags known to leave the cache's memory alone: no did-you-mean for
// them (--enable-chunked-prefill is not a typo of --enable-prefix-caching).
bool KnownHarmless(const std::string& name) {
  static const char* const kFlags[] = {"--host",
                                       "--port",
                                       "--api-key",
                                       "--served-model-name",
                                       "--chat-template",
                                       "--tokenizer",
                                       "--tokenizer-mode",
                                       "--revision",
                                       "--code-revision",
                                       "--tokenizer-revision",
                                       "--download-dir",
                                       "--load-format",
                                       "--seed",
                                       "--enable-chunked-prefill",
                                       "--no-enable-chunked-prefill",
                                       "--disable-log-requests",
                                       "--disable-log-stats",
                                       "--enable-log-requests",
                                       "--uvicorn-log-level",
                                       "--enable-auto-tool-choice",
                                       "--tool-call-parser",
                                       "--reasoning-parser",
                                       "--distributed-executor-backend",
                                       "--max-logprobs",
                                       "--response-role",
                                       "--ssl-keyfile",
                                       "--ssl-certfile",
                                       "--root-path",
                                       "--generation-config",
                                       "--guided-decoding-backend",
                                       "--structured-outputs-config",
                                       "--scheduling-policy",
                                       "--disable-custom-all-reduce",
                                       "--hf-token",
                                       "--disable-fastapi-docs",
                                       "--enable-prompt-tokens-details",
                                       "--enable-server-load-tracking",
                                       "--api-server-count",
                                       "--lora-modules",
                                       "--override-generation-config",
                                       "--enable-request-id-headers",
                                       "--chat-template-content-format",
                                       "--swap-space",
                                       "--kv-offloading-size",
                                       "--max-cpu-loras"};
  return Listed(kFlags, name);
}

// "NAME=..." for a word with a value in it, the word itself otherwise: what
// an error or note may echo (values are often secrets).
std::string Redacted(const std::string& word) {
  const size_t eq = word.find('=');
  return eq == std::string::npos ? word : word.substr(0, eq) + "=...";
}

// True for the vLLM image: [registry/]vllm/vllm-openai[-rocm][:tag|@digest].
bool IsVllmImage(const std::string& word) {
  constexpr std::string_view kImage = "vllm/vllm-openai";
  // A path (a mount, -v /srv/vllm/vllm-openai:/cache) is no image.
  if (word.empty() || word[0] == '/' || word[0] == '.' || word[0] == '~') return false;
  const size_t at = word.find(kImage);
  if (at == std::string::npos || (at != 0 && word[at - 1] != '/')) return false;
  size_t end = at + kImage.size();
  if (word.compare(end, 5, "-rocm") == 0) end += 5;  // vLLM's ROCm build, same entrypoint
  return end == word.size() || word[end] == ':' || word[end] == '@';
}

// One CUDA-graph batch size: a plain positive integer, as vLLM's int takes
// it; `in_list`: the word came from a list flag, which takes every word up
// to the next flag (so a model written after one lands here).
uint64_t GraphSize(const std::string& item, const std::string& what, bool in_list) {
  if (item.empty() || item.size() > 9 ||
      item.find_first_not_of("0123456789") != std::string::npos) {
    Fail("{}: '{}' is not a batch size{}", what, Redacted(item),
         in_list ? " (a list takes every word up to the next flag)" : "");
  }
  const uint64_t n = std::stoull(item);
  if (n == 0) Fail("{}: a graph batch size must be positive, got 0", what);
  return n;
}

// A list of CUDA-graph batch sizes, as vLLM takes them:
// `--cudagraph-capture-sizes 1 2 4 8`, `-cc.cudagraph_capture_sizes '[1,2,4,8]'`.
std::vector<uint64_t> SizeList(const std::vector<std::string>& words, const std::string& what,
                               bool words_are_flag_values) {
  std::vector<uint64_t> sizes;
  for (const std::string& word : words) {
    std::string item;
    for (char c : word + ",") {
      if (c == '[' || c == ']' || c == ',' || c == ' ') {
        if (!item.empty()) sizes.push_back(GraphSize(item, what, words_are_flag_values));
        item.clear();
      } else {
        item += c;
      }
    }
  }
  if (sizes.empty()) Fail("{}: needs at least one batch size", what);
  return sizes;
}

// What vLLM's command line says of its CUDA graphs: the compilation
// config's max_cudagraph_capture_size and cudagraph_capture_sizes (from
// `--compilation-config`/`-cc` JSON or dotted keys, `--cudagraph-capture-sizes`,
// the older `--cuda-graph-sizes`, `--max-cudagraph-capture-size`), and
// whether graphs are off (`-O0`, cudagraph_mode NONE).
struct GraphSizes {
  std::optional<uint64_t> max_capture_size;
  std::string max_by;  // the flag or key that gave the capture size
  std::optional<std::vector<uint64_t>> listed;
  std::string listed_by;  // the flag or key that gave the list
  // cudagraph_mode as given (true: NONE), and optimization level 0, which
  // turns graphs off only where no mode is given (vLLM fills unset fields
  // from the level).
  std::optional<bool> mode_none;
  bool level0 = false;
  std::string level0_by;
};

bool IsCompilationConfig(const std::string& name) {
  return name == "--compilation-config" || name == "-cc";
}
bool IsOptimizationLevel(const std::string& name) {
  return name == "-O" || name == "--optimization-level";
}
bool IsSizeList(const std::string& name) {
  return name == "--cudagraph-capture-sizes" || name == "--cuda-graph-sizes";
}

void SetList(GraphSizes& g, std::vector<uint64_t> sizes, const std::string& by) {
  if (g.listed && g.listed_by != by) {
    Fail("--vllm-args: {} and {} both list the CUDA-graph sizes (vLLM refuses both)", g.listed_by,
         by);
  }
  g.listed = std::move(sizes);
  g.listed_by = by;
}

// The capture size from `by`: a flag repeated keeps its last value, as
// argparse does; the flag and the compilation config's key both are refused.
void SetMax(GraphSizes& g, uint64_t size, const std::string& by) {
  if (g.max_capture_size && g.max_by != by) {
    Fail("--vllm-args: {} and {} both set the largest CUDA-graph batch: give it once", g.max_by,
         by);
  }
  g.max_capture_size = size;
  g.max_by = by;
}

// `key` (dashes or underscores) of the compilation config set to `value`:
// false where it is not one kvplan reads.
bool SetCompilationKey(std::string key, const std::string& value, GraphSizes& g,
                       const std::string& what) {
  std::replace(key.begin(), key.end(), '-', '_');
  if (key == "max_cudagraph_capture_size") {
    SetMax(g, GraphSize(value, what, false), "the compilation config's max_cudagraph_capture_size");
    return true;
  }
  if (key == "cudagraph_capture_sizes") {
    SetList(g, SizeList({value}, what, false), "cudagraph_capture_sizes");
    return true;
  }
  if (key == "cudagraph_mode") {
    g.mode_none = CudagraphMode(value, what) == "NONE";
    return true;
  }
  return false;
}

// A JSON object given to --compilation-config: its graph keys read, the
// names of the others added to `ignored`.
void ReadCompilationJson(const std::string& value, GraphSizes& g, const std::string& flag,
                         std::vector<std::string>& ignored) {
  const std::string what = "--vllm-args: " + flag;
  // vLLM parses it as JSON (pydantic): what YAML would also accept
  // (a trailing comma, single quotes) stops vLLM at startup.
  CheckJsonSyntax(value, what);
  const YAML::Node root = ParseYaml(value, what);
  if (!root.IsMap()) Fail("{}: expected a JSON object", what);
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    const std::string at = what + " " + key;
    if (kv.second.IsNull()) continue;  // vLLM's default
    if (key == "cudagraph_capture_sizes" && kv.second.IsSequence()) {
      std::vector<std::string> items;
      for (const auto& item : kv.second) items.push_back(item.Scalar());
      SetList(g, SizeList(items, at, false), "cudagraph_capture_sizes");
    } else if (key == "max_cudagraph_capture_size" || key == "cudagraph_capture_sizes" ||
               key == "cudagraph_mode") {
      if (!kv.second.IsScalar()) {
        Fail("{}: expected {}", at, key == "cudagraph_mode" ? "a mode such as NONE" : "a number");
      }
      SetCompilationKey(key, kv.second.Scalar(), g, at);
    } else {
      ignored.push_back(flag + " " + Redacted(key));
    }
  }
}

}  // namespace

std::string CudagraphMode(std::string_view mode, std::string_view what) {
  std::string upper(mode);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const char* m : {"NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"}) {
    if (upper == m) return upper;
  }
  Fail("{}: expected NONE, PIECEWISE, FULL, FULL_DECODE_ONLY or FULL_AND_PIECEWISE, got '{}'", what,
       mode);
}

std::vector<std::string> ShellSplit(std::string_view line) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '\\') {
      if (i + 1 < line.size() && line[i + 1] == '\n') {
        ++i;  // line continuation
        continue;
      }
      if (i + 1 < line.size()) cur += line[++i];
      in_word = true;
    } else if (c == '\'') {
      size_t end = line.find('\'', i + 1);
      if (end == std::string_view::npos) {
        Fail("--vllm-args: unterminated ' quote starting at column {}", i + 1);
      }
      cur += line.substr(i + 1, end - i - 1);
      i = end;
      in_word = true;
    } else if (c == '"') {
      size_t start = i;
      bool closed = false;
      for (++i; i < line.size(); ++i) {
        if (line[i] == '"') {
          closed = true;
          break;
        }
        if (line[i] == '\\' && i + 1 < line.size() &&
            std::string_view("\"\\$`\n").find(line[i + 1]) != std::string_view::npos) {
          if (line[i + 1] != '\n') cur += line[i + 1];
          ++i;
          continue;
        }
        cur += line[i];
      }
      if (!closed) Fail("--vllm-args: unterminated \" quote starting at column {}", start + 1);
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(cur);
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(cur);
  return words;
}

DeployConfig ParseVllmCommand(std::string_view line) {
  std::vector<std::string> w = ShellSplit(line);
  DeployConfig d;
  d.engine = "vllm";
  d.name = "vllm-args";
  size_t i = 0;
  // Skip the launcher: env assignments, `vllm serve`, `python -m module`.
  // One assignment changes the budget: whether vLLM subtracts its CUDA-graph
  // estimate (envs.py reads it as bool(int(value))).
  // Another lets max_model_len pass the model's own limit (envs.py: "1" or
  // "true", any case). The rest are named in the notes as ignored.
  std::vector<std::string> ignored, unmodelled;
  const auto env = [&](const std::string& assignment) {
    const size_t eq = assignment.find('=');
    const std::string name = assignment.substr(0, eq);
    // The name only when ignored: values are often secrets (HF_TOKEN) and
    // land in CI logs. `docker -e NAME` passes the host's value, unknown here.
    if (eq == std::string::npos || !ApplyVllmEnv(name, assignment.substr(eq + 1), name, d)) {
      ignored.push_back(Redacted(assignment));
    }
  };
  // Launchers before the command: `env [NAME=VALUE...]`, `sudo`, `nohup`,
  // `exec`, `time`, `uv run`; environment assignments anywhere among them.
  for (; i < w.size(); ++i) {
    if (w[i].find('=') != std::string::npos && w[i][0] != '-') {
      env(w[i]);
    } else if (w[i] == "uv" && i + 1 < w.size() && w[i + 1] == "run") {
      ++i;
    } else if (w[i] != "env" && w[i] != "sudo" && w[i] != "-E" && w[i] != "nohup" &&
               w[i] != "exec" && w[i] != "time") {
      break;
    }
  }
  // `docker run [docker options] vllm/vllm-openai[:tag] ARGS`: the image's
  // entrypoint is the API server, so ARGS are vLLM's; docker's -e/--env
  // assignments are the server's environment. Docker's other options are
  // not vLLM's and are skipped.
  if (i < w.size() && (w[i] == "docker" || w[i] == "podman" || w[i].ends_with("/docker"))) {
    size_t image = i + 1;
    while (image < w.size() && !IsVllmImage(w[image])) ++image;
    if (image == w.size()) {
      Fail(
          "--vllm-args: a {} command without the vllm/vllm-openai image: give the arguments "
          "after the image, or `vllm serve MODEL ...`",
          w[i]);
    }
    for (size_t k = i + 1; k < image; ++k) {
      if ((w[k] == "-e" || w[k] == "--env") && k + 1 < image) {
        env(w[++k]);
      } else if (w[k].starts_with("--env=") || (w[k].starts_with("-e") && w[k].size() > 2)) {
        env(w[k].substr(w[k][1] == 'e' ? 2 : 6));
      }
    }
    i = image + 1;
  }
  if (i < w.size() && (w[i] == "vllm" || w[i].ends_with("/vllm"))) {
    ++i;
    if (i < w.size() && w[i] == "serve") ++i;
  } else if (i < w.size() && (w[i].rfind("python", 0) == 0 || w[i].find("/python") != std::string::npos)) {
    ++i;
    if (i + 1 < w.size() && w[i] == "-m") i += 2;
  }
  std::vector<std::string> known;
  for (const Flag& f : Flags()) known.emplace_back(f.name);
  std::string model_flag;  // --model; d.model holds the positional one
  GraphSizes graphs;
  auto set_text = [&](const Flag& f, const std::string& v) {
    if (std::string(f.field).empty()) {
      model_flag = v;
    } else if (std::string(f.field) == "kv_cache_dtype") {
      d.args.kv_cache_dtype = v;
    } else if (std::string(f.field) == "quantization") {
      d.args.quantization = v;
    } else {
      d.args.weight_dtype = v;
    }
  };
  for (; i < w.size(); ++i) {
    const std::string& word = w[i];
    // argparse reads every word after "--" as positional: a second model,
    // which vllm serve refuses.
    if (word == "--") {
      // One word after it is the model when none was given yet.
      if (d.model.empty() && i + 2 == w.size()) {
        d.model = w[++i];
        continue;
      }
      if (i + 1 < w.size()) {
        Fail(
            "--vllm-args: '--' ends the options: vllm serve would read '{}' as a positional "
            "argument and refuse it",
            Redacted(w[i + 1]));
      }
      continue;
    }
    if (word.empty() || word[0] != '-' || word == "-") {
      if (d.model.empty()) {
        d.model = word;
      } else {
        Fail("--vllm-args: unexpected argument '{}' (the model is already '{}')", Redacted(word),
             d.model);
      }
      continue;
    }
    std::string name = word, value;
    bool has_value = false;
    size_t eq = word.find('=');
    if (eq != std::string::npos) {
      name = word.substr(0, eq);
      value = word.substr(eq + 1);
      has_value = true;
    }
    name = Canonical(name);
    // -O3: the optimization level written onto its short flag.
    if (!has_value && name.size() > 2 && name.starts_with("-O") && name[2] != '.') {
      has_value = true;
      value = name.substr(2);
      name = "-O";
    }
    // The CUDA graphs: vLLM captures them up to the largest batch size, and
    // from 0.21 takes their memory out of the cache's budget.
    const size_t dot = name.find('.');
    const std::string base = name.substr(0, dot);
    if (IsSizeList(name) || IsCompilationConfig(base) || IsOptimizationLevel(base)) {
      const std::string shown = name == "-O" ? name : word.substr(0, eq);
      std::vector<std::string> values;
      if (has_value) values.push_back(value);
      while (i + 1 < w.size() && !w[i + 1].starts_with("-") &&
             (values.empty() || IsSizeList(name))) {
        values.push_back(w[++i]);
      }
      if (values.empty()) Fail("--vllm-args: {} needs a value", shown);
      const std::string what = "--vllm-args: " + shown;
      const std::string& v = values.front();
      if (IsSizeList(name)) {
        SetList(graphs, SizeList(values, what, true), name);
      } else if (dot != std::string::npos) {
        if (!SetCompilationKey(name.substr(dot + 1), v, graphs, what)) {
          ignored.push_back(shown + " ...");
        }
      } else if (v.starts_with("{")) {
        // A JSON object (older vLLM took one after -O too).
        ReadCompilationJson(v, graphs, shown, ignored);
      } else if (v.size() == 1 && v[0] >= '0' && v[0] <= '3') {
        // An optimization level; from vLLM 0.12 level 0 captures no graphs.
        if (v == "0") {
          graphs.level0 = true;
          graphs.level0_by = shown + " 0";
        } else {
          ignored.push_back(shown + " ...");
        }
      } else {
        Fail("{}: '{}' is neither an optimization level (0-3) nor a JSON object", what,
             Redacted(v));
      }
      continue;
    }
    // vLLM reads more arguments from this file, which kvplan does not: a
    // gate would check other settings than the server runs with.
    if (name == "--config") {
      Fail(
          "--vllm-args: --config FILE is not read: give its settings as flags, or write them in a "
          "deploy config (kvplan check FILE)");
    }
    const Flag* flag = nullptr;
    for (const Flag& f : Flags()) {
      if (name == f.name) flag = &f;
    }
    if (flag == nullptr) {
      // Not a cache flag: skip it and the value that follows it, if any.
      // Named without its value: --api-key and --hf-token values are
      // secrets, and the notes land in CI logs.
      std::string note = word.substr(0, eq);
      if (!has_value && !IsSwitch(name)) {
        // Its value (all of them for a list flag), if any follows.
        // A value may be negative (--seed -1).
        const auto value_next = [&] {
          return i + 1 < w.size() &&
                 (w[i + 1].empty() || w[i + 1][0] != '-' ||
                  (w[i + 1].size() > 1 && std::isdigit(static_cast<unsigned char>(w[i + 1][1]))));
        };
        while (value_next()) {
          ++i;
          has_value = true;
          if (!TakesList(name)) break;
        }
      }
      if (has_value) note += " ...";
      if (ChangesMemory(name)) {
        unmodelled.push_back(note);
      } else {
        ignored.push_back(note + (KnownHarmless(name) ? "" : DidYouMean(name, known)));
      }
      continue;
    }
    if (flag->kind == Kind::kFlag || flag->kind == Kind::kNegFlag) {
      bool v = flag->kind == Kind::kFlag;
      if (has_value) {
        if (value == "true" || value == "True" || value == "1") {
        } else if (value == "false" || value == "False" || value == "0") {
          v = !v;
        } else {
          Fail("--vllm-args: {}: expected true or false, got '{}'", flag->name, value);
        }
      }
      if (std::string(flag->field) == "prefix_caching") d.args.prefix_caching = v;
      else d.args.enforce_eager = v;
      d.args.names[flag->field] = flag->name;
      continue;
    }
    if (!has_value) {
      if (i + 1 >= w.size()) Fail("--vllm-args: {} needs a value", word);
      // The next word is another flag: this one was given no value.
      if (w[i + 1].starts_with("--") || (w[i + 1].size() > 1 && w[i + 1][0] == '-' &&
                                         std::isalpha(static_cast<unsigned char>(w[i + 1][1])))) {
        Fail("--vllm-args: {} needs a value (the next word is the flag {})", word,
             Redacted(w[i + 1]));
      }
      value = w[++i];
    }
    std::string what = std::string("--vllm-args: ") + flag->name;
    std::string field = flag->field;
    if (!field.empty()) d.args.names[field] = flag->name;
    if (field == "kv_cache_dtype" && value != "auto") {
      // Known but unsupported by vLLM (q4_0): a startup FAIL; unknown: a typo.
      try {
        FindCacheDtype(value);
      } catch (const Error& e) {
        Fail("{}: {}", what, e.what());
      }
    }
    if ((field == "weight_dtype" || field == "quantization") && value != "auto") {
      try {
        FindWeightFormat(value, 0);
      } catch (const Error& e) {
        Fail("{}: {}", what, e.what());
      }
    }
    switch (flag->kind) {
      case Kind::kText: set_text(*flag, value); break;
      case Kind::kTokens: {
        uint64_t n = ParseTokens(value, what);
        if (n == 0) Fail("{}: must be positive, got 0", what);
        if (field == "max_model_len") d.args.max_model_len = n;
        else d.args.max_num_batched_tokens = n;
        break;
      }
      case Kind::kCount: {
        if (field == "cuda_graph_max_bs") {  // a plain integer, as vLLM's int takes it
          SetMax(graphs, GraphSize(value, what, false), name);
          break;
        }
        uint64_t n = ParseTokens(value, what);
        if (n == 0) Fail("{}: must be positive, got 0", what);
        if (field == "max_num_seqs") d.args.max_num_seqs = n;
        else if (field == "tp") d.args.tp = n;
        else if (field == "pp") d.args.pp = n;
        else if (field == "dp")
          d.args.dp = n;
        else d.args.block_size = n;
        break;
      }
      case Kind::kBytes: {
        uint64_t n = ParseBytes(value, what);
        if (n == 0) Fail("{}: must be positive, got 0", what);
        d.args.kv_cache_memory_bytes = n;
        break;
      }
      case Kind::kFraction: {
        // Plain decimals only: strtod also reads hex floats (0x0.8 = 0.5),
        // "inf" and "nan", which no one means here.
        char* end = nullptr;
        const bool decimal = value.find_first_not_of("0123456789.eE+-") == std::string::npos;
        double v = decimal ? std::strtod(value.c_str(), &end) : 0;
        if (value.empty() || !decimal || *end != '\0' || !(v > 0 && v <= 1)) {
          Fail("{}: expected a fraction in (0, 1], got '{}'", what, value);
        }
        d.args.memory_fraction = v;
        break;
      }
      default: break;
    }
  }
  // Graphs off: cudagraph_mode NONE, or level 0 where no mode is given.
  // Otherwise the capture size and the list go on as given: whether they
  // agree depends on max_num_batched_tokens (ResolveEngineConfig).
  if (graphs.mode_none.value_or(graphs.level0)) {
    d.args.enforce_eager = true;
    d.args.names["enforce_eager"] = graphs.mode_none ? "cudagraph_mode NONE" : graphs.level0_by;
  } else {
    if (graphs.max_capture_size) d.args.cuda_graph_max_bs = graphs.max_capture_size;
    if (graphs.listed) d.args.cuda_graph_sizes = *graphs.listed;
    if (graphs.max_capture_size || graphs.listed) {
      d.args.names["cuda_graph_max_bs"] =
          graphs.max_capture_size ? "max_cudagraph_capture_size" : graphs.listed_by;
    }
  }
  // As `vllm serve` does: the positional model wins over --model.
  if (d.model.empty()) d.model = model_flag;
  if (d.model.empty()) Fail("--vllm-args: no model (expected `vllm serve MODEL ...` or --model)");
  if (!ignored.empty()) {
    d.notes.push_back(
        fmt::format("ignored (no effect on the KV cache): {}", fmt::join(ignored, ", ")));
  }
  if (!unmodelled.empty()) {
    d.notes.push_back(fmt::format(
        "not modelled (they change the memory left for the KV cache; the figures assume them "
        "absent): {}",
        fmt::join(unmodelled, ", ")));
  }
  return d;
}

}  // namespace kvplan
