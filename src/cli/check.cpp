// kvplan check DEPLOY.yaml... | DIR: the CI gate. Each requirement is
// reported as measured vs required, PASS or FAIL, with the startup failures
// the engine itself would hit. Exit 0 all pass, 1 any fails, 2 invalid input.
#include "plan/check.h"

#include <fmt/format.h>

#include <optional>

#include "cli/commands.h"
#include "cli/config_paths.h"
#include "cli/deploy_flags.h"
#include "cli/model_route.h"
#include "import/deploy_config_reader.h"
#include "import/engine_command.h"
#include "import/resolve.h"
#include "report/check.h"
#include "report/github.h"
#include "report/junit.h"
#include "spec/catalog.h"
#include "spec/deploy_config.h"
#include "util/error.h"
#include "util/units.h"

namespace kvplan {
namespace {

struct CheckOptions {
  std::vector<std::string> files;
  std::string format = "text";
  std::string engine_args;                  // --engine-args, or its alias --vllm-args
  std::string args_flag = "--engine-args";  // which of the two was given
  bool strict = false;
  std::optional<std::string> vllm_version;
  std::string gpu;
  uint64_t gpu_count = 0;
  // Unset unless given: a given 0, negative or NaN is an error, not "no requirement".
  std::optional<uint64_t> require_concurrency;
  std::string require_tokens;
  std::optional<double> require_headroom;
};

// Loads the model and GPU a config names; their errors point at the config's line.
CheckReport CheckConfig(const DeployConfig& d) {
  ModelSpec model;
  HardwareSpec gpu;
  try {
    model = LoadModelAndSay(d.model, d.model_revision);
  } catch (const Error& e) {
    Fail("{}model: {}", d.model_pos.Prefix(), e.what());
  }
  try {
    gpu = LoadHardware(d.gpu);
  } catch (const Error& e) {
    Fail("{}gpu: {}", d.gpu_pos.Prefix(), e.what());
  }
  if (!d.args.speculative) return RunChecks(model, gpu, d);
  DeployConfig with = d;  // the draft (or MTP layers) resolved against the model
  ResolveSpeculative(*d.args.speculative, model, "speculative_config", with.speculative_mtp_layers,
                     with.speculative_draft);
  return RunChecks(model, gpu, with);
}

// `message` naming the flag the user gave (--vllm-args or --engine-args)
// where the parser named the other.
std::string AsGiven(std::string message, const std::string& flag) {
  for (const std::string prefix : {"--vllm-args", "--engine-args"}) {
    if (prefix != flag && message.rfind(prefix, 0) == 0 &&
        (message.size() == prefix.size() || message[prefix.size()] == ':' ||
         message[prefix.size()] == ' ')) {
      return flag + message.substr(prefix.size());
    }
  }
  return message;
}

CheckOutcome CheckFile(const std::string& path, bool strict) {
  CheckOutcome o;
  o.file = path;
  try {
    DeployConfig d = ReadDeployConfig(path);
    d.strict = strict;
    o.report = CheckConfig(d);
  } catch (const Error& e) {
    o.error = e.what();
  }
  return o;
}

CheckOutcome CheckCommandLine(const CheckOptions& opt) {
  CheckOutcome o;
  o.file = opt.args_flag;
  try {
    if (opt.gpu.empty()) Fail("{} needs --gpu (a catalog name or a profile YAML)", opt.args_flag);
    // --vllm-args keeps taking a bare `MODEL --flags` as vLLM's.
    DeployConfig d = ParseEngineCommand(opt.engine_args, opt.args_flag == "--vllm-args");
    d.strict = opt.strict;
    if (opt.vllm_version && d.engine != "vllm") {
      Fail("--vllm-version is for a vLLM line; this one runs {}", d.engine);
    }
    if (opt.vllm_version) d.vllm_version = ParseVllmVersion(*opt.vllm_version, "--vllm-version");
    d.file = "";
    d.gpu = opt.gpu;
    d.gpu_count = opt.gpu_count;
    Requirements& q = d.requirements;
    // The same limits as a config file's requirements (deploy_config.cpp).
    if (opt.require_concurrency) {
      if (*opt.require_concurrency == 0) Fail("--require-concurrency: must be at least 1");
      q.min_concurrency = opt.require_concurrency;
      q.pos["min_concurrency"] = {};
    }
    if (!opt.require_tokens.empty()) {
      q.min_tokens_in_cache = ParseTokens(opt.require_tokens, "--require-tokens");
      if (*q.min_tokens_in_cache == 0) Fail("--require-tokens: must be at least 1 token");
      q.pos["min_tokens_in_cache"] = {};
    }
    if (opt.require_headroom) {
      const double h = *opt.require_headroom;
      if (!(h >= 0 && h < 100)) {
        Fail("--require-headroom: {} is not a percentage from 0 to below 100", h);
      }
      if (!q.min_concurrency) Fail("--require-headroom needs --require-concurrency");
      q.min_headroom_percent = h;
      q.pos["min_headroom_percent"] = {};
    }
    o.report = CheckConfig(d);
  } catch (const Error& e) {
    o.error = AsGiven(e.what(), opt.args_flag);
  }
  return o;
}

int Run(const CheckOptions& o) {
  if (o.files.empty() && o.engine_args.empty()) {
    Fail(
        "give deployment config files or folders, or --engine-args \"vllm serve ...\" (any "
        "engine's launch line)");
  }
  if (!o.engine_args.empty() && !o.files.empty()) {
    Fail("give either deployment config files or {}, not both", o.args_flag);
  }
  if (o.engine_args.empty() &&
      (!o.gpu.empty() || o.require_concurrency || !o.require_tokens.empty() || o.require_headroom ||
       o.gpu_count || o.vllm_version)) {
    Fail(
        "--gpu, --gpu-count, --vllm-version and --require-* go with --engine-args (a config "
        "file states its own)");
  }
  std::vector<CheckOutcome> all;
  if (!o.engine_args.empty()) {
    all.push_back(CheckCommandLine(o));
  } else {
    for (CheckOutcome& x : ExpandPaths(o.files))
      all.push_back(x.error.empty() ? CheckFile(x.file, o.strict) : x);
  }
  bool invalid = false, failed = false;
  for (const CheckOutcome& x : all) {
    if (!x.report)
      invalid = true;
    else if (!x.report->Pass())
      failed = true;
  }
  if (o.format == "json")
    Print(CheckJson(all));
  else if (o.format == "junit")
    Print(CheckJunit(all));
  else if (o.format == "github")
    Print(CheckGithub(all));
  else
    Print(CheckText(all, OutputWidth()));
  FlushOutput();
  // Invalid files are also reported on stderr, one line each, in every format.
  for (const CheckOutcome& x : all) {
    if (!x.report) PrintError(x.error);
  }
  return invalid ? 2 : failed ? 1 : 0;
}

}  // namespace

void SetupCheckCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CheckOptions>();
  CLI::App* sub = app.add_subcommand(
      "check", "CI gate: check deployment configs against their requirements (exit 1 on FAIL)");
  sub->add_option("files", o->files, "Deployment config YAMLs, or folders of them");
  AddFormatOption(sub, o->format, {"text", "json", "junit", "github"});
  CLI::Option* engine_args =
      sub->add_option("--engine-args", o->engine_args,
                      "Check an engine's launch line instead: vllm serve, python -m "
                      "sglang.launch_server, llama-server, trtllm-serve (bare, after env/sudo/uv "
                      "run, in docker run IMAGE ..., or a JSON argument list)");
  CLI::Option* vllm_args = sub->add_option("--vllm-args", o->engine_args,
                                           "The same as --engine-args (its earlier name)");
  engine_args->excludes(vllm_args);
  vllm_args->each([o](const std::string&) { o->args_flag = "--vllm-args"; });
  sub->add_flag("--strict", o->strict,
                "Fail on flags the engine takes that change its memory in ways kvplan does not "
                "model (they are notes otherwise)");
  sub->add_option("--gpu", o->gpu, "With --engine-args: the GPU (catalog name or profile YAML)");
  sub->add_option("--gpu-count", o->gpu_count,
                  "With --engine-args: GPUs on the machine (default: tp x pp x dp)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 16));
  sub->add_option("--vllm-version", o->vllm_version,
                  "With --engine-args: the vLLM release (default: latest; before 0.21 CUDA graphs "
                  "are not subtracted and the default utilization is 0.9)");
  sub->add_option("--require-concurrency", o->require_concurrency,
                  "With --engine-args: requests of max_model_len that must fit at once (at most "
                  "2^24)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 24));
  sub->add_option("--require-tokens", o->require_tokens,
                  "With --engine-args: tokens the KV cache must hold (4k = 4000, 4K = 4096)");
  sub->add_option("--require-headroom", o->require_headroom,
                  "With --engine-args: % of the cache left spare at --require-concurrency")
      ->check(DecimalNumber());
  sub->footer(R"(Examples:
  kvplan check deploy/                        every *.yaml under deploy/
  kvplan check deploy/chat.yaml --format github
  kvplan check deploy/*.yaml --format junit > kvplan-junit.xml
  kvplan check --engine-args "vllm serve meta-llama/Llama-3.1-8B --max-model-len 32768 -tp 2" \
               --gpu h100-sxm --require-concurrency 8
  kvplan check --engine-args "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 2 \
               --mem-fraction-static 0.85" --gpu h100-sxm --require-concurrency 8
  kvplan check --engine-args "llama-server -m llama-3.1-8b -c 32768 -np 4 -ctk q8_0 -ctv q8_0 -fa on" \
               --gpu rtx-4090

Config schema: docs/deploy-config.md. Exit codes: 0 every check passes,
1 some check fails, 2 some input is invalid (it is reported, the rest still run).)");
  sub->callback([o, &exit_code] { exit_code = Run(*o); });
}

}  // namespace kvplan
