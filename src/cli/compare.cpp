// kvplan compare: two or more deployments side by side with ratios to the
// first: several models on one GPU, or one model with one setting varied
// (--vary kv-cache-dtype=fp16,fp8, --vary tp=2,4, --vary gpu=h100-sxm,h200).
#include "plan/compare.h"

#include <fmt/format.h>

#include <set>

#include "cli/commands.h"
#include "cli/deploy_flags.h"
#include "cli/model_route.h"
#include "cli/vary.h"
#include "import/resolve.h"
#include "plan/capacity.h"
#include "report/compare.h"
#include "util/error.h"

namespace kvplan {
namespace {

struct CompareOptions {
  std::vector<std::string> models;
  DeployFlags deploy;
  std::vector<std::string> vary;  // one --vary each: several make a grid
  std::string format = "text";
  std::set<std::string> given;  // the --vary keys also given as their own flag
};

// One --vary: its key and values.
struct Varied {
  std::string key;
  std::vector<std::string> values;
};

// The --vary keys and values, refused where the columns would not differ
// as asked.
std::vector<Varied> VariedSettings(const CompareOptions& o) {
  std::vector<Varied> out;
  for (const std::string& text : o.vary) {
    auto [key, values] = ParseVary(text);
    CheckVaryKey(key);
    for (const Varied& v : out) {
      if (v.key == key) Fail("--vary {}: given twice; list every value in one --vary", key);
    }
    // A fraction vLLM does not read: with an explicit budget it sizes the
    // cache from the budget, and every column would be the same.
    if (key == "gpu-memory-utilization" && !o.deploy.kv_cache_memory_bytes.empty()) {
      Fail(
          "--vary gpu-memory-utilization: with --kv-cache-memory-bytes vLLM sizes the cache "
          "from the budget and ignores the fraction; every column would be the same");
    }
    // --vary engine: an engine's own flag that no column's engine takes
    // would be dropped from every column; refuse it as the flag alone is.
    if (key == "engine") CheckEngineFlagsTaken(text, GivenEngineFlags(o.deploy), values);
    // A setting both given and varied: the --vary values would win silently.
    if (o.given.count(key) != 0) {
      Fail(
          "compare: --{} and --vary {} both set {}: give it once (the --vary values are the "
          "columns)",
          key, key, key);
    }
    out.push_back({key, values});
  }
  return out;
}

// Every combination of the varied values, the first key slowest: one
// column each ({{}} without --vary).
std::vector<std::vector<std::pair<std::string, std::string>>> Grid(
    const std::vector<Varied>& varied) {
  std::vector<std::vector<std::pair<std::string, std::string>>> grid = {{}};
  for (const Varied& v : varied) {
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& partial : grid) {
      for (const std::string& value : v.values) {
        next.push_back(partial);
        next.back().emplace_back(v.key, value);
      }
    }
    grid = std::move(next);
  }
  return grid;
}

constexpr size_t kMaxColumns = 64;  // a grid beyond this is no table anyone reads

// One column: the capacity of `m` on `gpu` under `flags`, and, where the
// engine would refuse to start (a tp that does not divide the heads, a
// max_model_len that does not fit), its reason: a column, not an error.
CompareColumn Column(const ModelSpec& m, const HardwareSpec& gpu, const DeployFlags& flags,
                     std::string label) {
  CompareColumn c;
  c.label = std::move(label);
  c.model = m;
  c.gpu = gpu;
  c.cap = ComputeCapacity(m, c.gpu, ToEngineConfig(flags));
  for (const Lint& l : c.cap.lints) {
    if (!StopsEngineAtStartup(l, c.cap.config.engine)) continue;
    c.refused = l.message;
    // An error lint leaves the figures unset: nothing to show.
    c.figures = l.severity != Severity::kError;
    break;
  }
  return c;
}

void Run(const CompareOptions& o) {
  const std::vector<Varied> varied = VariedSettings(o);
  const auto grid = Grid(varied);
  if (o.models.size() * grid.size() < 2) {
    Fail(
        "compare: nothing to compare: give two or more models, or --vary KEY=V1,V2 "
        "(e.g. --vary kv-cache-dtype=fp16,fp8)");
  }
  if (o.models.size() * grid.size() > kMaxColumns) {
    Fail("compare: {} configurations is more than the {} one table can show: vary fewer values",
         o.models.size() * grid.size(), kMaxColumns);
  }
  bool gpu_varied = false, engine_varied = false;
  for (const Varied& v : varied) {
    gpu_varied = gpu_varied || v.key == "gpu";
    engine_varied = engine_varied || v.key == "engine";
  }
  if (o.deploy.gpu.empty() && !gpu_varied) {
    Fail("compare: --gpu is required (or --vary gpu=A,B)");
  }
  std::vector<CompareColumn> cols;
  for (const std::string& name : o.models) {
    ModelSpec m = LoadModelAndSay(name);
    for (const auto& point : grid) {
      DeployFlags f = o.deploy;
      std::string label = o.models.size() > 1 ? m.name : "";
      std::string where;  // "--vary KEY=VALUE ...": the column, for an error that needs it
      for (const auto& [key, value] : point) {
        where += (where.empty() ? "--vary " : " ") + fmt::format("{}={}", key, value);
        f = WithVaryValue(f, key, value);  // its errors name the key
        label += (label.empty() ? "" : " ") + fmt::format("{}={}", key, value);
      }
      try {
        cols.push_back(Column(m, LoadHardware(f.gpu), f, label));
      } catch (const Error& e) {
        // Say which column failed: the message alone may not name the value.
        if (where.empty()) throw;
        Fail("{}: {}", where, e.what());
      }
    }
  }
  // The lints `kvplan capacity` prints (a tp the engine refuses, a window it
  // ignores): a column that no server would start must not pass unremarked.
  // stderr, so the table, JSON and CSV on stdout stay as they are.
  for (const CompareColumn& c : cols) {
    for (const Lint& l : c.cap.lints) {
      WriteStderr(
          fmt::format("kvplan: {}: {}\n", l.severity == Severity::kError ? "error" : "warning",
                      OneLine((c.label.empty() ? c.model.name : c.label) + ": " + l.message)));
    }
  }
  const std::vector<CompareRow> rows = CompareRows(cols);
  const std::string shown_key = engine_varied ? "engine" : varied.empty() ? "" : varied[0].key;
  switch (ToFormat(o.format)) {
    case Format::kJson:
      Print(CompareJson(cols, rows).Dump() + "\n");
      break;
    case Format::kCsv:
      Print(CompareCsv(cols, rows, shown_key));
      break;
    case Format::kText:
      Print(CompareText(cols, rows, shown_key, OutputWidth()));
      break;
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
                  "gpu-memory-utilization, kv-cache-memory-bytes or vllm-version; several "
                  "--vary make a grid (at most 64 columns)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  AddFormatOption(sub, o->format);
  sub->footer(R"(Examples:
  kvplan compare llama-3.1-70b --gpu h100-sxm -tp 4 --vary kv-cache-dtype=fp16,fp8
  kvplan compare llama-3.1-70b --gpu h100-sxm --vary tp=2,4,8
  kvplan compare llama-3.1-8b qwen3-8b --gpu l40s
  kvplan compare llama-3.1-8b --vary gpu=l40s,a100-80gb,h100-sxm --max-model-len 32K
  kvplan compare llama-3.1-8b --gpu h100-sxm --vary vllm-version=0.20,latest
  kvplan compare llama-3.1-70b --gpu h100-sxm --vary tp=1,2,4 --vary kv-cache-dtype=fp16,fp8
  kvplan compare llama-3.1-8b --gpu h100-sxm --vary engine=vllm,sglang \
      --gpu-memory-utilization 0.85 --mem-fraction-static 0.85

Every other flag applies to all columns, but with --vary engine an engine's
own flags apply to its columns only: --gpu-memory-utilization and
--vllm-version to vllm, --mem-fraction-static and --max-total-tokens to
sglang, --free-gpu-memory-fraction to trtllm, --max-num-seqs to all but
llama.cpp. With several models and --vary, each model gets one column per
value. A configuration the engine refuses, or that does not fit, stays a
column with its reason (its figures '-' where none were computed).)");
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
