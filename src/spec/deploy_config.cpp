#include "spec/deploy_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>

#include "plan/engines.h"
#include "plan/weights.h"
#include "spec/cache_dtype.h"
#include "spec/json_syntax.h"
#include "spec/vllm_args.h"
#include "spec/yaml_reader.h"
#include "util/suggest.h"
#include "util/units.h"

namespace kvplan {
namespace {

enum class ArgType { kTokens, kCount, kFraction, kBool, kNotBool, kText, kBytes };

struct ArgKey {
  const char* key;    // the engine's own name
  const char* field;  // EngineArgs field
  ArgType type;
};

// Each engine's flags, under the names its own config files and CLI use
// (dashes become underscores, as vLLM's and SGLang's YAML configs write them).
const std::vector<ArgKey>& KeysFor(const std::string& engine) {
  static const std::vector<ArgKey> kVllm = {
      {"max_model_len", "max_model_len", ArgType::kTokens},
      {"max_num_seqs", "max_num_seqs", ArgType::kCount},
      {"gpu_memory_utilization", "memory_fraction", ArgType::kFraction},
      {"kv_cache_dtype", "kv_cache_dtype", ArgType::kText},
      {"tensor_parallel_size", "tp", ArgType::kCount},
      {"pipeline_parallel_size", "pp", ArgType::kCount},
      {"data_parallel_size", "dp", ArgType::kCount},
      {"block_size", "block_size", ArgType::kCount},
      {"enable_prefix_caching", "prefix_caching", ArgType::kBool},
      {"max_num_batched_tokens", "max_num_batched_tokens", ArgType::kTokens},
      {"kv_cache_memory_bytes", "kv_cache_memory_bytes", ArgType::kBytes},
      {"enforce_eager", "enforce_eager", ArgType::kBool},
      {"max_cudagraph_capture_size", "cuda_graph_max_bs", ArgType::kCount},
      {"dtype", "weight_dtype", ArgType::kText},
      {"quantization", "quantization", ArgType::kText},
  };
  static const std::vector<ArgKey> kSglang = {
      {"context_length", "max_model_len", ArgType::kTokens},
      {"max_running_requests", "max_num_seqs", ArgType::kCount},
      {"mem_fraction_static", "memory_fraction", ArgType::kFraction},
      {"kv_cache_dtype", "kv_cache_dtype", ArgType::kText},
      {"tp_size", "tp", ArgType::kCount},
      {"pp_size", "pp", ArgType::kCount},
      {"dp_size", "dp", ArgType::kCount},
      {"page_size", "block_size", ArgType::kCount},
      {"disable_radix_cache", "prefix_caching", ArgType::kNotBool},
      {"chunked_prefill_size", "max_num_batched_tokens", ArgType::kTokens},
      {"max_total_tokens", "max_total_tokens", ArgType::kTokens},
      {"disable_cuda_graph", "enforce_eager", ArgType::kBool},
      {"cuda_graph_max_bs", "cuda_graph_max_bs", ArgType::kCount},
      {"dtype", "weight_dtype", ArgType::kText},
      {"quantization", "quantization", ArgType::kText},
  };
  static const std::vector<ArgKey> kTrtllm = {
      {"max_seq_len", "max_model_len", ArgType::kTokens},
      {"max_batch_size", "max_num_seqs", ArgType::kCount},
      {"free_gpu_memory_fraction", "memory_fraction", ArgType::kFraction},
      {"kv_cache_dtype", "kv_cache_dtype", ArgType::kText},
      {"tp_size", "tp", ArgType::kCount},
      {"pp_size", "pp", ArgType::kCount},
      {"tokens_per_block", "block_size", ArgType::kCount},
      {"enable_block_reuse", "prefix_caching", ArgType::kBool},
      {"max_num_tokens", "max_num_batched_tokens", ArgType::kTokens},
      {"max_gpu_total_bytes", "max_gpu_total_bytes", ArgType::kBytes},
      {"dtype", "weight_dtype", ArgType::kText},
  };
  static const std::vector<ArgKey> kLlamaCpp = {
      {"ctx_size", "n_ctx", ArgType::kTokens},
      {"parallel", "max_num_seqs", ArgType::kCount},
      {"cache_type_k", "kv_cache_dtype", ArgType::kText},
      {"cache_type_v", "cache_type_v", ArgType::kText},
      {"ubatch_size", "max_num_batched_tokens", ArgType::kTokens},
      {"swa_full", "swa_full", ArgType::kBool},
  };
  if (engine == "sglang") return kSglang;
  if (engine == "trtllm") return kTrtllm;
  if (engine == "llama.cpp") return kLlamaCpp;
  return kVllm;
}

bool LooksLikeFile(const std::string& s) {
  return s.find('/') != std::string::npos || s.ends_with(".yaml") || s.ends_with(".yml") ||
         s.ends_with(".json");
}

// A path written in a config is relative to the config's folder; a catalog
// name or an HF repo id that names no file is kept as written.
std::string Resolve(const std::string& value, const std::string& file) {
  namespace fs = std::filesystem;
  if (!LooksLikeFile(value) || fs::path(value).is_absolute()) return value;
  fs::path dir = fs::path(file).parent_path();
  fs::path candidate = dir / value;
  std::error_code ec;
  if (fs::exists(candidate, ec)) return candidate.lexically_normal().string();
  if (value.ends_with(".yaml") || value.ends_with(".yml") || value.ends_with(".json")) {
    return candidate.lexically_normal().string();  // let the loader say it is missing
  }
  return value;
}

uint64_t Tokens(MapReader& r, const std::string& key, bool allow_zero) {
  std::optional<std::string> v = r.OptStr(key);
  SourcePos at = r.Pos(key);
  if (!v && r.Written(key))
    Fail("{}{}: no value (the field is required)", r.Pos(key).Prefix(), key);
  if (!v) Fail("{}{}: missing required field '{}'", r.Pos().Prefix(), key, key);
  std::string what = at.Prefix() + key;
  uint64_t n = ParseTokens(*v, what);
  if (n == 0 && !allow_zero) Fail("{}{}: must be positive, got 0", at.Prefix(), key);
  return n;
}

// A list of CUDA-graph batch sizes at `node` (`field` in messages): positive
// integers, at least one. `json`: the node comes from a JSON string in the
// file, so errors point at `at` (the string), not inside it.
std::vector<uint64_t> GraphSizeList(const YAML::Node& node, const SourcePos& at,
                                    const std::string& field, bool json) {
  if (!node.IsSequence() || node.size() == 0) {
    Fail("{}{}: expected a list of batch sizes, e.g. [1, 2, 4, 8]", at.Prefix(), field);
  }
  std::vector<uint64_t> sizes;
  for (const YAML::Node& item : node) {
    sizes.push_back(ScalarU64At(item, json ? at : PosOf(item, at.file), field));
  }
  return sizes;
}

// A list of vLLM CUDA-graph sizes from `key` into `a`; a second list (the
// other name, or the compilation config's) is refused, as vLLM refuses it.
void SetGraphList(EngineArgs& a, const YAML::Node& node, const SourcePos& at,
                  const std::string& key, bool json) {
  if (a.names.count("cuda_graph_sizes")) {
    Fail("{}{}: sets the same setting as '{}' (vLLM refuses both)", at.Prefix(), key,
         a.names["cuda_graph_sizes"]);
  }
  a.cuda_graph_sizes = GraphSizeList(node, at, key, json);
  a.names["cuda_graph_sizes"] = key;
  a.pos["cuda_graph_sizes"] = at;
}

// vLLM's `compilation_config` (present in `r`), a map or the JSON string
// `vllm serve -cc` takes: its max_cudagraph_capture_size,
// cudagraph_capture_sizes and cudagraph_mode (NONE: no graphs) are read; its
// other keys (backend, passes, ...) change no memory kvplan models and are
// left to vLLM to check. Returns whether a cudagraph_mode was given.
bool ReadCompilationConfig(MapReader& r, EngineArgs& a) {
  const SourcePos at = r.Pos("compilation_config");
  YAML::Node cc = r.Child("compilation_config");
  const bool json = cc.IsScalar();  // positions inside it are the string's: use the key's
  if (json) {
    // vLLM's -cc takes JSON; YAML's flow style reads it, so a string that
    // is not JSON's `{...}` is refused here rather than read as YAML.
    const std::string text = cc.Scalar();
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || text[first] != '{') {
      Fail(
          "{}compilation_config: expected a map, or vLLM's JSON object as a string "
          "('{{\"cudagraph_mode\": \"NONE\"}}')",
          at.Prefix());
    }
    CheckJsonSyntax(text, at.Prefix() + "compilation_config");  // as vLLM parses it
    cc = ParseYaml(text, at.Prefix() + "compilation_config");
  }
  if (!cc.IsMap()) {
    Fail("{}compilation_config: expected a map (or vLLM's JSON string) of compilation settings",
         at.Prefix());
  }
  bool mode_given = false;
  for (const auto& kv : cc) {
    const std::string key = kv.first.Scalar();
    const std::string field = "compilation_config." + key;
    const SourcePos p = json ? at : PosOf(kv.second, at.file);
    if (kv.second.IsNull()) continue;  // vLLM's default
    if (key == "cudagraph_capture_sizes") {
      SetGraphList(a, kv.second, p, field, json);
    } else if (key == "max_cudagraph_capture_size") {
      if (a.names.count("cuda_graph_max_bs")) {
        Fail("{}{}: sets the same setting as '{}'", p.Prefix(), field,
             a.names["cuda_graph_max_bs"]);
      }
      a.cuda_graph_max_bs = ScalarU64At(kv.second, p, field);
      a.names["cuda_graph_max_bs"] = field;
      a.pos["cuda_graph_max_bs"] = p;
    } else if (key == "cudagraph_mode") {
      if (!kv.second.IsScalar()) Fail("{}{}: expected a mode such as NONE", p.Prefix(), field);
      mode_given = true;
      if (CudagraphMode(kv.second.Scalar(), p.Prefix() + field) == "NONE") {
        a.enforce_eager = true;
        a.names["enforce_eager"] = field + " NONE";
        a.pos["enforce_eager"] = p;
      }
    }
  }
  return mode_given;
}

// vLLM's CUDA graphs beyond max_cudagraph_capture_size (read with the other
// keys): the batch sizes to capture, `cudagraph_capture_sizes` or, as older
// vLLM named it, `cuda_graph_sizes`; `compilation_config`; and
// optimization_level, whose 0 turns graphs off.
constexpr const char* kVllmGraphKeys[] = {"cudagraph_capture_sizes", "cuda_graph_sizes",
                                          "optimization_level", "compilation_config"};

void ReadVllmGraphs(MapReader& r, EngineArgs& a) {
  for (const char* key : {"cudagraph_capture_sizes", "cuda_graph_sizes"}) {
    if (r.Has(key)) {
      SetGraphList(a, r.Child(key), r.Pos(key), key, false);
    } else {
      r.OptStr(key);  // mark as known
    }
  }
  // optimization_level 0 (vllm serve -O0) captures no graphs where no
  // cudagraph_mode is given (vLLM fills unset fields from the level).
  std::optional<SourcePos> level0;
  if (r.Has("optimization_level")) {
    const uint64_t level = r.U64("optimization_level", /*allow_zero=*/true);
    if (level > 3) {
      Fail("{}optimization_level: expected 0-3, got {}", r.Pos("optimization_level").Prefix(),
           level);
    }
    if (level == 0) level0 = r.Pos("optimization_level");
  } else {
    r.OptStr("optimization_level");
  }
  bool mode_given = false;
  if (r.Has("compilation_config")) {
    mode_given = ReadCompilationConfig(r, a);
  } else {
    r.OptStr("compilation_config");
  }
  if (level0 && !mode_given) {
    a.enforce_eager = true;
    a.names["enforce_eager"] = "optimization_level 0";
    a.pos["enforce_eager"] = *level0;
  }
}

void ReadArgs(MapReader& r, const std::string& engine, EngineArgs& a) {
  for (const ArgKey& k : KeysFor(engine)) {
    std::optional<uint64_t>* u = nullptr;
    std::string f = k.field;
    if (!r.Has(k.key)) {
      r.OptStr(k.key);  // mark as known
      continue;
    }
    if (a.names.count(f)) {
      Fail("{}{}: sets the same setting as '{}'", r.Pos(k.key).Prefix(), k.key, a.names[f]);
    }
    a.names[f] = k.key;
    a.pos[f] = r.Pos(k.key);
    if (f == "max_model_len") u = &a.max_model_len;
    else if (f == "max_num_seqs") u = &a.max_num_seqs;
    else if (f == "tp") u = &a.tp;
    else if (f == "pp") u = &a.pp;
    else if (f == "dp") u = &a.dp;
    else if (f == "block_size") u = &a.block_size;
    else if (f == "max_num_batched_tokens") u = &a.max_num_batched_tokens;
    else if (f == "max_total_tokens") u = &a.max_total_tokens;
    else if (f == "n_ctx") u = &a.n_ctx;
    else if (f == "kv_cache_memory_bytes") u = &a.kv_cache_memory_bytes;
    else if (f == "max_gpu_total_bytes") u = &a.max_gpu_total_bytes;
    else if (f == "cuda_graph_max_bs")
      u = &a.cuda_graph_max_bs;
    switch (k.type) {
      // llama.cpp's ctx_size 0 is the model's own context; elsewhere 0 is no value.
      case ArgType::kTokens:
        *u = Tokens(r, k.key, f == "n_ctx");
        break;
      case ArgType::kCount: *u = r.U64(k.key); break;
      case ArgType::kBytes: {
        std::string what = r.Pos(k.key).Prefix() + k.key;
        *u = ParseBytes(r.Str(k.key), what);
        if (**u == 0) Fail("{}{}: must be positive, got 0", r.Pos(k.key).Prefix(), k.key);
        break;
      }
      case ArgType::kFraction: {
        double v = r.Num(k.key);
        if (v > 1) {
          Fail("{}{}: {} is a fraction of memory and must be in (0, 1]", r.Pos(k.key).Prefix(),
               k.key, v);
        }
        a.memory_fraction = v;
        break;
      }
      case ArgType::kBool:
      case ArgType::kNotBool: {
        bool v = r.Bool(k.key);
        if (k.type == ArgType::kNotBool) v = !v;
        if (f == "prefix_caching") a.prefix_caching = v;
        else if (f == "enforce_eager") a.enforce_eager = v;
        else if (f == "swa_full") a.swa_full = v;
        break;
      }
      case ArgType::kText: {
        std::string v = r.Str(k.key);
        if ((f == "kv_cache_dtype" || f == "cache_type_v") && v != "auto") {
          // A name kvplan knows but the engine lacks (q4_0 on vLLM) is a startup
          // FAIL in `check`; a name that is no cache dtype at all is a typo.
          try {
            FindCacheDtype(v);
          } catch (const Error& e) {
            Fail("{}{}: {}", r.Pos(k.key).Prefix(), k.key, e.what());
          }
        }
        if ((f == "weight_dtype" || f == "quantization") && v != "auto") {
          try {
            FindWeightFormat(v, 0);  // a typo is bad input, not a startup FAIL
          } catch (const Error& e) {
            Fail("{}{}: {}", r.Pos(k.key).Prefix(), k.key, e.what());
          }
        }
        if (f == "kv_cache_dtype") a.kv_cache_dtype = v;
        else if (f == "cache_type_v") a.pos["cache_type_v_value:" + v] = r.Pos(k.key);
        else if (f == "quantization") a.quantization = v;
        else a.weight_dtype = v;
        break;
      }
    }
  }
  if (engine == "vllm") ReadVllmGraphs(r, a);
  r.Finish();
  if (engine == "llama.cpp" && (a.kv_cache_dtype || a.pos.count("cache_type_v"))) {
    // kvplan models one cache type for K and V: llama.cpp keeps the other at
    // f16 when only one is given, so both must be stated, and equal.
    std::string v;
    for (const auto& [key, p] : a.pos) {
      if (key.rfind("cache_type_v_value:", 0) == 0) v = key.substr(19);
    }
    std::string k = a.kv_cache_dtype.value_or("");
    if (k != v) {
      SourcePos at = a.pos.count("cache_type_v") ? a.pos["cache_type_v"] : a.pos["kv_cache_dtype"];
      Fail("{}{}: cache_type_k '{}' and cache_type_v '{}' differ (llama.cpp's default is f16); "
           "kvplan models one cache type for K and V, so give both, equal",
           at.Prefix(), k.empty() ? "cache_type_k" : "cache_type_v", k.empty() ? "f16" : k,
           v.empty() ? "f16" : v);
    }
    for (auto it = a.pos.begin(); it != a.pos.end();) {
      it = it->first.rfind("cache_type_v_value:", 0) == 0 ? a.pos.erase(it) : std::next(it);
    }
  }
}

void ReadWorkload(MapReader& w, DeployConfig& d) {
  Workload wl;
  wl.pos = w.Pos();
  YAML::Node list = w.Child("requests");
  SourcePos list_pos = w.Pos("requests");
  if (!list.IsSequence() || list.size() == 0) {
    Fail("{}requests: expected a list of {{tokens, share}}", list_pos.Prefix());
  }
  double total = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    MapReader c(list[i], d.file, fmt::format("workload.requests[{}]", i), {"tokens", "share"});
    RequestClass rc;
    rc.tokens = Tokens(c, "tokens", false);
    rc.share = c.Num("share");
    c.Finish();
    total += rc.share;
    wl.requests.push_back(rc);
  }
  // Thirds written as 0.333 add up to 0.999: shares within a thousandth of
  // 1 are taken, as fractions of their sum.
  if (std::fabs(total - 1.0) > 1.001e-3) {
    Fail("{}requests: shares add up to {:g}, not 1", list_pos.Prefix(), total);
  }
  for (RequestClass& rc : wl.requests) rc.share /= total;
  if (w.Has("shared_prefix")) {
    wl.shared_prefix_tokens = Tokens(w, "shared_prefix", true);
    // Every request starts with the prefix and adds tokens of its own (at
    // least what it generates), so the prefix is shorter than any request.
    uint64_t shortest = UINT64_MAX;
    for (const RequestClass& rc : wl.requests) shortest = std::min(shortest, rc.tokens);
    if (wl.shared_prefix_tokens >= shortest) {
      Fail("{}shared_prefix: {} tokens is not shorter than the shortest request ({} tokens); "
           "every request starts with the prefix and adds its own tokens",
           w.Pos("shared_prefix").Prefix(), WithCommas(wl.shared_prefix_tokens),
           WithCommas(shortest));
    }
  } else {
    w.OptStr("shared_prefix");
  }
  w.Finish();
  d.workload = wl;
}

void ReadRequirements(MapReader& r, DeployConfig& d) {
  Requirements& q = d.requirements;
  for (const char* k : {"min_concurrency", "min_tokens_in_cache", "min_headroom_percent",
                        "min_workload_concurrency", "latency"}) {
    // `min_concurrency:` with no value would be no requirement at all: a
    // gate that passes what it was asked to check.
    if (r.Written(k) && !r.Has(k)) {
      Fail("{}{}: no value (a requirement left empty would not be checked)", r.Pos(k).Prefix(), k);
    }
    if (r.Has(k)) q.pos[k] = r.Pos(k);
  }
  q.min_concurrency = r.OptU64("min_concurrency");
  if (r.Has("min_tokens_in_cache")) q.min_tokens_in_cache = Tokens(r, "min_tokens_in_cache", false);
  else r.OptStr("min_tokens_in_cache");
  q.min_headroom_percent = r.OptNum("min_headroom_percent", true);
  if (q.min_headroom_percent && *q.min_headroom_percent >= 100) {
    Fail("{}min_headroom_percent: {} must be below 100", r.Pos("min_headroom_percent").Prefix(),
         *q.min_headroom_percent);
  }
  q.min_workload_concurrency = r.OptU64("min_workload_concurrency");
  if (r.Has("latency")) {
    MapReader l(r.Child("latency"), d.file, "requirements.latency",
                {"batch", "context", "max_tpot_ms", "max_ttft_ms"});
    LatencyRequirement lr;
    lr.pos = l.Pos();
    lr.batch = l.U64("batch");
    lr.context_tokens = Tokens(l, "context", false);
    lr.max_tpot_ms = l.OptNum("max_tpot_ms");
    lr.max_ttft_ms = l.OptNum("max_ttft_ms");
    lr.tpot_pos = l.Pos("max_tpot_ms");
    lr.ttft_pos = l.Pos("max_ttft_ms");
    l.Finish();
    if (!lr.max_tpot_ms && !lr.max_ttft_ms) {
      Fail("{}requirements.latency: give max_tpot_ms, max_ttft_ms or both", lr.pos.Prefix());
    }
    q.latency = lr;
  } else {
    r.OptStr("latency");
  }
  r.Finish();
  if (q.min_headroom_percent && !q.min_concurrency) {
    Fail("{}min_headroom_percent: needs min_concurrency (the load the headroom is measured at)",
         q.pos["min_headroom_percent"].Prefix());
  }
  if (q.min_workload_concurrency && !d.workload) {
    Fail("{}min_workload_concurrency: needs a workload section",
         q.pos["min_workload_concurrency"].Prefix());
  }
  if (q.pos.empty()) {
    Fail("{}requirements: states no requirement (known: min_concurrency, min_tokens_in_cache, "
         "min_headroom_percent, min_workload_concurrency, latency)",
         r.Pos().Prefix());
  }
}

}  // namespace

std::string EngineArgs::NameOf(const std::string& field) const {
  auto it = names.find(field);
  return it == names.end() ? field : it->second;
}

SourcePos EngineArgs::PosOf(const std::string& field, const SourcePos& fallback) const {
  auto it = pos.find(field);
  return it == pos.end() ? fallback : it->second;
}

bool ApplyVllmEnv(const std::string& name, const std::string& value, const std::string& what,
                  DeployConfig& d) {
  if (name == "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS") {
    // envs.py reads it as bool(int(value)).
    if (value != "0" && value != "1") Fail("{}: expected 0 or 1, got '{}'", what, value);
    d.vllm_graph_profiling = value == "1";
    return true;
  }
  if (name == "VLLM_ALLOW_LONG_MAX_MODEL_LEN") {
    // envs.py: "1" or "true", any case.
    const std::string v = Lower(value);
    if (v != "0" && v != "1" && v != "true" && v != "false") {
      Fail("{}: expected 1/true or 0/false, got '{}'", what, value);
    }
    d.vllm_allow_long_max_model_len = v == "1" || v == "true";
    return true;
  }
  return false;
}

namespace {

// engine.env: the server's environment as a map of NAME: value. The vLLM
// variables kvplan models are applied; the rest are named (never their
// values: tokens live here) in a note.
void ReadEnv(const YAML::Node& env, const std::string& file, DeployConfig& d) {
  if (!env.IsMap()) {
    Fail("{}env: expected a map of NAME: value (the server's environment)",
         PosOf(env, file).Prefix());
  }
  std::vector<std::string> ignored;
  for (const auto& kv : env) {
    const std::string name = kv.first.Scalar();
    const SourcePos at = PosOf(kv.second, file);
    if (!kv.second.IsScalar()) Fail("{}{}: expected a value such as 1 or true", at.Prefix(), name);
    const bool modelled =
        d.engine == "vllm" && ApplyVllmEnv(name, kv.second.Scalar(), at.Prefix() + name, d);
    if (!modelled) ignored.push_back(name);
  }
  if (!ignored.empty()) {
    d.notes.push_back(fmt::format("engine.env: ignored (no effect on the KV cache): {}",
                                  fmt::join(ignored, ", ")));
  }
}

}  // namespace

DeployConfig ParseDeployConfig(const std::string& text, const std::string& file) {
  YAML::Node root = ParseYaml(text, file);
  MapReader r(root, file, "deployment config",
              {"name", "model", "hardware", "engine", "workload", "requirements"});
  DeployConfig d;
  d.file = file;
  d.pos = r.Pos();
  d.name = r.OptStr("name").value_or(std::filesystem::path(file).stem().string());
  d.model = Resolve(r.Str("model"), file);
  d.model_pos = r.Pos("model");

  MapReader hw(r.Child("hardware"), file, "hardware", {"gpu", "count"});
  d.gpu = Resolve(hw.Str("gpu"), file);
  d.gpu_pos = hw.Pos("gpu");
  d.gpu_count = hw.OptU64("count").value_or(0);
  d.count_pos = hw.Pos("count");
  hw.Finish();

  MapReader en(r.Child("engine"), file, "engine", {"name", "version", "env", "args"});
  d.engine = en.Str("name");
  d.engine_pos = en.Pos("name");
  // The names --engine takes (any case, tensorrt-llm, llama-server, ...).
  try {
    d.engine = std::string(EngineName(ParseEngine(d.engine)));
  } catch (const Error& e) {
    Fail("{}name: {}", d.engine_pos.Prefix(), e.what());
  }
  if (std::optional<std::string> v = en.OptStr("version")) {
    const SourcePos at = en.Pos("version");
    if (d.engine != "vllm") {
      Fail("{}version: only vLLM's version changes what kvplan models (this engine is {})",
           at.Prefix(), d.engine);
    }
    d.vllm_version = ParseVllmVersion(*v, at.Prefix() + "version");
  }
  if (en.Has("env")) {
    ReadEnv(en.Child("env"), file, d);
  } else {
    en.OptStr("env");
  }
  if (en.Has("args")) {
    std::vector<std::string> keys;
    for (const ArgKey& k : KeysFor(d.engine)) keys.push_back(k.key);
    if (d.engine == "vllm")
      keys.insert(keys.end(), std::begin(kVllmGraphKeys), std::end(kVllmGraphKeys));
    MapReader args(en.Child("args"), file, d.engine + " args", keys);
    ReadArgs(args, d.engine, d.args);
    // `key:` with no value (or null) is taken as the engine's default; said
    // in a note, in the file's order, since it may be a value left out.
    std::vector<std::pair<int, std::string>> unset;
    for (const std::string& k : keys) {
      if (args.Written(k) && !args.Has(k)) unset.emplace_back(args.Pos(k).line, k);
    }
    std::sort(unset.begin(), unset.end());
    if (!unset.empty()) {
      std::vector<std::string> named;
      for (const auto& [line, k] : unset) named.push_back(fmt::format("{} (line {})", k, line));
      d.notes.push_back(fmt::format("engine.args: no value, so the engine's default: {}",
                                    fmt::join(named, ", ")));
    }
  } else {
    en.OptStr("args");
  }
  en.Finish();

  if (r.Has("workload")) {
    MapReader w(r.Child("workload"), file, "workload", {"requests", "shared_prefix"});
    ReadWorkload(w, d);
  } else {
    r.OptStr("workload");
  }
  MapReader req(r.Child("requirements"), file, "requirements",
                {"min_concurrency", "min_tokens_in_cache", "min_headroom_percent",
                 "min_workload_concurrency", "latency"});
  ReadRequirements(req, d);
  r.Finish();
  return d;
}

DeployConfig ReadDeployConfig(const std::string& path) {
  return ParseDeployConfig(ReadTextFile(path), path);
}

}  // namespace kvplan
