// Reading a deployment config file (docs/deploy-config.md): the document's
// sections (model, hardware, engine, workload, requirements), paths relative
// to the file, and the engine's environment. engine.args, with its per-engine
// key table, is read by deploy_config_args.cpp.
#include "import/deploy_config_reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>

#include "import/deploy_config_internal.h"
#include "plan/engines.h"
#include "util/suggest.h"
#include "util/units.h"

namespace kvplan {
namespace {

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
    rc.tokens = ReadTokenCount(c, "tokens", false);
    CheckContextTokens(rc.tokens, c.Pos("tokens").Prefix() + "tokens");  // a request's length
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
    wl.shared_prefix_tokens = ReadTokenCount(w, "shared_prefix", true);
    // Every request starts with the prefix and adds tokens of its own (at
    // least what it generates), so the prefix is shorter than any request.
    uint64_t shortest = UINT64_MAX;
    for (const RequestClass& rc : wl.requests) shortest = std::min(shortest, rc.tokens);
    if (wl.shared_prefix_tokens >= shortest) {
      Fail(
          "{}shared_prefix: {} tokens is not shorter than the shortest request ({} tokens); "
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

// requirements.serving: a load (rate or users, prompt and output tokens)
// and TTFT/TPOT bounds at a percentile.
ServingRequirement ReadServing(MapReader& r, const std::string& file) {
  MapReader s(r.Child("serving"), file, "requirements.serving",
              {"rate", "users", "prompt", "output", "percentile", "max_ttft_ms", "max_tpot_ms"});
  ServingRequirement q;
  q.pos = s.Pos();
  if (s.Has("rate") == s.Has("users")) {
    Fail("{}requirements.serving: give rate (requests/s) or users (concurrent), one of them",
         q.pos.Prefix());
  }
  if (s.Has("rate")) {
    q.rate = s.Num("rate");
    if (q.rate > 1e7) Fail("{}rate: {:g} requests/s is over 10^7", s.Pos("rate").Prefix(), q.rate);
  } else {
    s.OptStr("rate");
  }
  q.users = s.OptU64("users").value_or(0);
  if (q.users > 10'000'000) Fail("{}users: over 10,000,000", s.Pos("users").Prefix());
  q.prompt = ReadTokenCount(s, "prompt", false);
  CheckContextTokens(q.prompt, s.Pos("prompt").Prefix() + "prompt");
  q.output = ReadTokenCount(s, "output", false);
  CheckContextTokens(q.output, s.Pos("output").Prefix() + "output");
  if (s.Has("percentile")) {
    q.percentile =
        ParsePercentile(s.Str("percentile"), s.Pos("percentile").Prefix() + "percentile");
  } else {
    s.OptStr("percentile");
  }
  q.max_ttft_ms = s.OptNum("max_ttft_ms");
  q.max_tpot_ms = s.OptNum("max_tpot_ms");
  q.ttft_pos = s.Pos("max_ttft_ms");
  q.tpot_pos = s.Pos("max_tpot_ms");
  s.Finish();
  if (!q.max_ttft_ms && !q.max_tpot_ms) {
    Fail("{}requirements.serving: give max_ttft_ms, max_tpot_ms or both", q.pos.Prefix());
  }
  return q;
}

void ReadRequirements(MapReader& r, DeployConfig& d) {
  Requirements& q = d.requirements;
  for (const char* k : {"min_concurrency", "min_tokens_in_cache", "min_headroom_percent",
                        "min_workload_concurrency", "latency", "serving"}) {
    // `min_concurrency:` with no value would be no requirement at all: a
    // gate that passes what it was asked to check.
    if (r.Written(k) && !r.Has(k)) {
      Fail("{}{}: no value (a requirement left empty would not be checked)", r.Pos(k).Prefix(), k);
    }
    if (r.Has(k)) q.pos[k] = r.Pos(k);
  }
  q.min_concurrency = r.OptU64("min_concurrency");
  if (r.Has("min_tokens_in_cache"))
    q.min_tokens_in_cache = ReadTokenCount(r, "min_tokens_in_cache", false);
  else
    r.OptStr("min_tokens_in_cache");
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
    // The bounds of `latency -c` and -b: a context of at most 2^30 tokens
    // (and, once the model is read, its max_context: plan/check.cpp).
    lr.context_tokens = ReadTokenCount(l, "context", false);
    CheckContextTokens(lr.context_tokens, l.Pos("context").Prefix() + "context");
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
  if (r.Has("serving")) {
    q.serving = ReadServing(r, d.file);
  } else {
    r.OptStr("serving");
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
    Fail(
        "{}requirements: states no requirement (known: min_concurrency, min_tokens_in_cache, "
        "min_headroom_percent, min_workload_concurrency, latency, serving)",
        r.Pos().Prefix());
  }
}

}  // namespace

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

uint64_t ReadTokenCount(MapReader& r, const std::string& key, bool allow_zero) {
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
  if (d.gpu_count > kMaxRanks) {
    Fail("{}count: {} GPUs is over the limit of {}", d.count_pos.Prefix(), WithCommas(d.gpu_count),
         WithCommas(kMaxRanks));
  }
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
    ReadEngineArgs(en.Child("args"), file, d);
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
                 "min_workload_concurrency", "latency", "serving"});
  ReadRequirements(req, d);
  r.Finish();
  return d;
}

DeployConfig ReadDeployConfig(const std::string& path) {
  return ParseDeployConfig(ReadTextFile(path), path);
}

}  // namespace kvplan
