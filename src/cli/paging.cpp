// kvplan paging: a request mix (a CSV/JSONL file or a distribution) on a
// deployment's KV budget, held three ways: contiguous reservation at
// max-model-len (the naive server), paged blocks, and paged blocks with a
// shared prompt prefix stored once. Concurrency and wasted memory for each.
#include "plan/paging.h"

#include "cli/commands.h"
#include "cli/deploy_flags.h"
#include "cli/model_route.h"
#include "import/resolve.h"
#include "plan/paging_capacity.h"
#include "report/paging.h"
#include "spec/catalog.h"
#include "spec/request_mix_reader.h"
#include "util/units.h"

namespace kvplan {
namespace {

struct PagingOptions {
  std::string model;
  std::string revision = "main";
  DeployFlags deploy;
  std::string requests;
  std::string mix;
  bool prefix_caching = false;
  std::string shared_prefix;
  std::string format = "text";
};

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
  CheckSharedPrefix(mix, shared_prefix);
  ModelSpec m = LoadModelAndSay(o.model, o.revision);
  HardwareSpec hw = LoadHardware(o.deploy.gpu);
  EngineConfig config = ToEngineConfig(o.deploy);
  if (o.prefix_caching && config.disable_radix_cache) {
    Fail("--enable-prefix-caching and --disable-radix-cache contradict each other");
  }
  config.enable_prefix_caching = o.prefix_caching;
  CapacityResult cap = CapacityOrFail(m, hw, config);
  CheckMixFits(mix, cap.max_model_len);
  const KvCost& cost = cap.stages[cap.tightest_stage].kv;
  PagingResult r = AnalyzePaging(cost, mix, PagingConfigFor(cap, shared_prefix));

  switch (ToFormat(o.format)) {
    case Format::kJson:
      Print(PagingJson(m, hw, cap, mix, r, shared_prefix).Dump() + "\n");
      break;
    case Format::kCsv:
      Print(PagingCsv(m, hw, cap, r));
      break;
    case Format::kText:
      Print(PagingText(m, hw, cap, mix, r, shared_prefix, OutputWidth()));
      break;
  }
}

}  // namespace

void SetupPagingCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<PagingOptions>();
  CLI::App* sub = app.add_subcommand(
      "paging", "Contiguous vs paged KV allocation for a request mix: concurrency and waste");
  sub->add_option("model", o->model, "Catalog name, HF repo id, spec YAML or config.json")
      ->required();
  AddRevisionOption(sub, o->revision);
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
