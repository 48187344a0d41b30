// kvplan tradeoff: for a deployment's KV budget, the most concurrent requests
// at each context length and the longest context at each batch size, as a
// table, a terminal chart, an SVG plot, CSV or JSON.
#include "plan/tradeoff.h"

#include <fmt/format.h>

#include <algorithm>

#include "cli/commands.h"
#include "cli/deploy_flags.h"
#include "report/chart.h"
#include "report/json.h"
#include "report/svg.h"
#include "report/table.h"
#include "spec/catalog.h"
#include "util/atomic_file.h"
#include "util/units.h"

namespace kvplan {
namespace {

struct TradeoffOptions {
  std::string model;
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

std::string Count(uint64_t v) {
  return v == UINT64_MAX ? "unbounded" : WithCommas(v);
}

// A batch that fits in memory but not under the running cap: the rest queue.
bool Queued(const CapacityResult& cap, const BatchPoint& p) {
  return p.max_context != 0 && cap.RunningAtOnce(p.batch) < p.batch;
}

// max_num_seqs for JSON: null where there is no running cap (llama.cpp).
Json RunningCapJson(const CapacityResult& cap) {
  const std::optional<uint64_t> limit = cap.RunningCap();
  return limit ? Json(*limit) : Json(nullptr);
}

Chart MakeChart(const ModelSpec& m, const HardwareSpec& hw, const CapacityResult& cap,
                const Tradeoff& t) {
  Chart c;
  c.title = fmt::format("{} on {}{} ({}, {} KV cache)", m.name,
                        cap.gpus_per_replica > 1 ? fmt::format("{} x ", cap.gpus_per_replica) : "",
                        hw.name, EngineLabel(cap.config), cap.kv_cache_dtype);
  c.x = {"context length (tokens per request)", true, AxisLabels::kTokens};
  c.y = {"concurrent requests", true, AxisLabels::kPlain};
  ChartSeries by_context{"max batch at each context", {}, false};
  for (const ContextPoint& p : t.by_context) {
    if (p.max_batch != UINT64_MAX) {
      by_context.points.push_back(
          {static_cast<double>(p.context), static_cast<double>(p.max_batch)});
    }
  }
  ChartSeries by_batch{"max context at each batch", {}, false};
  for (const BatchPoint& p : t.by_batch) {
    by_batch.points.push_back({static_cast<double>(p.max_context), static_cast<double>(p.batch)});
  }
  c.series = {by_context, by_batch};
  return c;
}

// The longest context the grids consider: max-model-len, which for llama.cpp
// is its -c over -np (4,096 by default) unless --max-model-len was given.
// A llama.cpp row is itself a choice of -np and -c (see FitsAtConcurrency),
// so there the default cap is the model's own context, as for the others.
uint64_t ContextCap(const ModelSpec& m, const CapacityResult& cap, const DeployFlags& flags) {
  if (cap.config.engine == Engine::kLlamaCpp && flags.max_model_len.empty()) {
    return m.max_context;
  }
  return cap.max_model_len;
}

std::string Header(const ModelSpec& m, const HardwareSpec& hw, const CapacityResult& cap,
                   uint64_t max_context) {
  std::string out = fmt::format("{} on {} · {} · tp {} · pp {} · weights {} · KV cache {}\n",
                                m.name, hw.name, EngineLabel(cap.config), cap.config.tp,
                                cap.config.pp, cap.weight_format, cap.kv_cache_dtype);
  if (cap.config.engine == Engine::kLlamaCpp) {
    // Each row is a llama.cpp run of its own: -np batch, -c batch x context.
    return out +
           fmt::format(
               "KV budget {} per GPU: room for {} blocks of {} cells; each row runs -np BATCH "
               "-c BATCH x CONTEXT; max context {}\n",
               FormatBoth(cap.kv_budget_bytes), WithCommas(cap.num_blocks), cap.block_size,
               FormatTokens(max_context));
  }
  return out +
         fmt::format("KV budget {} per GPU = {} blocks of {} tokens ({} tokens); max context {}\n",
                     FormatBoth(cap.kv_budget_bytes), WithCommas(cap.num_blocks), cap.block_size,
                     WithCommas(cap.max_tokens), FormatTokens(max_context));
}

void Run(const TradeoffOptions& o) {
  ModelSpec m = LoadModel(o.model);
  HardwareSpec hw = LoadHardware(o.deploy.gpu);
  EngineConfig config = ToEngineConfig(o.deploy);
  CapacityResult cap = CapacityOrFail(m, hw, config);
  TradeoffInput in;
  in.num_blocks = cap.num_blocks;
  in.block_size = cap.block_size;
  in.max_context = ContextCap(m, cap, o.deploy);
  in.blocks_for_request = [&cap](uint64_t n) { return cap.BlocksForRequest(n); };
  if (cap.config.engine == Engine::kLlamaCpp) {
    // The same fit as capacity --concurrency: n_parallel sequences share the window cells.
    in.fits = [&cap](uint64_t n, uint64_t b) { return cap.FitsAtConcurrency(n, b); };
  }
  std::vector<uint64_t> contexts =
      o.contexts.empty() ? DefaultContexts(in) : ParseList(o.contexts, "--contexts");
  std::vector<uint64_t> batches =
      o.batches.empty() ? DefaultBatches(in) : ParseList(o.batches, "--batches");
  for (uint64_t c : contexts) {
    if (c > in.max_context) {
      Fail("--contexts: {} is longer than max_model_len {} (raise --max-model-len)", WithCommas(c),
           WithCommas(in.max_context));
    }
  }
  Tradeoff t = ComputeTradeoff(in, contexts, batches);
  Chart chart = MakeChart(m, hw, cap, t);
  if (!o.svg.empty()) WriteFileAtomic(o.svg, RenderSvg(chart), o.force);

  switch (ToFormat(o.format)) {
    case Format::kJson: {
      Json j;
      j.Set("model", m.name);
      j.Set("gpu", hw.name);
      SetEngineJson(j, cap);
      j.Set("kv_cache_dtype", cap.kv_cache_dtype);
      j.Set("tp", cap.config.tp);
      j.Set("pp", cap.config.pp);
      j.Set("kv_budget_bytes", cap.kv_budget_bytes);
      j.Set("block_size", cap.block_size);
      j.Set("num_blocks", cap.num_blocks);
      j.Set("max_model_len", cap.max_model_len);  // as capacity reports it
      // The longest context the grids consider: max_model_len but under
      // llama.cpp without --max-model-len, the model's own (ContextCap).
      j.Set("context_limit", in.max_context);
      // llama.cpp has no running cap: the batch is the -np asked about.
      j.Set("max_num_seqs", RunningCapJson(cap));
      Json bc = Json::MakeArray();
      for (const ContextPoint& p : t.by_context) {
        Json r;
        r.Set("context_tokens", p.context);
        r.Set("blocks_per_request", p.blocks_per_request);
        r.Set("max_batch", p.max_batch);
        r.Set("max_running", cap.RunningAtOnce(p.max_batch));
        bc.Push(std::move(r));
      }
      j.Set("by_context", std::move(bc));
      Json bb = Json::MakeArray();
      for (const BatchPoint& p : t.by_batch) {
        Json r;
        r.Set("batch", p.batch);
        r.Set("max_context_tokens", p.max_context);
        r.Set("at_model_limit", p.at_limit);
        r.Set("above_max_num_seqs", Queued(cap, p));
        bb.Push(std::move(r));
      }
      j.Set("by_batch", std::move(bb));
      Print(j.Dump() + "\n");
      break;
    }
    case Format::kCsv: {
      // One table for both grids: a row is (context, batch) on the frontier.
      // max_running: what the scheduler runs of `batch` at once (max-num-seqs).
      Table tab(
          {"model", "gpu", "grid", "context_tokens", "batch", "at_model_limit", "max_running"});
      for (const ContextPoint& p : t.by_context) {
        tab.AddRow(
            {m.name, hw.name, "context", std::to_string(p.context),
             p.max_batch == UINT64_MAX ? "" : std::to_string(p.max_batch), "false",
             p.max_batch == UINT64_MAX ? "" : std::to_string(cap.RunningAtOnce(p.max_batch))});
      }
      for (const BatchPoint& p : t.by_batch) {
        tab.AddRow({m.name, hw.name, "batch", std::to_string(p.max_context),
                    std::to_string(p.batch), p.at_limit ? "true" : "false",
                    p.max_context == 0 ? "" : std::to_string(cap.RunningAtOnce(p.batch))});
      }
      Print(tab.Csv());
      break;
    }
    case Format::kText: {
      std::string out = Header(m, hw, cap, in.max_context) + "\n";
      // Memory's answer, and what the scheduler runs of it: no more than
      // max_num_seqs at once (llama.cpp serves its -np, the batch asked about).
      const bool capped = cap.RunningCap().has_value();
      const std::string running =
          fmt::format("runs at once (max-num-seqs {})", WithCommas(cap.config.max_num_seqs));
      Table bc(capped ? std::vector<std::string>{"context", "blocks each", "max batch", running}
                      : std::vector<std::string>{"context", "blocks each", "max batch"});
      for (const ContextPoint& p : t.by_context) {
        std::vector<std::string> row = {FormatTokens(p.context), WithCommas(p.blocks_per_request),
                                        Count(p.max_batch)};
        if (capped) row.push_back(Count(cap.RunningAtOnce(p.max_batch)));
        bc.AddRow(std::move(row));
      }
      Table bb({"batch", "max context"});
      // The cap is max-model-len: the model's own limit unless one was given.
      const std::string limit =
          in.max_context == m.max_context ? " (model limit)" : " (max-model-len)";
      for (const BatchPoint& p : t.by_batch) {
        bb.AddRow({WithCommas(p.batch) + (Queued(cap, p) ? "*" : ""),
                   p.max_context == 0 ? "does not fit"
                                      : FormatTokens(p.max_context) + (p.at_limit ? limit : "")});
      }
      const bool above = std::any_of(t.by_batch.begin(), t.by_batch.end(),
                                     [&cap](const BatchPoint& p) { return Queued(cap, p); });
      out += "Max batch for each context length:\n" + bc.Text() + "\n";
      out += "Max context for each batch size:\n" + bb.Text();
      if (above) {
        out += fmt::format(
            "* above max-num-seqs {}: fits in memory, but the scheduler runs {} at once and "
            "queues the rest (raise --max-num-seqs)\n",
            WithCommas(cap.config.max_num_seqs), WithCommas(cap.config.max_num_seqs));
      }
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
