#include "report/tradeoff.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "report/capacity.h"
#include "report/table.h"
#include "report/terminal.h"
#include "util/units.h"

namespace kvplan {
namespace {

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

// Max batch for each context length. Memory's answer, and what the scheduler
// runs of it: no more than max_num_seqs at once (llama.cpp serves its -np,
// the batch asked about).
Table ByContextTable(const CapacityResult& cap, const Tradeoff& t) {
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
  return bc;
}

// Max context for each batch size; a batch above max-num-seqs is starred.
Table ByBatchTable(const ModelSpec& m, const CapacityResult& cap, uint64_t max_context,
                   const Tradeoff& t) {
  Table bb({"batch", "max context"});
  // The cap is max-model-len: the model's own limit unless one was given.
  const std::string limit = max_context == m.max_context ? " (model limit)" : " (max-model-len)";
  for (const BatchPoint& p : t.by_batch) {
    bb.AddRow({WithCommas(p.batch) + (Queued(cap, p) ? "*" : ""),
               p.max_context == 0 ? "does not fit"
                                  : FormatTokens(p.max_context) + (p.at_limit ? limit : "")});
  }
  return bb;
}

}  // namespace

Chart TradeoffChart(const ModelSpec& m, const HardwareSpec& hw, const CapacityResult& cap,
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

std::string TradeoffText(const ModelSpec& m, const HardwareSpec& hw, const CapacityResult& cap,
                         uint64_t max_context, const Tradeoff& t, size_t width) {
  std::string out = Header(m, hw, cap, max_context) + "\n";
  const Table bc = ByContextTable(cap, t);
  const Table bb = ByBatchTable(m, cap, max_context, t);
  const bool above = std::any_of(t.by_batch.begin(), t.by_batch.end(),
                                 [&cap](const BatchPoint& p) { return Queued(cap, p); });
  out += "Max batch for each context length:\n" + bc.Text("  ", width) + "\n";
  out += "Max context for each batch size:\n" + bb.Text("  ", width);
  if (above) {
    out += fmt::format(
        "* above max-num-seqs {}: fits in memory, but the scheduler runs {} at once and "
        "queues the rest (raise --max-num-seqs)\n",
        WithCommas(cap.config.max_num_seqs), WithCommas(cap.config.max_num_seqs));
  }
  return width == 0 ? out : WrapText(out, width);
}

Json TradeoffJson(const ModelSpec& m, const HardwareSpec& hw, const CapacityResult& cap,
                  uint64_t max_context, const Tradeoff& t) {
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
  // llama.cpp without --max-model-len, the model's own (TradeoffContextCap).
  j.Set("context_limit", max_context);
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
  return j;
}

std::string TradeoffCsv(const ModelSpec& m, const HardwareSpec& hw, const CapacityResult& cap,
                        const Tradeoff& t) {
  // max_running: what the scheduler runs of `batch` at once (max-num-seqs).
  Table tab({"model", "gpu", "grid", "context_tokens", "batch", "at_model_limit", "max_running"});
  for (const ContextPoint& p : t.by_context) {
    tab.AddRow({m.name, hw.name, "context", std::to_string(p.context),
                p.max_batch == UINT64_MAX ? "" : std::to_string(p.max_batch), "false",
                p.max_batch == UINT64_MAX ? "" : std::to_string(cap.RunningAtOnce(p.max_batch))});
  }
  for (const BatchPoint& p : t.by_batch) {
    tab.AddRow({m.name, hw.name, "batch", std::to_string(p.max_context), std::to_string(p.batch),
                p.at_limit ? "true" : "false",
                p.max_context == 0 ? "" : std::to_string(cap.RunningAtOnce(p.batch))});
  }
  return tab.Csv();
}

}  // namespace kvplan
