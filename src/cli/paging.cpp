// kvplan paging: a request mix (a CSV/JSONL file or a distribution) on a
// deployment's KV budget, held three ways: contiguous reservation at
// max-model-len (the naive server), paged blocks, and paged blocks with a
// shared prompt prefix stored once. Concurrency and wasted memory for each.
#include "plan/paging.h"

#include <fmt/format.h>

#include <algorithm>

#include "cli/commands.h"
#include "cli/deploy_flags.h"
#include "report/json.h"
#include "report/table.h"
#include "spec/catalog.h"
#include "spec/request_mix_reader.h"
#include "util/units.h"

namespace kvplan {
namespace {

struct PagingOptions {
  std::string model;
  DeployFlags deploy;
  std::string requests;
  std::string mix;
  bool prefix_caching = false;
  std::string shared_prefix;
  std::string format = "text";
};

std::string Count(uint64_t v) {
  return v == UINT64_MAX ? "unbounded" : WithCommas(v);
}

Json AllocationJson(const AllocationResult& a, const CapacityResult& cap) {
  Json j;
  j.Set("concurrency", a.concurrency);
  j.Set("max_running", cap.RunningAtOnce(a.concurrency));
  j.Set("mean_request_bytes", a.mean_request_bytes);
  j.Set("allocated_bytes", a.allocated_bytes);
  j.Set("used_bytes", a.used_bytes);
  j.Set("waste_percent", a.WastePercent());
  j.Set("whole_mix_fits", a.whole_mix_fits);
  return j;
}

void Run(const PagingOptions& o) {
  if (o.requests.empty() == o.mix.empty()) {
    Fail(
        "paging: give exactly one of --requests FILE (CSV/JSONL) or --mix SPEC "
        "(e.g. --mix uniform:prompt=100..2000,output=50..500)");
  }
  uint64_t shared_prefix = 0;
  if (!o.shared_prefix.empty()) {
    shared_prefix = ParseTokens(o.shared_prefix, "--shared-prefix");
    if (!o.prefix_caching) {
      Fail(
          "--shared-prefix: needs --enable-prefix-caching (engines share prefix blocks only with "
          "prefix caching on)");
    }
  }
  RequestMix mix = o.requests.empty() ? MixFromSpec(o.mix) : LoadRequestMix(o.requests);
  if (shared_prefix > 0) {
    // Every prompt starts with the prefix, so none is shorter than it.
    uint64_t shortest = UINT64_MAX;
    for (const Request& q : mix.requests) shortest = std::min(shortest, q.prompt_tokens);
    if (shortest != UINT64_MAX && shared_prefix > shortest) {
      Fail(
          "--shared-prefix: {} tokens is longer than the shortest prompt ({} tokens); every "
          "prompt starts with the shared prefix",
          WithCommas(shared_prefix), WithCommas(shortest));
    }
  }
  ModelSpec m = LoadModel(o.model);
  HardwareSpec hw = LoadHardware(o.deploy.gpu);
  EngineConfig config = ToEngineConfig(o.deploy);
  config.enable_prefix_caching = o.prefix_caching;
  CapacityResult cap = CapacityOrFail(m, hw, config);
  CheckMixFits(mix, cap.max_model_len);
  const KvCost& cost = cap.stages[cap.tightest_stage].kv;
  PagingConfig pc;
  pc.kv_budget_bytes = cap.kv_budget_bytes;
  pc.block_size = cap.block_size;
  pc.max_model_len = cap.max_model_len;
  pc.shared_prefix_tokens = shared_prefix;
  // vLLM with a hybrid model: its own groups and blocks, as capacity sizes them.
  for (const KvCacheGroup& g : cap.kv_cache_groups)
    pc.vllm_groups.push_back({g.kind, g.window, g.block_size});
  if (!pc.vllm_groups.empty()) pc.group_block_bytes = cap.stages[cap.tightest_stage].block_bytes;
  PagingResult r = AnalyzePaging(cost, mix, pc);
  MixStats st = ComputeMixStats(mix);

  switch (ToFormat(o.format)) {
    case Format::kJson: {
      Json j;
      j.Set("model", m.name);
      j.Set("gpu", hw.name);
      SetEngineJson(j, cap);
      j.Set("kv_cache_dtype", cap.kv_cache_dtype);
      j.Set("kv_budget_bytes", cap.kv_budget_bytes);
      j.Set("block_size", cap.block_size);
      j.Set("block_bytes", r.block_bytes);
      j.Set("budget_blocks", r.budget_blocks);
      j.Set("max_model_len", cap.max_model_len);
      Json mj;
      mj.Set("source", mix.source);
      mj.Set("requests", st.count);
      mj.Set("mean_prompt_tokens", st.mean_prompt);
      mj.Set("mean_output_tokens", st.mean_output);
      mj.Set("p50_tokens", st.p50_tokens);
      mj.Set("p90_tokens", st.p90_tokens);
      mj.Set("p99_tokens", st.p99_tokens);
      mj.Set("max_tokens", st.max_tokens);
      j.Set("mix", std::move(mj));
      const std::optional<uint64_t> limit = cap.RunningCap();
      j.Set("max_num_seqs", limit ? Json(*limit) : Json(nullptr));
      j.Set("contiguous", AllocationJson(r.contiguous, cap));
      j.Set("paged", AllocationJson(r.paged, cap));
      if (r.has_prefix) {
        Json pj = AllocationJson(r.prefix, cap);
        pj.Set("shared_prefix_tokens", shared_prefix);
        pj.Set("shared_blocks", r.prefix_blocks);
        pj.Set("shared_bytes", r.prefix.shared_bytes);
        pj.Set("saved_blocks_per_request", r.saved_blocks_per_request);
        pj.Set("saved_bytes_whole_mix", r.saved_bytes_whole_mix);
        j.Set("prefix_sharing", std::move(pj));
      }
      Print(j.Dump() + "\n");
      break;
    }
    case Format::kCsv: {
      Table t({"model", "gpu", "policy", "concurrency", "max_running", "mean_request_bytes",
               "allocated_bytes", "used_bytes", "waste_percent", "whole_mix_fits"});
      auto row = [&](const char* name, const AllocationResult& a) {
        t.AddRow({m.name, hw.name, name, std::to_string(a.concurrency),
                  std::to_string(cap.RunningAtOnce(a.concurrency)),
                  fmt::format("{:.0f}", a.mean_request_bytes), std::to_string(a.allocated_bytes),
                  std::to_string(a.used_bytes), fmt::format("{:.2f}", a.WastePercent()),
                  a.whole_mix_fits ? "true" : "false"});
      };
      row("contiguous", r.contiguous);
      row("paged", r.paged);
      if (r.has_prefix) row("paged_shared_prefix", r.prefix);
      Print(t.Csv());
      break;
    }
    case Format::kText: {
      std::string out = fmt::format(
          "{} on {} · {} · KV cache {} · block {}\n"
          "KV budget {} per GPU = {}; max-model-len {}\n"
          "Request mix {}: {}, mean {} prompt + {} output tokens; "
          "length p50 {}, p90 {}, max {}\n\n",
          m.name, hw.name, EngineLabel(cap.config), cap.kv_cache_dtype,
          Plural(cap.block_size, "token"), FormatBoth(cap.kv_budget_bytes),
          Plural(r.budget_blocks, "block"), FormatTokens(cap.max_model_len), mix.source,
          Plural(st.count, "request"), WithCommas(static_cast<uint64_t>(st.mean_prompt + 0.5)),
          WithCommas(static_cast<uint64_t>(st.mean_output + 0.5)), WithCommas(st.p50_tokens),
          WithCommas(st.p90_tokens), WithCommas(st.max_tokens));
      std::vector<std::string> headers = {"", "contiguous (max-model-len)",
                                          fmt::format("paged ({}-token blocks)", cap.block_size)};
      if (r.has_prefix)
        headers.push_back(fmt::format("paged + {}-token shared prefix", shared_prefix));
      Table t(headers);
      std::vector<const AllocationResult*> cols = {&r.contiguous, &r.paged};
      if (r.has_prefix) cols.push_back(&r.prefix);
      auto add = [&](const std::string& label, auto cell) {
        std::vector<std::string> row = {label};
        for (const AllocationResult* a : cols) row.push_back(cell(*a));
        t.AddRow(row);
      };
      add("concurrent requests", [](const AllocationResult& a) { return Count(a.concurrency); });
      // What fits in memory, and what the scheduler runs of it at once.
      bool capped = false;
      for (const AllocationResult* a : cols)
        capped = capped || cap.RunningAtOnce(a->concurrency) < a->concurrency;
      if (capped) {
        add(fmt::format("  runs at once (max-num-seqs {})", WithCommas(cap.config.max_num_seqs)),
            [&cap](const AllocationResult& a) { return Count(cap.RunningAtOnce(a.concurrency)); });
      }
      add("memory per request", [](const AllocationResult& a) {
        return FormatGiB(static_cast<uint64_t>(a.mean_request_bytes));
      });
      add("whole mix at once",
          [](const AllocationResult& a) { return FormatGiB(a.allocated_bytes); });
      add("wasted (reserved, unused)",
          [](const AllocationResult& a) { return fmt::format("{:.1f} %", a.WastePercent()); });
      add("whole mix fits",
          [](const AllocationResult& a) { return a.whole_mix_fits ? "yes" : "no"; });
      out += t.Text();
      if (r.contiguous.concurrency != 0 && r.contiguous.concurrency != UINT64_MAX &&
          r.paged.concurrency != UINT64_MAX) {
        out += fmt::format("\nPaging holds {:.2f}x the requests of contiguous reservation.\n",
                           static_cast<double>(r.paged.concurrency) /
                               static_cast<double>(r.contiguous.concurrency));
      } else if (r.contiguous.concurrency == 0) {
        out += "\nNot one max-model-len reservation fits: a contiguous server could not start.\n";
      }
      if (r.has_prefix) {
        out += fmt::format(
            "Shared prefix: {} full blocks ({} tokens) stored once = {}; a request reuses {:.1f} "
            "blocks on average (the partial last block of the prefix stays private);\n"
            "  holding the whole mix needs {} less.\n",
            r.prefix_blocks, WithCommas(r.prefix_blocks * r.prefix_block_tokens),
            FormatGiB(r.prefix.shared_bytes), r.saved_blocks_per_request,
            FormatGiB(r.saved_bytes_whole_mix));
      } else if (shared_prefix > 0) {
        out +=
            "Shared prefix: no layer of this model keeps a prefix (sliding windows and state "
            "layers do not share), so nothing is saved.\n";
      }
      Print(out);
      break;
    }
  }
}

}  // namespace

void SetupPagingCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<PagingOptions>();
  CLI::App* sub = app.add_subcommand(
      "paging", "Contiguous vs paged KV allocation for a request mix: concurrency and waste");
  sub->add_option("model", o->model, "Catalog name, HF repo id, spec YAML or config.json")
      ->required();
  AddDeployFlags(sub, o->deploy);
  sub->add_option(
      "--requests", o->requests,
      "Request mix file: CSV (prompt_tokens,output_tokens) or JSONL (docs/request-mix.md)");
  sub->add_option("--mix", o->mix,
                  "Request mix distribution: uniform:prompt=A..B,output=C..D[,n=N][,seed=S] or "
                  "lognormal:prompt_mean=..,prompt_sigma=..,output_mean=..,output_sigma=..");
  sub->add_flag("--enable-prefix-caching", o->prefix_caching,
                "Share the full blocks of a common prompt prefix (vLLM's flag)");
  sub->add_option("--shared-prefix", o->shared_prefix,
                  "Tokens of prompt prefix every request shares (needs --enable-prefix-caching)");
  AddFormatOption(sub, o->format);
  sub->footer(R"(Examples:
  kvplan paging llama-3.1-8b --gpu h100-sxm --requests examples/request-mix.csv
  kvplan paging llama-3.1-70b --gpu h100-sxm -tp 4 --max-model-len 32K \
      --mix "lognormal:prompt_mean=1500,prompt_sigma=1,output_mean=300,output_sigma=0.8,prompt=1..24000,output=1..8000"
  kvplan paging qwen3-8b --gpu l40s --mix "uniform:prompt=1000..4000,output=50..500" \
      --enable-prefix-caching --shared-prefix 1000 --format json

Contiguous: every request reserves max-model-len tokens up front. Paged: a
request holds ceil(tokens / block) blocks. Concurrency counts requests of the
mix's average footprint that fit at once. Formats: docs/request-mix.md.)");
  sub->callback([o, &exit_code] {
    Run(*o);
    exit_code = 0;
  });
}

}  // namespace kvplan
