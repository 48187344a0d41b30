// kvplan latency: TTFT and TPOT predictions from bytes moved and FLOPs done,
// which bound applies, from which bandwidth (a measured `kvplan bench`
// profile or the datasheet), and where decode turns compute-bound as the
// batch grows. --validate checks the model against a real decode step on
// this CPU (src/demo/decode_validation.h).
#include "report/latency.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "cli/commands.h"
#include "cli/latency_validate.h"
#include "cli/model_route.h"
#include "import/resolve.h"
#include "plan/capacity.h"
#include "plan/latency_fit.h"
#include "spec/catalog.h"
#include "util/units.h"

namespace kvplan {
namespace {

struct LatencyOptions {
  std::string model;
  std::string revision = "main";
  std::string gpu;
  std::string profile;
  std::optional<std::string> context;  // default: 4096, or the model's max_context if shorter
  std::string batch = "1";
  std::optional<std::string> prompt;  // default: the context
  std::string dtype = "auto";
  std::string weight_dtype;
  uint64_t tp = 1;
  uint64_t max_batch = 0;  // table limit (0: a little past the compute-bound turn)
  std::string format = "text";
  ValidateOptions validate;
};

LatencySetup Prepare(const LatencyOptions& o) {
  LatencySetup s;
  s.model = LoadModelAndSay(o.model, o.revision);
  if (o.gpu.empty() && o.profile.empty()) Fail("latency: give --gpu NAME or --profile FILE");
  if (!o.gpu.empty()) {
    s.hw = LoadHardware(o.gpu);
    if (!o.profile.empty()) {
      HardwareSpec p = LoadHardware(o.profile);
      if (!p.measured)
        Fail("--profile {}: has no measured: section (write one with kvplan bench --save)",
             o.profile);
      s.hw.measured = p.measured;
      s.hw.origin = p.origin;
    }
  } else {
    s.hw = LoadHardware(o.profile);
    if (!s.hw.measured)
      Fail("--profile {}: has no measured: section (write one with kvplan bench --save)",
           o.profile);
  }
  const uint64_t max = s.model.max_context;
  s.context = o.context ? ParseTokens(*o.context, "--context")
                        : (max > 0 ? std::min<uint64_t>(4096, max) : 4096);
  if (s.context == 0) Fail("--context: must be at least 1 token");
  // As vLLM refuses a max_model_len past the model's limit: a latency there
  // would be a figure for a request no server takes.
  const auto within_limit = [&](uint64_t tokens, const char* flag) {
    if (max > 0 && tokens > max) {
      Fail("{} {}: more than {}'s max_context of {}", flag, WithCommas(tokens), s.model.name,
           WithCommas(max));
    }
  };
  within_limit(s.context, "--context");
  s.batch = ParseTokens(o.batch, "--batch");
  if (s.batch == 0) Fail("--batch: must be at least 1");
  s.prompt = o.prompt ? ParseTokens(*o.prompt, "--prompt") : s.context;
  if (s.prompt == 0) Fail("--prompt: must be at least 1 token");
  within_limit(s.prompt, "--prompt");
  const CacheDtype& dtype = ResolveCacheDtype(s.model, o.dtype);
  s.kv_dtype = dtype.name;
  CheckKvConfig(s.model, dtype, o.tp);
  // As an engine runs the checkpoint (`capacity`'s rule): an fp32 one in
  // bf16, so its weights read and its matmuls run in 16 bits.
  EngineConfig served;
  served.weight_dtype = o.weight_dtype;
  const WeightFormat format = ResolvedWeightFormat(s.model, served);
  s.cost = ComputeModelCost(s.model, dtype, format, o.tp);
  return s;
}

int Run(const LatencyOptions& o) {
  if (o.validate.enabled) return RunLatencyValidation(o.validate, o.profile, o.format);
  if (o.model.empty()) Fail("latency: MODEL is required (or --validate)");
  const LatencySetup s = Prepare(o);
  const StepEstimate decode = EstimateDecodeStep(s.cost, s.hw, s.context, s.batch);
  const StepEstimate prefill = EstimatePrefill(s.cost, s.hw, s.prompt);
  const std::vector<uint64_t> batches = TableBatches(s, o.max_batch);
  switch (ToFormat(o.format)) {
    case Format::kJson:
      Print(LatencyJson(s, decode, prefill, batches).Dump() + "\n");
      break;
    case Format::kCsv:
      Print(LatencyCsv(s, batches));
      break;
    case Format::kText:
      Print(LatencyText(s, decode, prefill, batches, OutputWidth()));
      break;
  }
  return 0;
}

}  // namespace

void SetupLatencyCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<LatencyOptions>();
  CLI::App* sub = app.add_subcommand(
      "latency",
      "TTFT and TPOT predictions, the bound that applies, and the batch where decode "
      "turns compute-bound");
  sub->add_option("model", o->model, "Catalog name, HF repo id, spec YAML or config.json");
  AddRevisionOption(sub, o->revision);
  sub->add_option("--gpu", o->gpu,
                  "Catalog GPU (kvplan gpus) or a hardware YAML: datasheet figures");
  sub->add_option("--profile", o->profile,
                  "A profile from `kvplan bench --save`: its measured bandwidth curve replaces "
                  "datasheet x efficiency");
  sub->add_option("-c,--context,--max-model-len", o->context,
                  "Tokens in each sequence's cache during decode (4096, 4k = 4000, 4K = 4096; "
                  "default: 4096, or the model's max_context if shorter)");
  sub->add_option("-b,--batch", o->batch, "Sequences decoded together")->capture_default_str();
  sub->add_option("--prompt", o->prompt, "Prompt tokens for TTFT (default: the context)");
  sub->add_option("--kv-cache-dtype", o->dtype, "auto (= weights), fp16, bf16, fp8, int8, ...")
      ->capture_default_str();
  sub->add_option("--weight-dtype", o->weight_dtype,
                  "Override the weights: fp16, bf16, fp8, int8, int4, nvfp4, mxfp4 (default: as "
                  "an engine runs the checkpoint: as published, e.g. DeepSeek-V3 fp8 in 128x128 "
                  "blocks, an fp32 one in bf16)");
  sub->add_option("--tp,--tensor-parallel-size", o->tp, "Tensor-parallel ranks (also -tp)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  sub->add_option("--max-batch", o->max_batch,
                  "Last batch of the table (default: twice the compute-bound batch)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  AddValidateOptions(sub, o->validate);
  AddFormatOption(sub, o->format);
  sub->footer(R"(Examples:
  kvplan latency llama-3.1-8b --gpu h100-sxm -c 4K -b 8
  kvplan latency llama-3.1-70b --gpu h100-sxm -tp 4 --kv-cache-dtype fp8 -c 32K -b 16
  kvplan latency mixtral-8x7b --gpu a100-80gb -c 8K --prompt 2K --format json
  kvplan bench --save cpu.yaml && kvplan latency llama-3.1-8b --profile cpu.yaml -c 4K
  kvplan latency --validate --profile cpu.yaml     predicted vs measured decode steps on this CPU

Model: a step is two phases run one after the other, each the larger of its
memory time (bytes / bandwidth at the bytes one layer reads) and its compute
time (FLOPs / (peak x 0.6)): the weight matmuls, then attention over the
cache. TPOT and TTFT are the sums. See docs/latency.md.)");
  sub->callback([o, &exit_code] { exit_code = Run(*o); });
}

}  // namespace kvplan
