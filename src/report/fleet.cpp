// `kvplan fleet`'s text, JSON, CSV, --explain, chart, launch line and
// deployment config (report/fleet.h).
#include "report/fleet.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "report/table.h"
#include "util/units.h"

namespace kvplan {
namespace {

constexpr size_t kAlternatives = 5;

std::string Ms(double s) {
  if (!std::isfinite(s)) return "-";
  return s < 0.01 ? fmt::format("{:.1f} ms", s * 1e3) : fmt::format("{:.0f} ms", s * 1e3);
}

std::string Layout(const FleetPlan& p) {
  std::string shape = fmt::format("tp{}", p.shape.tp);
  if (p.shape.pp > 1) shape += fmt::format(" pp{}", p.shape.pp);
  if (p.disaggregated) {
    return fmt::format("{}P{}D x {}", p.prefill_replicas, p.decode_replicas, shape);
  }
  return fmt::format("{} x {}", p.replicas, shape);
}

std::string Percentile(double p) {
  return fmt::format("p{:g}", p * 100);
}

std::string LoadLine(const FleetQuery& q) {
  const FleetLoad& l = q.load;
  std::string who = l.users > 0 ? fmt::format("{} concurrent users", WithCommas(l.users))
                                : fmt::format("{:g} requests/s", l.rate);
  std::string s = fmt::format("{}, {:.0f} prompt + {:.0f} output tokens (max-model-len {})", who,
                              l.prompt, l.output, FormatTokens(l.max_len));
  if (l.shared_prefix > 0) s += fmt::format(", {} shared", FormatTokens(l.shared_prefix));
  return s;
}

std::string TargetLine(const FleetQuery& q) {
  const FleetTargets& t = q.targets;
  std::vector<std::string> parts;
  if (t.ttft_s > 0)
    parts.push_back(fmt::format("TTFT {} at {}", Ms(t.ttft_s), Percentile(t.percentile)));
  if (t.tpot_s > 0) parts.push_back(fmt::format("TPOT {}", Ms(t.tpot_s)));
  parts.push_back(fmt::format("utilisation <= {:g}", t.max_utilisation));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string Money(double usd) {
  return usd > 0 ? fmt::format("${:.2f}", usd) : "-";
}

Table PlanTable(const std::vector<const FleetPlan*>& plans, bool priced) {
  Table t({"", "GPUs", "layout", "weights", "cache", "seqs", "TTFT", "TPOT", "tok/s/GPU",
           "tok/s/user", "$/h", "$/Mtok", "limit"});
  t.SetAlign(3, Table::Align::kLeft);
  t.SetAlign(4, Table::Align::kLeft);
  t.SetAlign(12, Table::Align::kLeft);
  // Left out first when the terminal is narrow: limit, weights, $/Mtok,
  // cache, seqs, tok/s/user (prices go first of all when none is given).
  for (auto [column, order] :
       {std::pair<size_t, int>{12, 1}, {3, 2}, {11, 3}, {4, 4}, {5, 5}, {9, 6}}) {
    t.SetDropOrder(column, order);
  }
  if (!priced) {
    t.SetDropOrder(10, 9);
    t.SetDropOrder(11, 9);
  }
  for (size_t i = 0; i < plans.size(); ++i) {
    const FleetPlan& p = *plans[i];
    t.AddRow({i == 0 ? "best" : fmt::format("{}", i + 1), fmt::format("{} x {}", p.gpus, p.gpu),
              Layout(p), p.weight_dtype, p.kv_dtype, WithCommas(p.max_num_seqs), Ms(p.ttft_s),
              Ms(p.tpot_s), fmt::format("{:.0f}", p.tokens_per_s_per_gpu),
              fmt::format("{:.1f}", p.tokens_per_s_per_user), Money(p.usd_per_hour),
              Money(p.usd_per_million_tokens), p.limit});
  }
  return t;
}

// The plans shown: the best, then the next of other families.
std::vector<const FleetPlan*> Shown(const FleetResult& r) {
  std::vector<const FleetPlan*> out;
  for (const FleetPlan& p : r.plans) {
    if (out.size() > kAlternatives) break;
    out.push_back(&p);
  }
  return out;
}

std::string Quote(const std::string& s) {
  return s.find_first_of(" '\"$") == std::string::npos ? s : "'" + s + "'";
}

// The cache dtype as the engine's flag takes it ("" under auto): SGLang
// names the fp8 format (fp8_e4m3), vLLM and TensorRT-LLM take what was asked.
std::string CacheFlag(Engine e, const FleetPlan& p) {
  if (p.kv_flag.empty() || p.kv_flag == "auto") return "";
  return e == Engine::kSglang ? p.kv_dtype : p.kv_flag;
}

// Weights the engine quantizes at load: only fp8 (vLLM's and SGLang's
// --quantization fp8); other formats need a quantized checkpoint.
bool OnlineQuantization(Engine e, const FleetPlan& p) {
  return p.weight_flag == "fp8" && e != Engine::kTrtllm;
}

}  // namespace

std::string FleetLaunchLine(const FleetQuery& q, const FleetPlan& p) {
  const std::string cache = CacheFlag(q.engine, p);
  const bool quant = OnlineQuantization(q.engine, p);
  const std::string model = Quote(q.serve.empty() ? q.model : q.serve);
  std::string s;
  switch (q.engine) {
    case Engine::kSglang:
      s = fmt::format("python -m sglang.launch_server --model-path {} --tp {}", model, p.shape.tp);
      if (p.shape.pp > 1) s += fmt::format(" --pp-size {}", p.shape.pp);
      s += fmt::format(" --context-length {} --max-running-requests {}", q.load.max_len,
                       p.max_num_seqs);
      if (!cache.empty()) s += " --kv-cache-dtype " + cache;
      if (quant) s += " --quantization " + p.weight_flag;
      break;
    case Engine::kTrtllm:
      s = fmt::format("trtllm-serve {} --tp_size {}", model, p.shape.tp);
      if (p.shape.pp > 1) s += fmt::format(" --pp_size {}", p.shape.pp);
      s += fmt::format(" --max_seq_len {} --max_batch_size {}", q.load.max_len, p.max_num_seqs);
      break;
    default:
      s = fmt::format("vllm serve {} --tensor-parallel-size {}", model, p.shape.tp);
      if (p.shape.pp > 1) s += fmt::format(" --pipeline-parallel-size {}", p.shape.pp);
      s += fmt::format(" --max-model-len {} --max-num-seqs {}", q.load.max_len, p.max_num_seqs);
      if (!cache.empty()) s += " --kv-cache-dtype " + cache;
      if (quant) s += " --quantization " + p.weight_flag;
      if (q.load.shared_prefix > 0) s += " --enable-prefix-caching";
      break;
  }
  return s;
}

std::string FleetDeployConfig(const FleetQuery& q, const FleetPlan& p) {
  const std::string cache = CacheFlag(q.engine, p);
  std::string tp = "tensor_parallel_size", pp = "pipeline_parallel_size", len = "max_model_len",
              seqs = "max_num_seqs";
  if (q.engine == Engine::kSglang) {
    tp = "tp_size", pp = "pp_size", len = "context_length", seqs = "max_running_requests";
  } else if (q.engine == Engine::kTrtllm) {
    tp = "tp_size", pp = "pp_size", len = "max_seq_len", seqs = "max_batch_size";
  }
  std::string s = fmt::format(
      "# One replica of kvplan fleet's plan: {} of {}.\nname: fleet\nmodel: {}\nhardware:\n"
      "  gpu: {}\n  count: {}\nengine:\n  name: {}\n  args:\n    {}: {}\n",
      p.disaggregated ? "a decode replica" : "one replica", Layout(p), q.model, p.gpu,
      p.shape.tp * p.shape.pp, EngineName(q.engine), tp, p.shape.tp);
  if (p.shape.pp > 1) s += fmt::format("    {}: {}\n", pp, p.shape.pp);
  s += fmt::format("    {}: {}\n    {}: {}\n", len, q.load.max_len, seqs, p.max_num_seqs);
  if (!cache.empty()) s += fmt::format("    kv_cache_dtype: {}\n", cache);
  if (OnlineQuantization(q.engine, p)) s += fmt::format("    quantization: {}\n", p.weight_flag);
  // The requests the plan holds, in requests of max-model-len.
  const double mean = q.load.prompt + q.load.output;
  const auto held = static_cast<uint64_t>(
      std::max(1.0, std::floor(p.batch * mean / static_cast<double>(q.load.max_len))));
  s += fmt::format("requirements:\n  min_concurrency: {}\n", held);
  // The targets under this replica's share of the load (aggregated serving,
  // what check models), so CI gates the latency too; check has no shared
  // prefix in its serving model, so a plan that counts one leaves it out.
  const FleetTargets& t = q.targets;
  if (!p.disaggregated && q.load.shared_prefix == 0 && (t.ttft_s > 0 || t.tpot_s > 0)) {
    const double replicas = static_cast<double>(p.replicas);
    s += "  serving:\n";
    if (q.load.users > 0) {
      s += fmt::format(
          "    users: {}\n",
          std::max<uint64_t>(
              1, static_cast<uint64_t>(std::floor(static_cast<double>(q.load.users) / replicas))));
    } else {
      s += fmt::format("    rate: {:.6g}\n", p.rate / replicas);
    }
    s += fmt::format("    prompt: {:.0f}\n    output: {:.0f}\n    percentile: p{:g}\n",
                     q.load.prompt, q.load.output, t.percentile * 100);
    if (t.ttft_s > 0) s += fmt::format("    max_ttft_ms: {:g}\n", t.ttft_s * 1e3);
    if (t.tpot_s > 0) s += fmt::format("    max_tpot_ms: {:g}\n", t.tpot_s * 1e3);
  }
  return s;
}

std::string FleetText(const FleetQuery& q, const FleetResult& r, size_t width) {
  std::string out =
      fmt::format("{} · {} · {}\nload: {}\ntargets: {}\n\n", q.model, EngineName(q.engine),
                  r.priced ? "cheapest by $/hour" : "fewest GPUs", LoadLine(q), TargetLine(q));
  if (r.plans.empty()) {
    out += "no plan meets the targets.\n";
    const FleetTargets& t = q.targets;
    if (t.tpot_s > 0 && r.best_tpot_s > t.tpot_s) {
      out += fmt::format(
          "  TPOT {} is below the weight-read floor of {} even on {}: needs a faster GPU or "
          "quantized weights\n",
          Ms(t.tpot_s), Ms(r.best_tpot_s), r.best_tpot_family);
    }
    if (t.ttft_s > 0 && r.best_ttft_s > t.ttft_s) {
      out += fmt::format(
          "  TTFT {} is below one prompt's prefill of {} even on {}: needs more compute per "
          "replica or shorter prompts\n",
          Ms(t.ttft_s), Ms(r.best_ttft_s), r.best_ttft_family);
    }
    if (!r.best_tpot_family.empty()) {
      out += fmt::format("  fastest TPOT any layout reaches: {} ({}, batch 1)\n", Ms(r.best_tpot_s),
                         r.best_tpot_family);
      out += fmt::format("  fastest prefill: {} ({})\n", Ms(r.best_ttft_s), r.best_ttft_family);
    }
  } else {
    const FleetPlan& b = r.plans.front();
    out += fmt::format("best: {} x {} ({}), {} cache, {} weights; TTFT {} ({}), TPOT {}", b.gpus,
                       b.gpu, Layout(b), b.kv_dtype, b.weight_dtype, Ms(b.ttft_s),
                       Percentile(q.targets.percentile), Ms(b.tpot_s));
    if (b.usd_per_hour > 0) {
      out += fmt::format(", ${:.2f}/hour, ${:.3f} per million output tokens", b.usd_per_hour,
                         b.usd_per_million_tokens);
    }
    out += "\n";
    if (b.disaggregated) {
      out += fmt::format("  each request's cache moves once: {} in {}\n",
                         FormatBoth(static_cast<uint64_t>(b.transfer_bytes)), Ms(b.transfer_s));
    }
    out += "  launch (each replica): " + FleetLaunchLine(q, b) + "\n";
    if (!b.weight_flag.empty() && !OnlineQuantization(q.engine, b)) {
      out += fmt::format(
          "  ({} weights: serve a checkpoint quantized to {}; the engine does not "
          "quantize to it at load)\n",
          b.weight_dtype, b.weight_dtype);
    }
    out += "\n";
    out += PlanTable(Shown(r), r.priced).Text("  ", width);
  }
  if (!r.pareto.empty()) {
    // The frontier, thinned to at most 8 rows: one replica at a batch.
    out += "\nthroughput against speed per user (the frontier over every layout):\n";
    Table f({"family", "batch", "tok/s/GPU", "tok/s/user"});
    f.SetAlign(0, Table::Align::kLeft);
    const size_t n = r.pareto.size(), step = (n + 7) / 8;
    for (size_t i = 0; i < n; i += step) {
      const FleetPoint& p = r.pareto[i];
      f.AddRow({p.family, WithCommas(p.batch), fmt::format("{:.0f}", p.tokens_per_s_per_gpu),
                fmt::format("{:.1f}", p.tokens_per_s_per_user)});
    }
    out += f.Text("  ", width);
  }
  if (!r.rejected.empty()) {
    out += "\nruled out:\n";
    Table t({"family", "bound", "why"});
    t.SetAlign(1, Table::Align::kLeft);
    t.SetAlign(2, Table::Align::kLeft);
    for (const FleetRejection& x : r.rejected) t.AddRow({x.family, x.bound, x.reason});
    out += t.Text("  ", width);
  }
  return out;
}

Json FleetJson(const FleetQuery& q, const FleetResult& r) {
  Json j;
  j.Set("model", q.model);
  j.Set("engine", std::string(EngineName(q.engine)));
  Json load;
  if (q.load.users > 0) load.Set("users", q.load.users);
  if (q.load.rate > 0) load.Set("rate_rps", q.load.rate);
  load.Set("mean_prompt_tokens", q.load.prompt);
  load.Set("mean_output_tokens", q.load.output);
  load.Set("max_model_len", q.load.max_len);
  load.Set("shared_prefix_tokens", q.load.shared_prefix);
  j.Set("load", load);
  Json t;
  t.Set("ttft_ms", q.targets.ttft_s > 0 ? Json(q.targets.ttft_s * 1e3) : Json(nullptr));
  t.Set("tpot_ms", q.targets.tpot_s > 0 ? Json(q.targets.tpot_s * 1e3) : Json(nullptr));
  t.Set("percentile", q.targets.percentile * 100);
  t.Set("max_utilisation", q.targets.max_utilisation);
  j.Set("targets", t);
  j.Set("ordered_by", r.priced ? "usd_per_hour" : "gpus");
  Json plans = Json::MakeArray();
  for (const FleetPlan& p : r.plans) {
    Json x;
    x.Set("gpu", p.gpu);
    x.Set("gpus", p.gpus);
    x.Set("nodes", p.nodes);
    x.Set("mode", p.disaggregated ? "disaggregated" : "aggregated");
    x.Set("tp", p.shape.tp);
    x.Set("pp", p.shape.pp);
    x.Set("replicas", p.replicas);
    if (p.disaggregated) {
      x.Set("prefill_replicas", p.prefill_replicas);
      x.Set("decode_replicas", p.decode_replicas);
      x.Set("transfer_bytes", static_cast<uint64_t>(p.transfer_bytes));
      x.Set("transfer_ms", p.transfer_s * 1e3);
    }
    x.Set("weight_dtype", p.weight_dtype);
    x.Set("kv_cache_dtype", p.kv_dtype);
    x.Set("max_num_seqs", p.max_num_seqs);
    x.Set("cache_requests", p.mem_requests);
    x.Set("rate_rps", p.rate);
    x.Set("decode_batch", p.batch);
    x.Set("ttft_ms", p.ttft_s * 1e3);
    x.Set("tpot_ms", p.tpot_s * 1e3);
    x.Set("utilisation", p.utilisation);
    x.Set("output_tokens_per_s_per_gpu", p.tokens_per_s_per_gpu);
    x.Set("output_tokens_per_s_per_user", p.tokens_per_s_per_user);
    x.Set("usd_per_hour", p.usd_per_hour);
    x.Set("usd_per_million_output_tokens", p.usd_per_million_tokens);
    x.Set("limit", p.limit);
    x.Set("launch", FleetLaunchLine(q, p));
    plans.Push(x);
  }
  j.Set("plans", plans);
  Json rej = Json::MakeArray();
  for (const FleetRejection& x : r.rejected) {
    Json o;
    o.Set("family", x.family);
    o.Set("bound", x.bound);
    o.Set("reason", x.reason);
    rej.Push(o);
  }
  j.Set("rejected", rej);
  Json front = Json::MakeArray();
  for (const FleetPoint& p : r.pareto) {
    Json o;
    o.Set("family", p.family);
    o.Set("batch", p.batch);
    o.Set("output_tokens_per_s_per_gpu", p.tokens_per_s_per_gpu);
    o.Set("output_tokens_per_s_per_user", p.tokens_per_s_per_user);
    front.Push(o);
  }
  j.Set("pareto", front);
  j.Set("best_tpot_ms", r.best_tpot_s * 1e3);
  j.Set("best_prefill_ms", r.best_ttft_s * 1e3);
  return j;
}

std::string FleetCsv(const FleetResult& r) {
  Table t({"gpu", "gpus", "mode", "tp", "pp", "replicas", "prefill_replicas", "decode_replicas",
           "weight_dtype", "kv_cache_dtype", "max_num_seqs", "rate_rps", "ttft_ms", "tpot_ms",
           "output_tokens_per_s_per_gpu", "output_tokens_per_s_per_user", "usd_per_hour",
           "usd_per_million_output_tokens", "limit"});
  for (const FleetPlan& p : r.plans) {
    t.AddRow({p.gpu, fmt::format("{}", p.gpus), p.disaggregated ? "disaggregated" : "aggregated",
              fmt::format("{}", p.shape.tp), fmt::format("{}", p.shape.pp),
              fmt::format("{}", p.replicas), fmt::format("{}", p.prefill_replicas),
              fmt::format("{}", p.decode_replicas), p.weight_dtype, p.kv_dtype,
              fmt::format("{}", p.max_num_seqs), fmt::format("{:.4g}", p.rate),
              fmt::format("{:.1f}", p.ttft_s * 1e3), fmt::format("{:.2f}", p.tpot_s * 1e3),
              fmt::format("{:.1f}", p.tokens_per_s_per_gpu),
              fmt::format("{:.2f}", p.tokens_per_s_per_user), fmt::format("{:.2f}", p.usd_per_hour),
              fmt::format("{:.4f}", p.usd_per_million_tokens), p.limit});
  }
  return t.Csv();
}

Chart FleetChart(const FleetResult& r) {
  Chart c;
  c.title = "Throughput against speed per user (the frontier over every layout)";
  c.x.title = "output tokens/s per user";
  c.y.title = "output tokens/s per GPU";
  ChartSeries s;
  s.name = "frontier";
  for (const FleetPoint& p : r.pareto)
    s.points.push_back({p.tokens_per_s_per_user, p.tokens_per_s_per_gpu});
  c.series.push_back(s);
  return c;
}

std::string FleetExplain(const FleetQuery& q, const FleetResult& r) {
  if (r.plans.empty()) return "";
  const FleetPlan& p = r.plans.front();
  const FleetLoad& l = q.load;
  std::string s = "How the plan is reached (docs/fleet.md):\n";
  s += fmt::format(
      "1. Memory: one {}-GPU replica's cache (the engine's own budget at max-model-len {}) holds "
      "{} requests of {:.0f} tokens.\n",
      p.shape.tp * p.shape.pp, FormatTokens(l.max_len), WithCommas(p.mem_requests),
      l.prompt + l.output);
  s += fmt::format(
      "2. Decode: at {:.1f} requests decoding a step takes {} (weights and cache read per step, "
      "plus {} all-reduces of batch x hidden x 2 bytes when tp > 1).\n",
      p.batch, Ms(p.tpot_s), p.shape.tp > 1 ? "two" : "no");
  const double per_replica =
      p.rate / static_cast<double>(p.disaggregated ? p.decode_replicas : p.replicas);
  s += fmt::format(
      "3. Little's law: {:.3g} requests/s a replica x ({} to first token + {:.0f} tokens x {}) = "
      "{} requests held (max_num_seqs).\n",
      per_replica, Ms(p.ttft_s), l.output, Ms(p.tpot_s), WithCommas(p.max_num_seqs));
  s += fmt::format(
      "4. Queueing: TTFT {} at {} is the prefill plus an M/M/1 wait for the prefill queue; "
      "utilisation {:.2f} of the replica's saturated rate (ceiling {:g}).\n",
      Ms(p.ttft_s), Percentile(q.targets.percentile), p.utilisation, q.targets.max_utilisation);
  s += fmt::format(
      "5. Replicas: {} ({}), {} GPUs; {:.0f} output tokens/s per GPU, {:.1f} per user. What caps "
      "a replica: {}.\n",
      p.replicas, Layout(p), p.gpus, p.tokens_per_s_per_gpu, p.tokens_per_s_per_user, p.limit);
  return s;
}

}  // namespace kvplan
