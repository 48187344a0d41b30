// kvplan compare: two or more deployments side by side with ratios to the
// first: several models on one GPU, or one model with one setting varied
// (--vary kv-cache-dtype=fp16,fp8, --vary tp=2,4, --vary gpu=h100-sxm,h200).
#include "plan/compare.h"

#include <fmt/format.h>

#include <set>

#include "cli/commands.h"
#include "cli/deploy_flags.h"
#include "cli/vary.h"
#include "import/resolve.h"
#include "report/compare.h"
#include "util/error.h"

namespace kvplan {
namespace {

struct CompareOptions {
  std::vector<std::string> models;
  DeployFlags deploy;
  std::string vary;
  std::string format = "text";
  std::set<std::string> given;  // the --vary keys also given as their own flag
};

// The --vary key and values ({"", {""}} without --vary), refused where the
// columns would not differ as asked.
std::pair<std::string, std::vector<std::string>> VaryOrNone(const CompareOptions& o) {
  if (o.vary.empty()) return {"", {""}};
  auto [key, values] = ParseVary(o.vary);
  CheckVaryKey(key);
  // A fraction vLLM does not read: with an explicit budget it sizes the
  // cache from the budget, and every column would be the same.
  if (key == "gpu-memory-utilization" && !o.deploy.kv_cache_memory_bytes.empty()) {
    Fail(
        "--vary gpu-memory-utilization: with --kv-cache-memory-bytes vLLM sizes the cache from "
        "the budget and ignores the fraction; every column would be the same");
  }
  // --vary engine: an engine's own flag that no column's engine takes
  // would be dropped from every column; refuse it as the flag alone is.
  if (key == "engine") CheckEngineFlagsTaken(o.vary, GivenEngineFlags(o.deploy), values);
  // A setting both given and varied: the --vary values would win silently.
  if (o.given.count(key) != 0) {
    Fail(
        "compare: --{} and --vary {} both set {}: give it once (the --vary values are the "
        "columns)",
        key, key, key);
  }
  return {key, values};
}

void Run(const CompareOptions& o) {
  const auto [key, values] = VaryOrNone(o);
  if (o.models.size() * values.size() < 2) {
    Fail(
        "compare: nothing to compare: give two or more models, or --vary KEY=V1,V2 "
        "(e.g. --vary kv-cache-dtype=fp16,fp8)");
  }
  if (o.deploy.gpu.empty() && key != "gpu") Fail("compare: --gpu is required (or --vary gpu=A,B)");
  std::vector<CompareColumn> cols;
  for (const std::string& name : o.models) {
    ModelSpec m = LoadModel(name);
    for (const std::string& v : values) {
      DeployFlags f = key.empty() ? o.deploy : WithVaryValue(o.deploy, key, v);
      CompareColumn c{"", m, {}, {}};
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
  for (const CompareColumn& c : cols) {
    for (const Lint& l : c.cap.lints) {
      WriteStderr(
          fmt::format("kvplan: {}: {}\n", l.severity == Severity::kError ? "error" : "warning",
                      OneLine((c.label.empty() ? c.model.name : c.label) + ": " + l.message)));
    }
  }
  const std::vector<CompareRow> rows = CompareRows(cols);
  switch (ToFormat(o.format)) {
    case Format::kJson:
      Print(CompareJson(cols, rows).Dump() + "\n");
      break;
    case Format::kCsv:
      Print(CompareCsv(cols, rows, key));
      break;
    case Format::kText:
      Print(CompareText(cols, rows, key, OutputWidth()));
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
