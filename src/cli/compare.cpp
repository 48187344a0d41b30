// kvplan compare: two or more deployments side by side with ratios to the
// first: several models on one GPU, or one model with one setting varied
// (--vary kv-cache-dtype=fp16,fp8, --vary tp=2,4, --vary gpu=h100-sxm,h200).
#include "plan/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "cli/commands.h"
#include "cli/deploy_flags.h"
#include "report/json.h"
#include "report/table.h"
#include "spec/catalog.h"
#include "util/error.h"
#include "util/suggest.h"
#include "util/units.h"

namespace kvplan {
namespace {

struct CompareOptions {
  std::vector<std::string> models;
  DeployFlags deploy;
  std::string vary;
  std::string format = "text";
  std::set<std::string> given;  // the --vary keys also given as their own flag
};

const std::vector<std::string>& VaryKeys() {
  static const std::vector<std::string> keys = {"kv-cache-dtype",
                                                "tp",
                                                "pp",
                                                "gpu",
                                                "engine",
                                                "max-model-len",
                                                "block-size",
                                                "gpu-memory-utilization",
                                                "kv-cache-memory-bytes",
                                                "vllm-version"};
  return keys;
}

// The flags that belong to some engines only. With --vary engine each
// applies to the columns of its engines and is left out of the others, so
// `--vary engine=vllm,sglang --gpu-memory-utilization 0.8
// --mem-fraction-static 0.8` sizes each engine at its own setting.
struct EngineFlag {
  const char* name;
  std::vector<Engine> engines;  // the engines that take it
  bool except = false;          // true: every engine but those
  void (*reset)(DeployFlags&);  // back to unset
  bool Takes(Engine e) const {
    return (std::find(engines.begin(), engines.end(), e) != engines.end()) != except;
  }
  bool Given(const DeployFlags& f) const {
    DeployFlags unset = f;
    reset(unset);
    return !(unset == f);
  }
};

const std::vector<EngineFlag>& EngineFlags() {
  static const std::vector<EngineFlag> flags = {
      {"--gpu-memory-utilization",
       {Engine::kVllm},
       false,
       [](DeployFlags& f) { f.gpu_memory_utilization.reset(); }},
      {"--vllm-version", {Engine::kVllm}, false, [](DeployFlags& f) { f.vllm_version.reset(); }},
      {"--mem-fraction-static",
       {Engine::kSglang},
       false,
       [](DeployFlags& f) { f.mem_fraction_static.reset(); }},
      {"--max-total-tokens",
       {Engine::kSglang},
       false,
       [](DeployFlags& f) { f.max_total_tokens.clear(); }},
      {"--free-gpu-memory-fraction",
       {Engine::kTrtllm},
       false,
       [](DeployFlags& f) { f.free_gpu_memory_fraction.reset(); }},
      {"--max-num-seqs", {Engine::kLlamaCpp}, true, [](DeployFlags& f) { f.max_num_seqs.clear(); }},
  };
  return flags;
}

// Applies one --vary value to a copy of the flags.
DeployFlags WithValue(DeployFlags f, const std::string& key, const std::string& v) {
  // The same range as the flag itself (--tp, --pp: 1-65536; --block-size: 1-1048576).
  auto u64 = [&](const char* flag, uint64_t max) {
    uint64_t n = ParseTokens(v, flag);
    if (n == 0) Fail("--vary {}: values must be at least 1", key);
    if (n > max) Fail("--vary {}: {} is more than {}", key, n, max);
    return n;
  };
  if (key == "kv-cache-dtype")
    f.kv_cache_dtype = v;
  else if (key == "tp")
    f.tp = u64("--vary tp", uint64_t{1} << 16);
  else if (key == "pp")
    f.pp = u64("--vary pp", uint64_t{1} << 16);
  else if (key == "gpu")
    f.gpu = v;
  else if (key == "engine") {
    f.engine = v;
    // An engine's own flags apply to its columns only (EngineFlags), however
    // the name is written; a bad name is reported later, with the --vary
    // value, and keeps every flag.
    Engine e{};
    try {
      e = ParseEngine(v);
    } catch (const Error&) {
      return f;
    }
    for (const EngineFlag& flag : EngineFlags()) {
      if (!flag.Takes(e)) flag.reset(f);
    }
  } else if (key == "vllm-version")
    f.vllm_version = v;
  else if (key == "max-model-len")
    f.max_model_len = v;
  else if (key == "block-size")
    f.block_size = u64("--vary block-size", uint64_t{1} << 20);
  else if (key == "kv-cache-memory-bytes")
    f.kv_cache_memory_bytes = v;
  else if (key == "gpu-memory-utilization") {
    char* end = nullptr;
    double d = std::strtod(v.c_str(), &end);
    if (end != v.c_str() + v.size() || !(d > 0 && d <= 1)) {
      Fail("--vary gpu-memory-utilization: '{}' is not in (0, 1]", v);
    }
    f.gpu_memory_utilization = d;
  }
  return f;
}

// Whether the engine sizes its cache from its memory fraction: llama.cpp
// has none, and vLLM given kv_cache_memory_bytes ignores it.
bool FractionRead(const EngineConfig& c) {
  if (MemoryFractionFlag(c.engine).empty()) return false;
  return !(c.engine == Engine::kVllm && c.kv_cache_memory_bytes != 0);
}

struct Column {
  std::string label;
  ModelSpec model;
  HardwareSpec gpu;
  CapacityResult cap;
};

std::string FormatValue(double v, const std::string& unit) {
  if (unit == "bytes") return FormatGiB(static_cast<uint64_t>(v));
  if (unit == "x") return fmt::format("{:.2f}x", v);
  return WithCommas(static_cast<uint64_t>(v));
}

void Run(const CompareOptions& o) {
  std::string key;
  std::vector<std::string> values = {""};
  if (!o.vary.empty()) {
    std::tie(key, values) = ParseVary(o.vary);
    bool known = false;
    for (const std::string& k : VaryKeys()) known = known || k == key;
    if (!known) {
      std::string list;
      for (const std::string& k : VaryKeys()) list += (list.empty() ? "" : ", ") + k;
      Fail("--vary: unknown setting '{}'{} (one of: {})", key, DidYouMean(key, VaryKeys()), list);
    }
    // A fraction vLLM does not read: with an explicit budget it sizes the
    // cache from the budget, and every column would be the same.
    if (key == "gpu-memory-utilization" && !o.deploy.kv_cache_memory_bytes.empty()) {
      Fail(
          "--vary gpu-memory-utilization: with --kv-cache-memory-bytes vLLM sizes the cache from "
          "the budget and ignores the fraction; every column would be the same");
    }
    // --vary engine: an engine's own flag that no column's engine takes
    // would be dropped from every column; refuse it as the flag alone is.
    if (key == "engine") {
      for (const EngineFlag& flag : EngineFlags()) {
        if (!flag.Given(o.deploy)) continue;
        bool taken = false;
        for (const std::string& v : values) {
          try {
            taken = taken || flag.Takes(ParseEngine(v));
          } catch (const Error&) {
            taken = true;  // reported with its column
          }
        }
        if (!taken) {
          std::vector<std::string> names;
          for (Engine e : flag.engines) names.emplace_back(EngineName(e));
          Fail("--vary {}: {} is for {}{}, and no column's engine takes it", o.vary, flag.name,
               flag.except ? "every engine but " : "", fmt::join(names, ", "));
        }
      }
    }
    // A setting both given and varied: the --vary values would win silently.
    if (o.given.count(key) != 0) {
      Fail(
          "compare: --{} and --vary {} both set {}: give it once (the --vary values are the "
          "columns)",
          key, key, key);
    }
  }
  if (o.models.size() * values.size() < 2) {
    Fail(
        "compare: nothing to compare: give two or more models, or --vary KEY=V1,V2 "
        "(e.g. --vary kv-cache-dtype=fp16,fp8)");
  }
  if (o.deploy.gpu.empty() && key != "gpu") Fail("compare: --gpu is required (or --vary gpu=A,B)");
  std::vector<Column> cols;
  for (const std::string& name : o.models) {
    ModelSpec m = LoadModel(name);
    for (const std::string& v : values) {
      DeployFlags f = key.empty() ? o.deploy : WithValue(o.deploy, key, v);
      Column c{"", m, {}, {}};
      try {
        c.gpu = LoadHardware(f.gpu);  // inside: --vary gpu=A,B names the GPU that failed
        c.cap = CapacityOrFail(m, c.gpu, ToEngineConfig(f));
      } catch (const Error& e) {
        // Say which column failed: the message alone may not name the value.
        if (key.empty()) throw;
        Fail("--vary {}={}: {}", key, v, e.what());
      }
      c.label = o.models.size() > 1 ? m.name : "";
      if (!key.empty()) c.label += (c.label.empty() ? "" : " ") + fmt::format("{}={}", key, v);
      cols.push_back(std::move(c));
    }
  }
  // The lints `kvplan capacity` prints (a tp the engine refuses, a window it
  // ignores): a column that no server would start must not pass unremarked.
  // stderr, so the table, JSON and CSV on stdout stay as they are.
  for (const Column& c : cols) {
    for (const Lint& l : c.cap.lints) {
      fmt::print(stderr, "kvplan: {}: {}: {}\n",
                 l.severity == Severity::kError ? "error" : "warning",
                 c.label.empty() ? c.model.name : c.label, l.message);
    }
  }
  std::vector<CompareRow> rows = {
      {"bytes_per_token", "KV bytes per token (per GPU)", "count", {}, false},
      {"weights_bytes", "weights per GPU", "bytes", {}, false},
      {"kv_budget_bytes", "KV budget per GPU", "bytes", {}, true},
      {"num_blocks", "KV blocks", "count", {}, true},
      {"max_tokens", "tokens in cache", "count", {}, true},
      {"max_model_len", "max-model-len", "count", {}, true},
      {"max_concurrency", "max concurrency at max-model-len", "x", {}, true},
      {"largest_max_model_len", "longest single request", "count", {}, true},
      {"gpus", "GPUs", "count", {}, false},
      {"cluster_max_tokens", "tokens in cache, all replicas", "count", {}, true},
  };
  for (const Column& c : cols) {
    const CapacityResult& r = c.cap;
    rows[0].values.push_back(static_cast<double>(r.bytes_per_token));
    rows[1].values.push_back(static_cast<double>(r.weights_bytes));
    rows[2].values.push_back(static_cast<double>(r.kv_budget_bytes));
    rows[3].values.push_back(static_cast<double>(r.num_blocks));
    rows[4].values.push_back(static_cast<double>(r.max_tokens));
    rows[5].values.push_back(static_cast<double>(r.max_model_len));
    rows[6].values.push_back(r.max_concurrency);
    rows[7].values.push_back(static_cast<double>(r.largest_max_model_len));
    rows[8].values.push_back(static_cast<double>(r.gpus));
    rows[9].values.push_back(static_cast<double>(r.cluster_max_tokens));
  }

  switch (ToFormat(o.format)) {
    case Format::kJson: {
      Json arr = Json::MakeArray();
      for (size_t i = 0; i < cols.size(); ++i) {
        const Column& c = cols[i];
        Json j;
        j.Set("label", c.label);
        j.Set("model", c.model.name);
        j.Set("gpu", c.gpu.name);
        SetEngineJson(j, c.cap);
        // The engine's fraction, given or its default (null where none is
        // read: llama.cpp, vLLM given a budget).
        if (!FractionRead(c.cap.config))
          j.Set("memory_fraction", nullptr);
        else
          j.Set("memory_fraction", c.cap.config.memory_fraction);
        j.Set("kv_cache_dtype", c.cap.kv_cache_dtype);
        j.Set("weight_dtype", c.cap.weight_dtype);
        j.Set("weight_format", c.cap.weight_format);
        j.Set("tp", c.cap.config.tp);
        j.Set("pp", c.cap.config.pp);
        Json ratios;
        for (const CompareRow& row : rows) {
          if (row.unit == "x")
            j.Set(row.key, row.values[i]);
          else
            j.Set(row.key, static_cast<uint64_t>(row.values[i]));
          ratios.Set(row.key, row.Ratio(i));
        }
        j.Set("ratio_to_first", std::move(ratios));
        j.Set("lints", LintsJson(c.cap.lints));
        arr.Push(std::move(j));
      }
      Json top;
      top.Set("configurations", std::move(arr));
      Print(top.Dump() + "\n");
      break;
    }
    case Format::kCsv: {
      Table t({"metric", "configuration", "model", "gpu", "value", "ratio_to_first"});
      if (key == "engine") {
        // As the text's row: each engine's own fraction (empty where none
        // is read); no ratio, the engines apply them to different bases.
        for (const Column& c : cols) {
          t.AddRow(
              {"memory_fraction", c.label, c.model.name, c.gpu.name,
               FractionRead(c.cap.config) ? fmt::format("{:g}", c.cap.config.memory_fraction) : "",
               ""});
        }
      }
      for (const CompareRow& row : rows) {
        for (size_t i = 0; i < cols.size(); ++i) {
          t.AddRow({row.key, cols[i].label, cols[i].model.name, cols[i].gpu.name,
                    row.unit == "x" ? fmt::format("{:.4f}", row.values[i])
                                    : fmt::format("{:.0f}", row.values[i]),
                    fmt::format("{:.4f}", row.Ratio(i))});
        }
      }
      Print(t.Csv());
      break;
    }
    case Format::kText: {
      std::vector<std::string> headers = {""};
      for (const Column& c : cols) headers.push_back(c.label);
      Table t(headers);
      auto text_row = [&](const std::string& label, auto cell) {
        std::vector<std::string> r = {label};
        for (const Column& c : cols) r.push_back(cell(c));
        t.AddRow(r);
      };
      text_row("model", [](const Column& c) { return c.model.name; });
      text_row("gpu", [](const Column& c) { return c.gpu.name; });
      text_row("engine · KV dtype", [](const Column& c) {
        return fmt::format("{} · {}", EngineLabel(c.cap.config), c.cap.kv_cache_dtype);
      });
      if (key == "engine") {
        // Each engine's own fraction, given or its default, so columns
        // sized by different rules can be read side by side.
        text_row("memory fraction", [](const Column& c) {
          return !FractionRead(c.cap.config) ? std::string("-")
                                             : fmt::format("{:g}", c.cap.config.memory_fraction);
        });
      }
      text_row("weights", [](const Column& c) { return c.cap.weight_format; });
      text_row("tp x pp", [](const Column& c) {
        return fmt::format("{} x {}", c.cap.config.tp, c.cap.config.pp);
      });
      for (const CompareRow& row : rows) {
        std::vector<std::string> r = {row.label};
        for (size_t i = 0; i < cols.size(); ++i) {
          std::string cell = FormatValue(row.values[i], row.unit);
          if (i > 0 && row.values[0] != 0) cell += fmt::format(" ({:.2f}x)", row.Ratio(i));
          r.push_back(cell);
        }
        t.AddRow(r);
      }
      std::string out = t.Text();
      out += fmt::format("\nRatios in parentheses are against the first column ({}).\n",
                         cols[0].label);
      if (key == "engine") {
        out +=
            "Memory fraction: each engine's own, given or its default: vLLM "
            "--gpu-memory-utilization\nand SGLang --mem-fraction-static of the GPU's memory, "
            "TRT-LLM --free-gpu-memory-fraction\nof what is free after loading; '-': none is read "
            "(llama.cpp, or vLLM given\n--kv-cache-memory-bytes).\n";
      }
      Print(out);
      break;
    }
  }
}

}  // namespace

void SetupCompareCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* sub = app.add_subcommand(
      "compare", "Two or more deployments side by side, with ratios to the first");
  sub->add_option("models", o->models, "One or more models (catalog names, spec YAML, config.json)")
      ->required();
  AddDeployFlags(sub, o->deploy, /*gpu_required=*/false);
  sub->add_option("--vary", o->vary,
                  "One setting with several values, one column each: KEY=V1,V2,... where KEY is "
                  "kv-cache-dtype, tp, pp, gpu, engine, max-model-len, block-size, "
                  "gpu-memory-utilization, kv-cache-memory-bytes or vllm-version");
  AddFormatOption(sub, o->format);
  sub->footer(R"(Examples:
  kvplan compare llama-3.1-70b --gpu h100-sxm -tp 4 --vary kv-cache-dtype=fp16,fp8
  kvplan compare llama-3.1-70b --gpu h100-sxm --vary tp=2,4,8
  kvplan compare llama-3.1-8b qwen3-8b --gpu l40s
  kvplan compare llama-3.1-8b --vary gpu=l40s,a100-80gb,h100-sxm --max-model-len 32K
  kvplan compare llama-3.1-8b --gpu h100-sxm --vary vllm-version=0.20,latest
  kvplan compare llama-3.1-8b --gpu h100-sxm --vary engine=vllm,sglang \
      --gpu-memory-utilization 0.85 --mem-fraction-static 0.85

Every other flag applies to all columns, but with --vary engine an engine's
own flags apply to its columns only: --gpu-memory-utilization and
--vllm-version to vllm, --mem-fraction-static and --max-total-tokens to
sglang, --free-gpu-memory-fraction to trtllm, --max-num-seqs to all but
llama.cpp. With several models and --vary, each model gets one column per
value.)");
  sub->callback([o, sub, &exit_code] {
    for (const std::string& key : VaryKeys()) {
      const CLI::Option* flag = sub->get_option_no_throw("--" + key);
      if (flag != nullptr && flag->count() > 0) o->given.insert(key);
    }
    Run(*o);
    exit_code = 0;
  });
}

}  // namespace kvplan
