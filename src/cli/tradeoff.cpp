// kvplan tradeoff: for a deployment's KV budget, the most concurrent requests
// at each context length and the longest context at each batch size, as a
// table, a terminal chart, an SVG plot, CSV or JSON.
#include "plan/tradeoff.h"

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/deploy_flags.h"
#include "cli/model_route.h"
#include "import/resolve.h"
#include "plan/tradeoff_capacity.h"
#include "report/chart.h"
#include "report/svg.h"
#include "report/tradeoff.h"
#include "spec/catalog.h"
#include "util/atomic_file.h"
#include "util/units.h"

namespace kvplan {
namespace {

struct TradeoffOptions {
  std::string model;
  std::string revision = "main";
  DeployFlags deploy;
  std::vector<std::string> contexts;
  std::vector<std::string> batches;
  std::string svg;
  bool force = false;
  bool no_chart = false;
  std::string format = "text";
};

std::vector<uint64_t> ParseList(const std::vector<std::string>& items, const char* flag) {
  std::vector<uint64_t> out;
  for (const std::string& item : items) {
    uint64_t v = ParseTokens(item, flag);
    if (v == 0) Fail("{}: values must be at least 1", flag);
    out.push_back(v);
  }
  return out;
}

void Run(const TradeoffOptions& o) {
  if (!o.svg.empty()) CheckOutputPath(o.svg, o.force);  // before any work
  ModelSpec m = LoadModelAndSay(o.model, o.revision);
  HardwareSpec hw = LoadHardware(o.deploy.gpu);
  EngineConfig config = ToEngineConfig(o.deploy);
  CapacityResult cap = CapacityOrFail(m, hw, config);
  const TradeoffInput in = TradeoffInputFor(m, cap, !o.deploy.max_model_len.empty());
  std::vector<uint64_t> contexts =
      o.contexts.empty() ? DefaultContexts(in) : ParseList(o.contexts, "--contexts");
  std::vector<uint64_t> batches =
      o.batches.empty() ? DefaultBatches(in) : ParseList(o.batches, "--batches");
  CheckContextsFit(contexts, in.max_context);
  Tradeoff t = ComputeTradeoff(in, contexts, batches);
  Chart chart = TradeoffChart(m, hw, cap, t);
  if (!o.svg.empty()) WriteFileAtomic(o.svg, RenderSvg(chart), o.force);

  switch (ToFormat(o.format)) {
    case Format::kJson:
      Print(TradeoffJson(m, hw, cap, in.max_context, t).Dump() + "\n");
      break;
    case Format::kCsv:
      Print(TradeoffCsv(m, hw, cap, t));
      break;
    case Format::kText: {
      std::string out = TradeoffText(m, hw, cap, in.max_context, t, OutputWidth());
      if (!o.no_chart) out += "\n" + RenderTerminalChart(chart);
      if (!o.svg.empty()) out += fmt::format("\nwrote {}\n", o.svg);
      Print(out);
      break;
    }
  }
}

}  // namespace

void SetupTradeoffCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<TradeoffOptions>();
  CLI::App* sub = app.add_subcommand(
      "tradeoff", "Max batch for each context length and max context for each batch size");
  sub->add_option("model", o->model, "Catalog name, HF repo id, spec YAML or config.json")
      ->required();
  AddRevisionOption(sub, o->revision);
  AddDeployFlags(sub, o->deploy);
  sub->add_option("--contexts", o->contexts,
                  "Context lengths to tabulate (default: 1K, 2K, 4K ... max-model-len)")
      ->delimiter(',');
  sub->add_option("--batches", o->batches,
                  "Batch sizes to tabulate (default: 1, 2, 4 ... until none fits)")
      ->delimiter(',');
  sub->add_option("--svg", o->svg, "Also write the plot as SVG to FILE");
  sub->add_flag("--force", o->force, "Overwrite the --svg file if it exists");
  sub->add_flag("--no-chart", o->no_chart, "Text output without the terminal chart");
  AddFormatOption(sub, o->format);
  sub->footer(R"(Examples:
  kvplan tradeoff llama-3.1-8b --gpu h100-sxm
  kvplan tradeoff llama-3.1-70b --gpu h100-sxm -tp 4 --kv-cache-dtype fp8 --svg tradeoff.svg
  kvplan tradeoff qwen3-8b --gpu l40s --contexts 2K,8K,32K --batches 1,16,64 --format csv

Both grids count whole KV blocks the way the engine admits requests, so for
vLLM, SGLang and TensorRT-LLM the row at max-model-len matches `kvplan
capacity`'s maximum concurrency; "runs at once" caps it at max-num-seqs, the
scheduler's limit. For llama.cpp, which serves the -np sequences it was
given, each row is a run of its own (-np BATCH -c BATCH x CONTEXT) and the
batch is how far memory would let -np go (capacity --concurrency's answer);
contexts run to the model's own limit unless --max-model-len is given.)");
  sub->callback([o, &exit_code] {
    Run(*o);
    exit_code = 0;
  });
}

}  // namespace kvplan
