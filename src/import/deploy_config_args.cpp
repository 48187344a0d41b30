// A deployment config's engine.args: the table of each engine's keys (under
// the engine's own names, with the EngineArgs field each sets), reading and
// checking their values, and vLLM's CUDA-graph keys (its capture sizes,
// optimization_level and compilation_config). The document around them is
// read by deploy_config_reader.cpp.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "import/deploy_config_internal.h"
#include "import/speculative_config.h"
#include "import/vllm_args.h"
#include "plan/weights.h"
#include "spec/cache_dtype.h"
#include "spec/engine.h"
#include "spec/json_syntax.h"
#include "spec/state_shape.h"
#include "util/units.h"

namespace kvplan {
namespace {

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

// llama.cpp's cache_type_k and cache_type_v, once either is given: equal,
// since kvplan models one cache type for both. Drops the value markers
// ReadArgs left in a.pos.
void CheckLlamaCppCacheTypes(EngineArgs& a) {
  // kvplan models one cache type for K and V: llama.cpp keeps the other at
  // f16 when only one is given, so both must be stated, and equal.
  std::string v;
  for (const auto& [key, p] : a.pos) {
    if (key.rfind("cache_type_v_value:", 0) == 0) v = key.substr(19);
  }
  std::string k = a.kv_cache_dtype.value_or("");
  if (k != v) {
    SourcePos at = a.pos.count("cache_type_v") ? a.pos["cache_type_v"] : a.pos["kv_cache_dtype"];
    Fail(
        "{}{}: cache_type_k '{}' and cache_type_v '{}' differ (llama.cpp's default is f16); "
        "kvplan models one cache type for K and V, so give both, equal",
        at.Prefix(), k.empty() ? "cache_type_k" : "cache_type_v", k.empty() ? "f16" : k,
        v.empty() ? "f16" : v);
  }
  for (auto it = a.pos.begin(); it != a.pos.end();) {
    it = it->first.rfind("cache_type_v_value:", 0) == 0 ? a.pos.erase(it) : std::next(it);
  }
}

// The EngineArgs count that `field` sets (max_model_len, tp, n_ctx, ...),
// nullptr for a field of another type.
std::optional<uint64_t>* CountField(EngineArgs& a, const std::string& f) {
  if (f == "max_model_len") return &a.max_model_len;
  if (f == "max_num_seqs") return &a.max_num_seqs;
  if (f == "tp") return &a.tp;
  if (f == "pp") return &a.pp;
  if (f == "dp") return &a.dp;
  if (f == "block_size") return &a.block_size;
  if (f == "max_num_batched_tokens") return &a.max_num_batched_tokens;
  if (f == "max_total_tokens") return &a.max_total_tokens;
  if (f == "n_ctx") return &a.n_ctx;
  if (f == "kv_cache_memory_bytes") return &a.kv_cache_memory_bytes;
  if (f == "max_gpu_total_bytes") return &a.max_gpu_total_bytes;
  if (f == "host_cache_size") return &a.host_cache_size;
  if (f == "trtllm_max_tokens") return &a.trtllm_max_tokens;
  if (f == "ep_size") return &a.ep_size;
  if (f == "num_gpu_blocks_override") return &a.num_gpu_blocks_override;
  if (f == "cuda_graph_max_bs") return &a.cuda_graph_max_bs;
  if (f == "max_mamba_cache_size") return &a.max_mamba_cache_size;
  return nullptr;
}

// A text key (a dtype, llama.cpp's flash_attn) into `a`, checked: a dtype
// kvplan does not know is a typo, bad input; one the engine lacks is a
// startup FAIL in `check`.
void ReadTextArg(MapReader& r, const ArgKey& k, EngineArgs& a) {
  const std::string f = k.field;
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
  if (f == "mamba_ssm_dtype" || f == "mamba_cache_dtype") {
    // A state dtype: auto, float32, bfloat16, float16.
    StateDtypeBytes(v, r.Pos(k.key).Prefix() + k.key);
    (f == "mamba_ssm_dtype" ? a.mamba_ssm_dtype : a.mamba_cache_dtype) = v;
    return;
  }
  if (f == "flash_attn") {
    // llama.cpp's -fa takes on, off or auto (older builds: a switch).
    if (v == "true" || v == "1") v = "on";
    if (v == "false" || v == "0") v = "off";
    if (v != "on" && v != "off" && v != "auto") {
      Fail("{}{}: expected on, off or auto, got '{}'", r.Pos(k.key).Prefix(), k.key, v);
    }
    a.flash_attn = v;
  } else if (f == "n_gpu_layers" || f == "tensor_split") {
    // llama.cpp's -ngl (a count, all, -1) and -ts (shares): checked here.
    const std::string what = r.Pos(k.key).Prefix() + k.key;
    if (f == "n_gpu_layers") {
      ParseGpuLayers(v, what);
      a.n_gpu_layers = v;
    } else {
      ParseTensorSplit(v, what);
      a.tensor_split = v;
    }
  } else if (f == "kv_cache_dtype")
    a.kv_cache_dtype = v;
  else if (f == "cache_type_v")
    a.pos["cache_type_v_value:" + v] = r.Pos(k.key);
  else if (f == "quantization")
    a.quantization = v;
  else
    a.weight_dtype = v;
}

void ReadArgs(MapReader& r, const std::string& engine, EngineArgs& a) {
  for (const ArgKey& k : KeysFor(engine)) {
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
    std::optional<uint64_t>* u = CountField(a, f);
    switch (k.type) {
      // llama.cpp's ctx_size 0 is the model's own context; elsewhere 0 is no value.
      case ArgType::kTokens:
        if (engine == "vllm") {
          // vLLM reads a config file's values as its flags: human_readable_int;
          // max_model_len -1 (or auto) fits it to the cache, as on the line.
          const std::string what = r.Pos(k.key).Prefix() + k.key;
          const std::string text = r.Str(k.key);
          if (f == "max_model_len" && (text == "-1" || text == "auto")) {
            a.max_model_len_auto = true;
            break;
          }
          *u = ParseHumanReadableInt(text, what);
          if (**u == 0) Fail("{}: must be positive, got 0", what);
        } else {
          *u = ReadTokenCount(r, k.key, f == "n_ctx");
        }
        // The bound of --max-model-len, for every engine's context key.
        if (f == "max_model_len" || (f == "n_ctx" && **u != 0)) {
          CheckContextTokens(**u, r.Pos(k.key).Prefix() + k.key);
        }
        break;
      case ArgType::kCount:
        *u = r.U64(k.key);
        CheckEngineCount(f, **u, r.Pos(k.key).Prefix() + k.key);  // the CLI flag's bound
        if (f == "max_mamba_cache_size" && **u == 0) {
          Fail("{}{}: must be at least 1 (leave it out to size the pool from memory)",
               r.Pos(k.key).Prefix(), k.key);
        }
        break;
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
      case ArgType::kRatio: {
        const double v = r.Num(k.key);
        if (!(v > 0) || v > 1e6) {
          Fail("{}{}: must be a positive ratio, got {}", r.Pos(k.key).Prefix(), k.key, v);
        }
        a.mamba_full_memory_ratio = v;
        break;
      }
      case ArgType::kBool:
      case ArgType::kNotBool: {
        bool v = r.Bool(k.key);
        if (k.type == ArgType::kNotBool) v = !v;
        if (f == "prefix_caching")
          a.prefix_caching = v;
        else if (f == "enforce_eager")
          a.enforce_eager = v;
        else if (f == "swa_full")
          a.swa_full = v;
        else if (f == "kv_unified")
          a.kv_unified = v;
        else if (f == "no_kv_offload")
          a.no_kv_offload = v;
        else if (f == "attention_dp")
          a.attention_dp = v;
        else if (f == "expert_parallel")
          a.expert_parallel = v;
        else if (f == "disable_hybrid")
          a.disable_hybrid = v;
        break;
      }
      case ArgType::kText:
        ReadTextArg(r, k, a);
        break;
    }
  }
  if (engine == "vllm") ReadVllmGraphs(r, a);
  r.Finish();
  if (engine == "llama.cpp" && (a.kv_cache_dtype || a.pos.count("cache_type_v"))) {
    CheckLlamaCppCacheTypes(a);
  }
}

}  // namespace

bool IsEngineArgsKey(const std::string& engine, const std::string& key) {
  for (const ArgKey& k : KeysFor(engine)) {
    if (key == k.key) return true;
  }
  if (engine == "vllm" && std::find(std::begin(kVllmGraphKeys), std::end(kVllmGraphKeys), key) !=
                              std::end(kVllmGraphKeys)) {
    return true;
  }
  const std::vector<std::string>& speculative = SpeculativeKeys(engine);
  if (std::find(speculative.begin(), speculative.end(), key) != speculative.end()) return true;
  const OtherKeys& other = OtherKeysFor(engine);
  return std::find(other.memory.begin(), other.memory.end(), key) != other.memory.end() ||
         std::find(other.harmless.begin(), other.harmless.end(), key) != other.harmless.end();
}

void ReadEngineArgs(const YAML::Node& node, const std::string& file, DeployConfig& d) {
  std::vector<std::string> keys;
  for (const ArgKey& k : KeysFor(d.engine)) keys.push_back(k.key);
  if (d.engine == "vllm")
    keys.insert(keys.end(), std::begin(kVllmGraphKeys), std::end(kVllmGraphKeys));
  const std::vector<std::string>& speculative = SpeculativeKeys(d.engine);
  keys.insert(keys.end(), speculative.begin(), speculative.end());
  const OtherKeys& other = OtherKeysFor(d.engine);
  keys.insert(keys.end(), other.memory.begin(), other.memory.end());
  keys.insert(keys.end(), other.harmless.begin(), other.harmless.end());
  MapReader args(node, file, d.engine + " args", keys);
  // The engine's other keys are taken, not read: named in the notes, the
  // ones that change memory apart (check --strict fails on them).
  std::vector<std::string> harmless;
  for (const std::string& k : other.memory) {
    if (!args.Written(k)) continue;
    args.Skip(k);
    d.unmodelled.push_back(k);
  }
  for (const std::string& k : other.harmless) {
    if (!args.Written(k)) continue;
    // vLLM's and SGLang's revision: the Hub revision the model resolves at.
    if (k == "revision" && args.Has(k)) {
      d.model_revision = args.Str(k);
      continue;
    }
    args.Skip(k);
    harmless.push_back(k);
  }
  ReadSpeculativeKeys(args, d, harmless);
  ReadArgs(args, d.engine, d.args);
  if (!harmless.empty()) {
    d.notes.push_back(
        fmt::format("ignored (no effect on the KV cache): {}", fmt::join(harmless, ", ")));
  }
  if (!d.unmodelled.empty()) {
    d.notes.push_back(fmt::format(
        "not modelled (they change the memory left for the KV cache; the figures assume them "
        "absent): {}",
        fmt::join(d.unmodelled, ", ")));
  }
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
    d.notes.push_back(
        fmt::format("engine.args: no value, so the engine's default: {}", fmt::join(named, ", ")));
  }
}

}  // namespace kvplan
