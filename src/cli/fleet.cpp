// kvplan fleet: how many GPUs, of which kind, in which layout, for a load
// (a request rate or concurrent users, with prompt and output lengths)
// under TTFT/TPOT targets at a percentile. The search is plan/fleet.h; the
// output report/fleet.h.
#include "plan/fleet.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "cli/commands.h"
#include "cli/model_route.h"
#include "import/resolve.h"
#include "report/chart.h"
#include "report/fleet.h"
#include "report/svg.h"
#include "spec/cache_dtype.h"
#include "spec/request_mix_reader.h"
#include "spec/weight_format.h"
#include "util/atomic_file.h"
#include "util/units.h"

namespace kvplan {
namespace {

struct FleetOptionsCli {
  std::string model;
  std::string revision = "main";
  std::string gpus;
  std::string users, rate;
  std::string prompt, output, mix, requests;
  std::string max_model_len, shared_prefix;
  std::string ttft, tpot;
  std::string percentile = "p90";
  std::string engine = "vllm";
  std::vector<std::string> prices;
  std::string weight_dtypes, kv_dtypes = "auto";
  std::string mode = "both";
  double max_utilisation = 0.8;
  uint64_t max_gpus = 4096;
  std::string format = "text";
  bool explain = false, plot = false, force = false;
  std::string svg;
};

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const std::string item = s.substr(start, comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// --price GPU=USD_PER_HOUR, one per GPU named in --gpu.
std::map<std::string, double> ParsePrices(const std::vector<std::string>& prices,
                                          const std::vector<std::string>& gpus) {
  std::map<std::string, double> out;
  for (const std::string& p : prices) {
    const size_t eq = p.find('=');
    if (eq == std::string::npos) Fail("--price: '{}': expected GPU=USD_PER_HOUR (h100-sxm=2.5)", p);
    const std::string gpu = p.substr(0, eq);
    if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end()) {
      Fail("--price: '{}' is not one of the --gpu types ({})", gpu, fmt::join(gpus, ", "));
    }
    if (out.count(gpu) != 0) Fail("--price {}: given twice", gpu);
    const double usd = ParseReal(p.substr(eq + 1), "--price " + gpu);
    if (usd <= 0 || usd > 1e4) Fail("--price {}: expected dollars per GPU-hour, got {}", gpu, usd);
    out[gpu] = usd;
  }
  return out;
}

FleetLoad ReadLoad(const FleetOptionsCli& o) {
  FleetLoad l;
  if (o.users.empty() == o.rate.empty()) {
    Fail("fleet: give exactly one of --users N (concurrent users) or --rate R (requests/s)");
  }
  if (!o.users.empty()) {
    l.users = ParsePythonInt(o.users, "--users");
    if (l.users == 0 || l.users > 10'000'000) Fail("--users: expected 1 to 10,000,000");
  } else {
    l.rate = ParseReal(o.rate, "--rate");
    if (l.rate <= 0 || l.rate > 1e7) Fail("--rate: expected requests/s above 0, got '{}'", o.rate);
  }
  const int ways = !o.prompt.empty() + !o.mix.empty() + !o.requests.empty();
  if (ways != 1 || o.prompt.empty() != o.output.empty()) {
    Fail(
        "fleet: give the request lengths one way: --prompt P --output O, --mix SPEC or "
        "--requests FILE");
  }
  uint64_t longest = 0;
  if (!o.prompt.empty()) {
    const uint64_t prompt = ParseTokens(o.prompt, "--prompt");
    const uint64_t output = ParseTokens(o.output, "--output");
    CheckContextTokens(prompt, "--prompt");
    CheckContextTokens(output, "--output");
    l.prompt = static_cast<double>(prompt);
    l.output = static_cast<double>(output);
    if (l.prompt <= 0 || l.output <= 0) Fail("--prompt and --output: at least 1 token each");
    longest = static_cast<uint64_t>(l.prompt + l.output);
  } else {
    const RequestMix mix = o.mix.empty() ? LoadRequestMix(o.requests) : MixFromSpec(o.mix);
    const MixStats st = ComputeMixStats(mix);
    l.prompt = st.mean_prompt;
    l.output = std::max(1.0, st.mean_output);
    longest = st.max_tokens;
  }
  l.max_len = o.max_model_len.empty() ? longest : ParseTokens(o.max_model_len, "--max-model-len");
  CheckContextTokens(l.max_len, "--max-model-len");
  if (l.max_len < longest) {
    Fail("--max-model-len {}: shorter than the longest request ({} tokens)", l.max_len, longest);
  }
  if (!o.shared_prefix.empty()) {
    l.shared_prefix = ParseTokens(o.shared_prefix, "--shared-prefix");
    if (static_cast<double>(l.shared_prefix) >= l.prompt) {
      Fail("--shared-prefix {}: must be shorter than the mean prompt ({:.0f})", l.shared_prefix,
           l.prompt);
    }
  }
  return l;
}

int Run(const FleetOptionsCli& o) {
  if (!o.svg.empty()) CheckOutputPath(o.svg, o.force);
  FleetQuery q;
  q.model = o.model;
  q.engine = ParseEngine(o.engine);
  if (q.engine == Engine::kLlamaCpp) Fail("fleet: plans vLLM, SGLang and TensorRT-LLM fleets");
  q.load = ReadLoad(o);
  if (!o.ttft.empty()) q.targets.ttft_s = ParseSeconds(o.ttft, "--ttft");
  if (!o.tpot.empty()) q.targets.tpot_s = ParseSeconds(o.tpot, "--tpot");
  q.targets.percentile = ParsePercentile(o.percentile, "--percentile");
  if (!(o.max_utilisation > 0 && o.max_utilisation <= 1)) {
    Fail("--max-utilisation: expected a fraction in (0, 1], got {:g}", o.max_utilisation);
  }
  q.targets.max_utilisation = o.max_utilisation;
  const std::vector<std::string> names = SplitList(o.gpus);
  if (names.empty()) Fail("--gpu: name at least one GPU type (kvplan gpus lists them)");
  for (size_t i = 0; i < names.size(); ++i) {
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) !=
        names.begin() + static_cast<std::ptrdiff_t>(i)) {
      Fail("--gpu: {} named twice", names[i]);
    }
  }
  if (o.max_gpus == 0) Fail("--max-gpus: must be at least 1");
  const std::map<std::string, double> prices = ParsePrices(o.prices, names);
  std::vector<FleetGpu> gpus;
  for (const std::string& n : names) {
    FleetGpu g{LoadHardware(n), 0};
    if (auto it = prices.find(n); it != prices.end()) g.usd_per_hour = it->second;
    gpus.push_back(std::move(g));
  }
  FleetOptions opt;
  opt.engine = q.engine;
  opt.kv_dtypes = SplitList(o.kv_dtypes);
  if (opt.kv_dtypes.empty()) opt.kv_dtypes = {"auto"};
  opt.weight_dtypes = SplitList(o.weight_dtypes);
  if (opt.weight_dtypes.empty()) opt.weight_dtypes = {""};
  // Names checked before the search, so a typo is one error, not a
  // memory rejection of every family.
  try {
    for (const std::string& k : opt.kv_dtypes) {
      if (k != "auto") FindCacheDtype(k);
    }
  } catch (const Error& e) {
    Fail("--kv-cache-dtype: {}", e.what());
  }
  try {
    for (std::string& w : opt.weight_dtypes) {
      if (w == "checkpoint") w.clear();
      if (!w.empty()) FindWeightFormat(w);
    }
  } catch (const Error& e) {
    Fail("--weight-dtype: {}", e.what());
  }
  opt.disaggregated = o.mode != "aggregated";
  opt.max_gpus = o.max_gpus;
  const ModelSpec model = LoadModelAndSay(o.model, o.revision);
  q.serve = model.hf_repo;
  FleetResult r = PlanFleet(model, gpus, q.load, q.targets, opt);
  if (o.mode == "disaggregated") {
    std::erase_if(r.plans, [](const FleetPlan& p) { return !p.disaggregated; });
  }
  if (!o.svg.empty()) WriteFileAtomic(o.svg, RenderSvg(FleetChart(r)), o.force);
  switch (ToFormat(o.format)) {
    case Format::kJson:
      Print(FleetJson(q, r).Dump() + "\n");
      break;
    case Format::kCsv:
      Print(FleetCsv(r));
      break;
    case Format::kText: {
      std::string out = FleetText(q, r, OutputWidth());
      if (!r.plans.empty()) {
        out += "\ndeployment config for `kvplan check` (one replica):\n";
        out += FleetDeployConfig(q, r.plans.front());
      }
      if (o.explain) out += "\n" + FleetExplain(q, r);
      if (o.plot && !r.pareto.empty()) out += "\n" + RenderTerminalChart(FleetChart(r));
      if (!o.svg.empty()) out += fmt::format("\nwrote {}\n", o.svg);
      Print(out);
      break;
    }
  }
  return r.plans.empty() ? 1 : 0;
}

}  // namespace

void SetupFleetCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<FleetOptionsCli>();
  CLI::App* sub = app.add_subcommand(
      "fleet", "How many GPUs, of which kind and layout, for a load under TTFT/TPOT targets");
  sub->add_option("model", o->model, "Catalog name, HF repo id, spec YAML or config.json")
      ->required();
  AddRevisionOption(sub, o->revision);
  sub->add_option("--gpu", o->gpus, "GPU types to weigh, comma-separated (h100-sxm,h200,l40s)")
      ->required();
  sub->add_option("--users", o->users, "Concurrent users, each with one request in flight");
  sub->add_option("--rate", o->rate, "Requests per second (Poisson arrivals)");
  sub->add_option("--prompt", o->prompt, "Prompt tokens per request (with --output)");
  sub->add_option("--output", o->output, "Output tokens per request (with --prompt)");
  sub->add_option("--mix", o->mix, "Request-length distribution (docs/request-mix.md)");
  sub->add_option("--requests", o->requests, "Request mix file: CSV or JSONL");
  sub->add_option("--max-model-len", o->max_model_len,
                  "The engine's max-model-len (default: the longest request)");
  sub->add_option("--shared-prefix", o->shared_prefix,
                  "Prompt tokens every request shares (prefix caching on)");
  sub->add_option("--ttft", o->ttft, "Time to first token target, with its unit (500ms, 2s)");
  sub->add_option("--tpot", o->tpot, "Time per output token target (50ms)");
  sub->add_option("--percentile", o->percentile, "The TTFT percentile: p50, p90, p95, p99")
      ->capture_default_str();
  sub->add_option("--engine", o->engine, "vllm, sglang or trtllm")->capture_default_str();
  sub->add_option("--price", o->prices, "GPU=USD per GPU-hour, one per GPU type (h100-sxm=2.99)");
  sub->add_option("--weight-dtype", o->weight_dtypes,
                  "Weight formats to weigh, comma-separated (checkpoint,fp8,int4)");
  sub->add_option("--kv-cache-dtype", o->kv_dtypes, "Cache dtypes to weigh (auto,fp8)")
      ->capture_default_str();
  sub->add_option("--mode", o->mode, "aggregated, disaggregated or both")
      ->check(CLI::IsMember({"aggregated", "disaggregated", "both"}))
      ->capture_default_str();
  sub->add_option("--max-utilisation", o->max_utilisation,
                  "Ceiling on a replica's load, of its saturated rate")
      ->capture_default_str();
  sub->add_option("--max-gpus", o->max_gpus, "Largest fleet to consider")->capture_default_str();
  AddFormatOption(sub, o->format);
  sub->add_flag("--explain", o->explain, "Walk through the arithmetic of the chosen plan");
  sub->add_flag("--plot", o->plot, "Chart the throughput-latency frontier in the terminal");
  sub->add_option("--svg", o->svg, "Also write the frontier chart as SVG to FILE");
  sub->add_flag("--force", o->force, "Overwrite the --svg file if it exists");
  sub->footer(R"(Examples:
  kvplan fleet llama-3.1-70b --gpu h100-sxm,h200 --users 200 --prompt 2K --output 500 \
      --kv-cache-dtype auto,fp8
  kvplan fleet llama-3.1-8b --gpu h100-sxm,l40s --rate 1000 --prompt 2000 --output 500 \
      --ttft 500ms --tpot 50ms --percentile p90 --price h100-sxm=2.99 --price l40s=0.99
  kvplan fleet qwen3-32b --gpu h200 --rate 20 --mix "uniform:prompt=500..4000,output=100..800" \
      --tpot 30ms --format json
Exit 0 with a plan, 1 when none meets the targets (the fastest reachable TTFT
and TPOT are printed), 2 for bad input. The model: docs/fleet.md.)");
  sub->callback([o, &exit_code] { exit_code = Run(*o); });
}

}  // namespace kvplan
