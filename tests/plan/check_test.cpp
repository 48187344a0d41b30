// kvplan check: deploy-config errors (exact one-line messages with
// file:line:col), exit codes, the four output formats, the vLLM args parser.
#include "plan/check.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "import/deploy_config_reader.h"
#include "import/resolve.h"
#include "import/vllm_args.h"
#include "plan/latency.h"
#include "plan/weights.h"
#include "spec/catalog.h"
#include "spec/deploy_config.h"
#include "util/units.h"

using namespace kvplan;
using kvplan::test::CheckOneLineError;
using kvplan::test::RunKvplan;
using kvplan::test::SourcePath;
using kvplan::test::TempDir;
using kvplan::test::WriteFile;

namespace {

const char* kGood = R"(name: t
model: llama-3.1-8b
hardware:
  gpu: h100-sxm
engine:
  name: vllm
  args:
    max_model_len: 32768
requirements:
  min_concurrency: 8
)";

std::string ErrorOf(const std::string& text) {
  try {
    ParseDeployConfig(text, "d.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("deploy config errors are one line naming file:line:col and the field") {
  CHECK(ErrorOf(kGood) == "(no error)");
  CHECK(ErrorOf(Replace(kGood, "model: llama-3.1-8b\n", "")) ==
        "d.yaml:1:1: deployment config: missing required field 'model'");
  CHECK(ErrorOf(Replace(kGood, "max_model_len: 32768", "max_model_length: 32768")) ==
        "d.yaml:8:5: max_model_length: unknown field in vllm args (did you mean 'max_model_len'?)");
  CHECK(ErrorOf(Replace(kGood, "min_concurrency: 8", "min_concurency: 8")) ==
        "d.yaml:10:3: min_concurency: unknown field in requirements (did you mean "
        "'min_concurrency'?)");
  CHECK(ErrorOf(Replace(kGood, "name: t\n", "name: t\nhardwre: {}\n")) ==
        "d.yaml:2:1: hardwre: unknown field in deployment config (did you mean 'hardware'?)");
  CHECK(ErrorOf(Replace(kGood, "min_concurrency: 8", "min_concurrency: lots")) ==
        "d.yaml:10:20: min_concurrency: expected a whole number, got 'lots'");
  CHECK(ErrorOf(Replace(kGood, "min_concurrency: 8", "min_concurrency: -8")) ==
        "d.yaml:10:20: min_concurrency: must be positive, got -8");
  CHECK(ErrorOf(Replace(kGood, "max_model_len: 32768", "max_model_len: -5")) ==
        "d.yaml:8:20: max_model_len: '-5' is negative");
  CHECK(ErrorOf(Replace(kGood, "max_model_len: 32768", "max_model_len: [1]")) ==
        "d.yaml:8:20: max_model_len: expected a text value");
  CHECK(ErrorOf(Replace(kGood, "max_model_len: 32768", "gpu_memory_utilization: 1.5")) ==
        "d.yaml:8:29: gpu_memory_utilization: 1.5 is a fraction of memory and must be in (0, 1]");
  CHECK(ErrorOf(Replace(kGood, "name: vllm", "name: vlm")) ==
        "d.yaml:6:9: name: unknown engine 'vlm' (known: vllm, sglang, trtllm, llama.cpp) (did "
        "you mean 'vllm'?)");
  // The names --engine takes, in any case.
  CHECK(ParseDeployConfig(Replace(kGood, "name: vllm", "name: vLLM"), "d.yaml").engine == "vllm");
  CHECK(ParseDeployConfig(Replace(Replace(kGood, "name: vllm", "name: TensorRT-LLM"),
                                  "max_model_len", "max_seq_len"),
                          "d.yaml")
            .engine == "trtllm");
  CHECK(ParseDeployConfig(Replace(Replace(kGood, "name: vllm", "name: llama-server"),
                                  "max_model_len", "ctx_size"),
                          "d.yaml")
            .engine == "llama.cpp");
  // SGLang takes its own names; vLLM's are unknown there.
  CHECK(ErrorOf(Replace(kGood, "name: vllm", "name: sglang")) ==
        "d.yaml:8:5: max_model_len: unknown field in sglang args");
  // An arg with no value is taken as the engine's default, and a note says
  // so, at the key's own line, in the file's order.
  const DeployConfig unset = ParseDeployConfig(
      Replace(kGood, "    max_model_len: 32768\n", "    max_model_len:\n    max_num_seqs: null\n"),
      "d.yaml");
  const DeployConfig reversed = ParseDeployConfig(
      Replace(kGood, "    max_model_len: 32768\n", "    max_num_seqs:\n    max_model_len: ~\n"),
      "d.yaml");
  REQUIRE(reversed.notes.size() == 1);
  CHECK(reversed.notes[0] ==
        "engine.args: no value, so the engine's default: max_num_seqs (line 8), max_model_len "
        "(line 9)");
  CHECK(!unset.args.max_model_len.has_value());
  REQUIRE(unset.notes.size() == 1);
  CHECK(unset.notes[0] ==
        "engine.args: no value, so the engine's default: max_model_len (line 8), max_num_seqs "
        "(line 9)");
  CHECK(ParseDeployConfig(kGood, "d.yaml").notes.empty());
  // `requirements:` left with nothing under it is named where it is written.
  CHECK(ErrorOf(Replace(kGood, "  min_concurrency: 8\n", "")) ==
        "d.yaml:9:1: requirements: no value (the field is required)");
  CHECK(ErrorOf(Replace(kGood, "  min_concurrency: 8\n", "  min_headroom_percent: 10\n")) ==
        "d.yaml:10:25: min_headroom_percent: needs min_concurrency (the load the headroom is "
        "measured at)");
  CHECK(ErrorOf(std::string(kGood) +
                "workload:\n  requests:\n    - tokens: 1K\n      share: 0.5\n") ==
        "d.yaml:13:5: requests: shares add up to 0.5, not 1");
  // Thirds to three decimals are a whole: taken as fractions of their sum.
  const DeployConfig thirds =
      ParseDeployConfig(std::string(kGood) +
                            "workload:\n  requests:\n    - {tokens: 1K, share: 0.333}\n"
                            "    - {tokens: 2K, share: 0.333}\n    - {tokens: 4K, share: 0.333}\n",
                        "d.yaml");
  REQUIRE(thirds.workload);
  CHECK(thirds.workload->requests[0].share == doctest::Approx(1.0 / 3));
  CHECK(ErrorOf(std::string(kGood) +
                "workload:\n  requests:\n    - {tokens: 1K, share: 0.33}\n"
                "    - {tokens: 2K, share: 0.33}\n    - {tokens: 4K, share: 0.33}\n") ==
        "d.yaml:13:5: requests: shares add up to 0.99, not 1");
  CHECK(ErrorOf("- a\n- b\n") == "d.yaml:1:1: deployment config: expected a map of fields");
}

TEST_CASE("check exit codes: 0 all pass, 1 a failure, 2 invalid input") {
  auto pass = RunKvplan("check " + SourcePath("examples/llama-8b-chat.yaml"));
  CHECK(pass.exit_code == 0);
  CHECK(pass.out.find("PASS: all 7 checks pass") != std::string::npos);
  // A check met in words says it once.
  CHECK(pass.out.find("  PASS  startup                   starts\n") != std::string::npos);
  auto fail = RunKvplan("check " + SourcePath("examples/llama-70b-long-context.yaml"));
  CHECK(fail.exit_code == 1);
  CHECK(fail.out.find(
            "FAIL  min_concurrency      measured 6 requests of 131,072 tokens, required >= 8") !=
        std::string::npos);
  std::string dir = TempDir();
  WriteFile(dir, "bad.yaml", Replace(kGood, "min_concurrency: 8", "min_concurency: 8"));
  auto bad = RunKvplan("check bad.yaml", dir);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err ==
        "kvplan: error: bad.yaml:10:3: min_concurency: unknown field in requirements "
        "(did you mean 'min_concurrency'?)\n");
  // A folder: every file is checked; one invalid file makes the exit 2.
  WriteFile(dir, "good.yaml", kGood);
  auto both = RunKvplan("check .", dir);
  CHECK(both.exit_code == 2);
  CHECK(both.out.find("./good.yaml: llama-3.1-8b on 1 x h100-sxm") != std::string::npos);
  // Model and GPU errors point at the config's line.
  WriteFile(dir, "gpu.yaml", Replace(kGood, "gpu: h100-sxm", "gpu: h100-sxn"));
  auto gpu = RunKvplan("check gpu.yaml", dir);
  CHECK(gpu.exit_code == 2);
  CHECK(gpu.err.rfind("kvplan: error: gpu.yaml:4:8: gpu: unknown GPU 'h100-sxn'", 0) == 0);
  auto none = RunKvplan("check", dir);
  CHECK(none.exit_code == 2);
}

TEST_CASE("deploy files: vLLM's CUDA-graph sizes and compilation_config, as vllm_args reads them") {
  const ModelSpec llama = LoadModel("llama-3.1-8b");
  const HardwareSpec h100 = LoadHardware("h100-sxm");
  // The same graphs from a deploy file and from a command line: the same cache.
  const auto from_file = [&](const std::string& args) {
    return RunChecks(
        llama, h100,
        ParseDeployConfig(Replace(kGood, "max_model_len: 32768", "max_model_len: 32768\n" + args),
                          "d.yaml"));
  };
  const auto from_cli = [&](const std::string& flags) {
    return RunChecks(llama, h100,
                     ParseVllmCommand("vllm serve llama-3.1-8b --max-model-len 32768 " + flags));
  };
  const CheckReport plain = from_file("    enforce_eager: false");  // graphs to 512
  for (const auto& [yaml, cli] : std::vector<std::pair<std::string, std::string>>{
           {"    cudagraph_capture_sizes: [1, 2, 4, 8]", "--cudagraph-capture-sizes 1 2 4 8"},
           {"    cuda_graph_sizes: [1, 2, 4, 8]", "--cuda-graph-sizes 1 2 4 8"},
           {"    compilation_config:\n      cudagraph_capture_sizes: [1, 2, 4, 8]\n"
            "      backend: inductor",
            "-cc '{\"cudagraph_capture_sizes\": [1, 2, 4, 8]}'"},
           {"    compilation_config: '{\"cudagraph_capture_sizes\": [1, 2, 4, 8], \"level\": 3}'",
            "--cudagraph-capture-sizes 1 2 4 8"},
           {"    compilation_config: {max_cudagraph_capture_size: 32}",
            "-cc.max_cudagraph_capture_size 32"},
           {"    compilation_config: {cudagraph_mode: NONE}", "--enforce-eager"},
           {"    optimization_level: 0", "-O0"},
       }) {
    CAPTURE(yaml);
    const CheckReport f = from_file(yaml), c = from_cli(cli);
    REQUIRE(f.Pass());
    CHECK(f.capacity.config.cuda_graph_max_bs == c.capacity.config.cuda_graph_max_bs);
    CHECK(f.capacity.config.enforce_eager == c.capacity.config.enforce_eager);
    CHECK(f.capacity.num_blocks == c.capacity.num_blocks);
    // Fewer (or no) graphs than the default 512: more blocks.
    CHECK(f.capacity.num_blocks > plain.capacity.num_blocks);
  }
  CHECK(from_file("    cuda_graph_sizes: [1, 2, 4, 8]").capacity.config.cuda_graph_max_bs == 8);
  CHECK(from_file("    compilation_config: {cudagraph_mode: NONE}").capacity.config.enforce_eager);
  // No graphs: sizes given beside them are neither captured nor checked
  // against each other (vLLM empties the list), in a file as on the command line.
  for (const char* off : {"    compilation_config: {cudagraph_mode: NONE}",
                          "    optimization_level: 0", "    enforce_eager: true"}) {
    CAPTURE(off);
    const CheckReport f = from_file(std::string(off) +
                                    "\n    cudagraph_capture_sizes: [1, 2, 4]\n"
                                    "    max_cudagraph_capture_size: 8");
    CHECK(f.Pass());
    CHECK(f.capacity.num_blocks == from_file(off).capacity.num_blocks);
  }
  CHECK(from_cli("--enforce-eager --cudagraph-capture-sizes 1 2 4 --max-cudagraph-capture-size 8")
            .Pass());
  CHECK(from_file("    enforce_eager: false\n    compilation_config: {cudagraph_mode: none}")
            .capacity.config.enforce_eager);
  CHECK(!from_file("    compilation_config: {cudagraph_mode: null}").capacity.config.enforce_eager);
  // Level 0 with a mode given: the mode decides, as in vLLM.
  CHECK(!from_file("    optimization_level: 0\n    compilation_config: {cudagraph_mode: FULL}")
             .capacity.config.enforce_eager);
  const CheckReport level3 = from_file("    optimization_level: 3");
  CHECK(!level3.capacity.config.enforce_eager);
  CHECK(level3.capacity.num_blocks == plain.capacity.num_blocks);
  // A capture size that is not the list's largest: vLLM's startup error.
  const CheckReport odd = from_file(
      "    compilation_config: {max_cudagraph_capture_size: 32, cudagraph_capture_sizes: [1, 8, "
      "16]}");
  REQUIRE(!odd.items.empty());
  CHECK(!odd.items[0].pass);
  CHECK(odd.items[0].pos.line == 9);  // the compilation_config line
  CHECK(odd.items[0].detail.find("customized max_cudagraph_capture_size(=32) should be consistent "
                                 "with the max value of cudagraph_capture_sizes(=16)") !=
        std::string::npos);
  // Bad input: one line, the file, line and field.
  const auto error = [&](const std::string& args) {
    return ErrorOf(Replace(kGood, "max_model_len: 32768", "max_model_len: 32768\n" + args));
  };
  CHECK(error("    cudagraph_capture_sizes: 8") ==
        "d.yaml:9:30: cudagraph_capture_sizes: expected a list of batch sizes, e.g. [1, 2, 4, 8]");
  CHECK(error("    cudagraph_capture_sizes: [1, x]") ==
        "d.yaml:9:34: cudagraph_capture_sizes: expected a whole number, got 'x'");
  CHECK(
      error(
          "    cuda_graph_sizes: [1, 2]\n    compilation_config: {cudagraph_capture_sizes: [4]}") ==
      "d.yaml:10:51: compilation_config.cudagraph_capture_sizes: sets the same setting as "
      "'cuda_graph_sizes' (vLLM refuses both)");
  CHECK(error("    max_cudagraph_capture_size: 64\n    compilation_config: "
              "{max_cudagraph_capture_size: 32}") ==
        "d.yaml:10:54: compilation_config.max_cudagraph_capture_size: sets the same setting as "
        "'max_cudagraph_capture_size'");
  CHECK(error("    optimization_level: 4") ==
        "d.yaml:9:25: optimization_level: expected 0-3, got 4");
  CHECK(error("    compilation_config: [1]") ==
        "d.yaml:9:25: compilation_config: expected a map (or vLLM's JSON string) of compilation "
        "settings");
  CHECK(error("    compilation_config: '{\"cudagraph_capture_sizes\": [1, 2,'") ==
        "d.yaml:9:25: compilation_config: not valid JSON (column 35: expected a value, found the "
        "end)");
  CHECK(error("    compilation_config: {cudagraph_mode: [NONE]}") ==
        "d.yaml:9:42: compilation_config.cudagraph_mode: expected a mode such as NONE");
  CHECK(error("    compilation_config: {cudagraph_mode: NOEN}") ==
        "d.yaml:9:42: compilation_config.cudagraph_mode: expected NONE, PIECEWISE, FULL, "
        "FULL_DECODE_ONLY or FULL_AND_PIECEWISE, got 'NOEN'");
  // Inside a JSON string, errors point at the string.
  CHECK(error("    compilation_config: '{\"cudagraph_capture_sizes\": [1, 0, 4]}'") ==
        "d.yaml:9:25: compilation_config.cudagraph_capture_sizes: must be positive, got 0");
  CHECK(error("    compilation_config: '{\"max_cudagraph_capture_size\": \"abc\"}'") ==
        "d.yaml:9:25: compilation_config.max_cudagraph_capture_size: expected a whole number, "
        "got 'abc'");
  CHECK(error("    compilation_config: 'cudagraph_mode: NONE'") ==
        "d.yaml:9:25: compilation_config: expected a map, or vLLM's JSON object as a string "
        "('{\"cudagraph_mode\": \"NONE\"}')");
  // Other engines have no such keys.
  CHECK(ErrorOf(Replace(Replace(kGood, "name: vllm", "name: sglang"), "max_model_len: 32768",
                        "context_length: 32768\n    cuda_graph_sizes: [1, 2]"))
            .find("cuda_graph_sizes: unknown field in sglang args") != std::string::npos);
}

TEST_CASE("startup failures carry the engine's reason and point at the flag") {
  DeployConfig d = ParseDeployConfig(
      Replace(kGood, "max_model_len: 32768", "max_model_len: 2048\n    tensor_parallel_size: 2"),
      "d.yaml");
  d.model = "falcon-7b";
  CheckReport r = RunChecks(LoadModel("falcon-7b"), LoadHardware("h100-sxm"), d);
  REQUIRE(!r.items.empty());
  CHECK(r.items[0].name == "startup");
  CHECK(!r.items[0].pass);
  CHECK(r.items[0].detail ==
        "vLLM: Total number of attention heads (71) must be divisible by "
        "tensor parallel size (2).");
  CHECK(r.items[0].pos.line == 9);
  // An unsupported cache dtype.
  DeployConfig q = ParseDeployConfig(
      Replace(kGood, "max_model_len: 32768", "max_model_len: 32768\n    kv_cache_dtype: q4_0"),
      "d.yaml");
  CheckReport rq = RunChecks(LoadModel("llama-3.1-8b"), LoadHardware("h100-sxm"), q);
  CHECK(!rq.Pass());
  CHECK(rq.items[0].detail.rfind("vLLM: argument --kv-cache-dtype: invalid choice", 0) == 0);
  CHECK(rq.items[0].pos.line == 9);
  // fp16 activations with MXFP4 weights: vLLM refuses, SGLang runs them.
  for (const char* engine : {"vllm", "sglang"}) {
    CAPTURE(engine);
    DeployConfig m =
        ParseDeployConfig(Replace(Replace(kGood, "name: vllm", std::string("name: ") + engine),
                                  "max_model_len: 32768", "dtype: float16"),
                          "d.yaml");
    CheckReport rm = RunChecks(LoadModel("gpt-oss-20b"), LoadHardware("h100-sxm"), m);
    REQUIRE(!rm.items.empty());
    CHECK(rm.items[0].pass == (std::string(engine) == "sglang"));
  }
  // max_model_len over what the cache holds: vLLM's own ValueError.
  DeployConfig big =
      ParseDeployConfig(Replace(Replace(kGood, "max_model_len: 32768", "max_model_len: 128K"),
                                "gpu: h100-sxm", "gpu: l4"),
                        "d.yaml");
  CheckReport rb = RunChecks(LoadModel("llama-3.1-8b"), LoadHardware("l4"), big);
  CHECK(!rb.items[0].pass);
  CHECK(rb.items[0].detail.find("To serve at least one request with the models's max seq len "
                                "(131072)") != std::string::npos);
}

TEST_CASE("measured figures are the capacity model's, exactly") {
  DeployConfig d = ParseDeployConfig(kGood, "d.yaml");
  CheckReport r = RunChecks(LoadModel("llama-3.1-8b"), LoadHardware("h100-sxm"), d);
  REQUIRE(r.items.size() == 2);
  CHECK(r.items[1].name == "min_concurrency");
  CHECK(r.items[1].pass == (r.capacity.max_requests >= 8));
  CHECK(r.items[1].measured ==
        std::to_string(r.capacity.max_requests) + " requests of 32,768 tokens");
  CHECK(r.capacity.blocks_per_request == 32768 / 16);
  // max_num_seqs caps concurrency below what the cache holds.
  DeployConfig capped = ParseDeployConfig(
      Replace(kGood, "max_model_len: 32768", "max_model_len: 32768\n    max_num_seqs: 4"),
      "d.yaml");
  CheckReport rc = RunChecks(LoadModel("llama-3.1-8b"), LoadHardware("h100-sxm"), capped);
  CHECK(!rc.Pass());
  CHECK(rc.items[1].measured == "4 requests of 32,768 tokens");
  CHECK(rc.items[1].detail.find("capped by max_num_seqs 4") != std::string::npos);
}

TEST_CASE("engine.version and --vllm-version: an older vLLM's budget rules") {
  const ModelSpec m = LoadModel("llama-3.1-8b");
  const HardwareSpec h = LoadHardware("h100-sxm");
  CheckReport now = RunChecks(m, h, ParseDeployConfig(kGood, "d.yaml"));
  CheckReport old =
      RunChecks(m, h,
                ParseDeployConfig(Replace(kGood, "name: vllm\n", "name: vllm\n  version: 0.20.2\n"),
                                  "d.yaml"));
  CHECK(now.summary.rfind("llama-3.1-8b on 1 x h100-sxm, vllm tp 1,", 0) == 0);
  CHECK(old.summary.rfind("llama-3.1-8b on 1 x h100-sxm, vllm 0.20 tp 1,", 0) == 0);
  CHECK(old.capacity.config.memory_fraction == 0.9);
  CHECK(now.capacity.config.memory_fraction == 0.92);
  CHECK(now.capacity.kv_budget_bytes ==
        old.capacity.kv_budget_bytes + (now.capacity.usable_bytes - old.capacity.usable_bytes) -
            now.capacity.reserve.cuda_graph_bytes);
  auto cli = RunKvplan(
      "check --vllm-args \"vllm serve meta-llama/Llama-3.1-8B --max-model-len 32768\" "
      "--gpu h100-sxm --require-concurrency 1 --vllm-version 0.20");
  CHECK(cli.exit_code == 0);
  CHECK(cli.out.find("llama-3.1-8b on 1 x h100-sxm, vllm 0.20 tp 1, max_model_len 32,768") !=
        std::string::npos);
  // The environment variable before the command: 0.21's 0.92 without the
  // graph estimate; anything but 0 or 1 is refused (envs.py: bool(int(v))).
  DeployConfig off = ParseVllmCommand(
      "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 vllm serve meta-llama/Llama-3.1-8B "
      "--max-model-len 32768");
  off.gpu = "h100-sxm";
  CheckReport ro = RunChecks(m, h, off);
  CHECK(ro.capacity.config.memory_fraction == 0.92);
  CHECK(ro.capacity.kv_budget_bytes ==
        now.capacity.kv_budget_bytes + now.capacity.reserve.cuda_graph_bytes);
  CHECK(ro.summary.find("vllm (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0) tp 1") !=
        std::string::npos);
  CHECK_THROWS_WITH(ParseVllmCommand("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=yes vllm serve x"),
                    "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: expected 0 or 1, got 'yes'");
}

namespace {

// A strict little XML 1.0 well-formedness check (no DTDs): balanced tags,
// quoted attributes, only the five predefined entities. Counts elements by
// name so the test can compare them with the report's totals.
struct XmlCheck {
  explicit XmlCheck(const std::string& text) : s(text) {}
  const std::string& s;
  size_t i = 0;
  std::map<std::string, int> count;
  std::map<std::string, std::string> root_attrs;
  std::string error;

  bool Fail(const std::string& why) {
    if (error.empty()) error = why + " at offset " + std::to_string(i);
    return false;
  }
  bool Name(std::string& out) {
    size_t b = i;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' ||
                            s[i] == '-' || s[i] == '.' || s[i] == ':'))
      ++i;
    out = s.substr(b, i - b);
    return !out.empty() || Fail("expected a name");
  }
  bool Text(char stop) {
    while (i < s.size() && s[i] != stop) {
      if (s[i] == '<' && stop != '<') return Fail("raw < in attribute");
      if (s[i] == '&') {
        size_t e = s.find(';', i);
        std::string ent = e == std::string::npos ? "" : s.substr(i, e - i + 1);
        if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;" &&
            ent != "&apos;") {
          return Fail("bad entity");
        }
        i = e;
      }
      ++i;
    }
    return true;
  }
  void Space() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  bool Element(bool root) {
    if (s[i] != '<') return Fail("expected <");
    ++i;
    std::string name;
    if (!Name(name)) return false;
    ++count[name];
    for (;;) {
      Space();
      if (s.compare(i, 2, "/>") == 0) {
        i += 2;
        return true;
      }
      if (s[i] == '>') {
        ++i;
        break;
      }
      std::string attr;
      if (!Name(attr)) return false;
      if (s[i] != '=' || s[i + 1] != '"') return Fail("unquoted attribute " + attr);
      i += 2;
      size_t b = i;
      if (!Text('"')) return false;
      if (root) root_attrs[attr] = s.substr(b, i - b);
      ++i;
    }
    for (;;) {
      if (!Text('<')) return false;
      if (i >= s.size()) return Fail("unclosed " + name);
      if (s.compare(i, 2, "</") == 0) {
        i += 2;
        std::string end;
        if (!Name(end)) return false;
        if (end != name) return Fail("</" + end + "> closes <" + name + ">");
        Space();
        if (s[i] != '>') return Fail("expected >");
        ++i;
        return true;
      }
      if (!Element(false)) return false;
    }
  }
  bool Document() {
    if (s.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0) != 0) return Fail("no prolog");
    i = s.find("?>") + 2;
    Space();
    if (!Element(true)) return false;
    Space();
    return i == s.size() || Fail("content after the root");
  }
};

}  // namespace

TEST_CASE("junit output is well-formed XML with one testcase per check") {
  auto r = RunKvplan("check " + SourcePath("examples") + " --format junit");
  CHECK(r.exit_code == 1);
  XmlCheck x(r.out);
  CHECK_MESSAGE(x.Document(), x.error);
  CHECK(x.count["testsuites"] == 1);
  CHECK(x.count["testsuite"] == 5);
  CHECK(std::to_string(x.count["testcase"]) == x.root_attrs["tests"]);
  CHECK(std::to_string(x.count["failure"]) == x.root_attrs["failures"]);
  // falcon-7b's tp 2 fails at startup, so its min_concurrency is skipped.
  CHECK(x.count["failure"] == 2);
  CHECK(x.count["skipped"] == 1);
  CHECK(x.root_attrs["skipped"] == "1");
  CHECK(
      r.out.find("<failure message=\"measured 6 requests of 131,072 tokens, required &gt;= 8\"") !=
      std::string::npos);
  // The checker itself rejects what is not XML.
  std::string broken = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a><b></a>";
  XmlCheck y(broken);
  CHECK(!y.Document());
  std::string amp = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<a x=\"1 & 2\"/>";
  XmlCheck z(amp);
  CHECK(!z.Document());
  // An invalid config is an <error> testcase, and exits 2.
  std::string dir = TempDir();
  WriteFile(dir, "bad.yaml", "model: [\n");
  auto b = RunKvplan("check bad.yaml --format junit", dir);
  CHECK(b.exit_code == 2);
  XmlCheck xb(b.out);
  CHECK_MESSAGE(xb.Document(), xb.error);
  CHECK(xb.count["error"] == 1);
}

TEST_CASE("github annotations carry the file and the requirement's line") {
  auto r =
      RunKvplan("check " + SourcePath("examples/llama-70b-long-context.yaml") + " --format github");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("::error file=" + SourcePath("examples/llama-70b-long-context.yaml") +
                   ",line=16,col=20,title=kvplan check min_concurrency::measured 6 requests of "
                   "131,072 tokens, required >= 8") != std::string::npos);
  // An invalid file becomes an annotation at its error's line.
  std::string dir = TempDir();
  WriteFile(dir, "bad.yaml", Replace(kGood, "min_concurrency: 8", "min_concurrency: x"));
  auto b = RunKvplan("check bad.yaml --format github", dir);
  CHECK(b.exit_code == 2);
  CHECK(b.out ==
        "::error file=bad.yaml,line=10,col=20,title=kvplan check%3A invalid "
        "config::bad.yaml:10:20: min_concurrency: expected a whole number, got 'x'\n");
}

TEST_CASE("json output lists every check") {
  auto r = RunKvplan("check " + SourcePath("examples/llama-8b-chat.yaml") + " --format json");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"passed\": 1") != std::string::npos);
  CHECK(r.out.find("\"name\": \"min_headroom_percent\"") != std::string::npos);
}

TEST_CASE("shell splitting handles quotes, escapes and continuations") {
  CHECK(ShellSplit("vllm serve m") == std::vector<std::string>{"vllm", "serve", "m"});
  CHECK(ShellSplit("  a   'b c'  \"d \\\"e\\\"\" f\\ g ") ==
        std::vector<std::string>{"a", "b c", "d \"e\"", "f g"});
  CHECK(ShellSplit("a'b'\"c\"d") == std::vector<std::string>{"abcd"});
  CHECK(ShellSplit("x \\\n  --y 1") == std::vector<std::string>{"x", "--y", "1"});
  CHECK(ShellSplit("'it''s'") == std::vector<std::string>{"its"});
  CHECK(ShellSplit("\"a'b\" 'c\"d'") == std::vector<std::string>{"a'b", "c\"d"});
  CHECK(ShellSplit("''") == std::vector<std::string>{""});
  CHECK_THROWS_WITH(ShellSplit("a 'b"), "--vllm-args: unterminated ' quote starting at column 3");
  CHECK_THROWS_WITH(ShellSplit("a \"b\\\""),
                    "--vllm-args: unterminated \" quote starting at column 3");
}

TEST_CASE("vLLM command lines: aliases, --flag=value, ignored flags") {
  DeployConfig d = ParseVllmCommand(
      "CUDA_VISIBLE_DEVICES=0,1 vllm serve meta-llama/Llama-3.1-8B --max-model-len=32k -tp 2 "
      "--gpu-memory-utilization 0.85 --port 8000 --enable-prefix-caching --kv_cache_dtype fp8 "
      "--api-key 'secret key' --max-num-seqs 64 --disable-log-requests");
  CHECK(d.model == "meta-llama/Llama-3.1-8B");
  CHECK(*d.args.max_model_len == 32000);
  CHECK(*d.args.tp == 2);
  CHECK(*d.args.memory_fraction == doctest::Approx(0.85));
  CHECK(*d.args.prefix_caching);
  CHECK(*d.args.kv_cache_dtype == "fp8");
  CHECK(*d.args.max_num_seqs == 64);
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0] ==
        "ignored (no effect on the KV cache): CUDA_VISIBLE_DEVICES=..., --port ..., "
        "--api-key ..., --disable-log-requests");
  // Values are not echoed: an API key or token would land in the CI log.
  CHECK(d.notes[0].find("secret") == std::string::npos);
  DeployConfig py = ParseVllmCommand(
      "python -m vllm.entrypoints.openai.api_server --model \"/models/my llama\" "
      "--pipeline-parallel-size 2 --no-enable-prefix-caching");
  CHECK(py.model == "/models/my llama");
  CHECK(*py.args.pp == 2);
  CHECK(!*py.args.prefix_caching);
  // As `vllm serve`: the positional model wins over --model, in either order.
  CHECK(ParseVllmCommand("vllm serve a --model b").model == "a");
  CHECK(ParseVllmCommand("vllm serve --model b a").model == "a");
  CHECK(ParseVllmCommand("vllm serve --model b").model == "b");
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve a b"),
                    "--vllm-args: unexpected argument 'b' (the model is already 'a')");
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve m --max-model-len lots"),
                    "--vllm-args: --max-model-len: 'lots' is not an integer (digits only, as the "
                    "engine's int() reads it)");
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve --port 8000"),
                    "--vllm-args: no model (expected `vllm serve MODEL ...` or --model)");
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve m -tp"), "--vllm-args: -tp needs a value");
  CHECK_THROWS_WITH(
      ParseVllmCommand("vllm serve m --gpu-memory-utilization 90"),
      "--vllm-args: --gpu-memory-utilization: expected a fraction in (0, 1], got '90'");
}

TEST_CASE("vLLM --dtype and --quantization: the model's dtype and the weights' format, both kept") {
  // --quantization sets the weight format, --dtype the model (activation)
  // dtype, which an "auto" cache follows; in either order. (Both once wrote
  // one field, so the last flag won: fp8 weights were counted as bf16.)
  const std::string head =
      "check --vllm-args \"vllm serve meta-llama/Llama-3.1-8B --max-model-len 8K ";
  const std::string tail = "\" --gpu h100-sxm --require-concurrency 1 --format json";
  // The summary names both: "... max_model_len 8,192, fp8 weights, bf16 cache".
  const auto tokens = [&](const std::string& flags, const std::string& weights,
                          const std::string& cache) {
    const auto r = RunKvplan(head + flags + tail);
    CAPTURE(flags);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("max_model_len 8,192, " + weights + " weights, " + cache + " cache\"") !=
          std::string::npos);
    const size_t at = r.out.find("\"kv_cache_tokens\": ");
    REQUIRE(at != std::string::npos);
    return std::stoull(r.out.substr(at + 19));
  };
  const uint64_t fp8 = tokens("--quantization fp8", "fp8", "bf16");
  CHECK(tokens("--dtype bfloat16 --quantization fp8", "fp8", "bf16") == fp8);
  CHECK(tokens("--quantization fp8 --dtype bfloat16", "fp8", "bf16") == fp8);
  CHECK(tokens("--dtype float16 --quantization fp8", "fp8", "fp16") ==
        fp8);                                               // same bytes per element
  CHECK(tokens("--dtype bfloat16", "bf16", "bf16") < fp8);  // bf16 weights leave less for the cache
  // --dtype float32 named outright: fp32 weights and an fp32 cache (vLLM's
  // model dtype; only "auto" serves an fp32 checkpoint in 16 bits).
  CHECK(tokens("--dtype float", "fp32", "fp32") == tokens("--dtype float32", "fp32", "fp32"));
  CHECK(tokens("--dtype float32", "fp32", "fp32") < tokens("--dtype float16", "fp16", "fp16"));
  // A quantized checkpoint keeps its weights under a float --dtype: vLLM
  // reads DeepSeek-V3's quantization_config (fp8, 128 x 128 blocks) whatever
  // the activations are. bf16 weights would not fit 8 x H200 at all.
  const auto ds = [&](const std::string& flags) {
    return RunKvplan("check --vllm-args \"vllm serve deepseek-ai/DeepSeek-V3 -tp 8 " + flags +
                     "\" --gpu h200 --require-concurrency 1 --format json");
  };
  const auto ds_auto = ds("");
  CHECK(ds_auto.exit_code == 0);
  const auto ds_bf16 = ds("--dtype bfloat16");
  CHECK(ds_bf16.exit_code == 0);
  CHECK(ds_bf16.out == ds_auto.out);
  CHECK(ds("--quantization fp8").out == ds_auto.out);
  // What vLLM refuses at startup: fp8 weights under fp32 activations, and a
  // --quantization that is not the checkpoint's.
  const auto ds_f32 = ds("--dtype float32");
  CHECK(ds_f32.exit_code == 1);
  CHECK(ds_f32.out.find("fp32 activations are not supported for fp8 weights (supported: bf16, "
                        "fp16)") != std::string::npos);
  const auto ds_awq = ds("--quantization awq");
  CHECK(ds_awq.exit_code == 1);
  CHECK(ds_awq.out.find("Quantization method specified in the model config (fp8) does not match "
                        "the quantization method specified in the `quantization` argument (awq)") !=
        std::string::npos);
  // vLLM's MXFP4 kernels take bf16 activations only; SGLang's fp16 too.
  const std::string oss =
      "check --vllm-args \"vllm serve openai/gpt-oss-20b --dtype float16\" "
      "--gpu h100-sxm --require-concurrency 1";
  CHECK(RunKvplan(oss).out.find("fp16 activations are not supported for mxfp4 weights "
                                "(supported: bf16)") != std::string::npos);
  // Every method vLLM accepts is known; a bad value lists them all.
  for (const char* method : {"awq_marlin", "gptq_marlin", "marlin", "compressed-tensors",
                             "bitsandbytes", "modelopt", "modelopt_fp4", "experts_int8", "gguf"}) {
    CAPTURE(method);
    CHECK(RunKvplan(head + "--quantization " + method + tail).exit_code != 2);
  }
  const auto bad = RunKvplan(head + "--quantization bitsandbits" + tail);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err ==
        "kvplan: error: --vllm-args: --quantization: unknown weight dtype "
        "'bitsandbits' (known: " +
            KnownWeightFormats() + ")\n");
}

TEST_CASE("--vllm-args: docker commands, '--', a flag without its value, a checkpoint folder") {
  // `docker run ... vllm/vllm-openai[:tag] ARGS`: ARGS are vLLM's, -e / --env
  // are its environment (the values of ignored ones are not echoed).
  DeployConfig d = ParseVllmCommand(
      "docker run --runtime nvidia --gpus all -v ~/.cache/huggingface:/root/.cache/huggingface "
      "-e VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 --env HF_TOKEN=hf_secret -p 8000:8000 --ipc=host "
      "vllm/vllm-openai:latest --model meta-llama/Llama-3.1-8B --max-model-len 200000 -tp 2");
  CHECK(d.model == "meta-llama/Llama-3.1-8B");
  CHECK(*d.args.max_model_len == 200000);
  CHECK(*d.args.tp == 2);
  CHECK(d.vllm_allow_long_max_model_len);
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0] == "ignored (no effect on the KV cache): HF_TOKEN=...");
  CHECK(ParseVllmCommand("docker run -eVLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 vllm/vllm-openai "
                         "--model m")
            .vllm_graph_profiling);
  // The image is the image word, not a container named after it.
  CHECK(ParseVllmCommand("docker run --name vllm-openai-srv -v /srv/vllm-openai:/data "
                         "docker.io/vllm/vllm-openai@sha256:abc --model m")
            .model == "m");
  CHECK_THROWS_WITH(ParseVllmCommand("docker run -it ubuntu vllm serve m"),
                    "--vllm-args: a docker command without the vllm/vllm-openai image: give the "
                    "arguments after the image, or `vllm serve MODEL ...`");
  // argparse reads what follows "--" as positional: vllm serve refuses it.
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve m -- --max-model-len 4096"),
                    "--vllm-args: '--' ends the options: vllm serve would read '--max-model-len' "
                    "as a positional argument and refuse it");
  CHECK(ParseVllmCommand("vllm serve m --").model == "m");
  // A flag followed by another flag was given no value (not "negative").
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve m --max-model-len --max-num-seqs 4"),
                    "--vllm-args: --max-model-len needs a value (the next word is the flag "
                    "--max-num-seqs)");
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve m --max-model-len -tp 2"),
                    "--vllm-args: --max-model-len needs a value (the next word is the flag -tp)");
  // Flags kvplan does not read: a switch takes no value (the model may
  // follow it), a list flag takes all its values.
  DeployConfig sw = ParseVllmCommand(
      "vllm serve --trust-remote-code meta-llama/Llama-3.1-8B "
      "--enable-chunked-prefill --served-model-name a b c "
      "--lora-modules x=/l/x y=/l/y --max-model-len 8K");
  CHECK(sw.model == "meta-llama/Llama-3.1-8B");
  CHECK(*sw.args.max_model_len == 8192);
  // Launchers and their environment: `env`, `sudo -E`, `uv run`; values never echoed.
  DeployConfig launched = ParseVllmCommand(
      "sudo -E env HF_TOKEN=hf_SECRET VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 uv run vllm serve m");
  CHECK(launched.model == "m");
  CHECK(launched.vllm_allow_long_max_model_len);
  REQUIRE(launched.notes.size() == 1);
  CHECK(launched.notes[0] == "ignored (no effect on the KV cache): HF_TOKEN=...");
  // Nor in the errors that quote the next word.
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve m --max-model-len --api-key=sk-SECRET"),
                    "--vllm-args: --max-model-len needs a value (the next word is the flag "
                    "--api-key=...)");
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve m -- --api-key=sk-SECRET"),
                    "--vllm-args: '--' ends the options: vllm serve would read '--api-key=...' as "
                    "a positional argument and refuse it");
  // '--' before the only positional: it is the model, as argparse reads it.
  CHECK(ParseVllmCommand("vllm serve -- m").model == "m");
  // More list flags, a negative value, a switch before the model, a mount
  // that names the image's path.
  DeployConfig more = ParseVllmCommand(
      "vllm serve --allow-credentials m --cuda-graph-sizes 1 2 4 8 --seed -1 --max-num-seqs 8");
  CHECK(more.model == "m");
  CHECK(*more.args.max_num_seqs == 8);
  CHECK(more.notes[0].find("-1") == std::string::npos);
  CHECK(ParseVllmCommand("docker run -v /srv/vllm/vllm-openai:/cache vllm/vllm-openai:latest "
                         "--model m")
            .model == "m");
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve m token=hf_SECRET"),
                    "--vllm-args: unexpected argument 'token=...' (the model is already 'm')");
  // `vllm serve ./folder`: a downloaded checkpoint's config.json.
  const std::string dir = TempDir() + "/Qwen3-8B";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(SourcePath("tests/data/hf/qwen3-8b.json"), dir + "/config.json");
  auto r =
      RunKvplan("check --gpu h100-sxm --vllm-args 'vllm serve " + dir + " --max-model-len 4096'");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("--vllm-args: qwen3-8b on 1 x h100-sxm") !=
        std::string::npos);  // the folder names it
  auto size = RunKvplan("size " + dir + " -c 1K --format json");
  CHECK(size.exit_code == 0);
  CHECK(size.out.find("\"bytes_per_token\": 147456") != std::string::npos);  // 36 x 8 x 128 x 2 x 2
  const std::string empty = TempDir() + "/empty-model";
  std::filesystem::create_directories(empty);
  CheckOneLineError(
      RunKvplan("size " + empty),
      empty +
          ": a folder without config.json (a model folder is a Hugging Face checkpoint "
          "with its config.json)");
  CheckOneLineError(RunKvplan("check --gpu h100-sxm --vllm-args 'vllm serve ./no-such-model'"),
                    "model: ./no-such-model: cannot open file: No such file or directory");
}

TEST_CASE("check --vllm-args runs the same checks as a config file") {
  auto r = RunKvplan(
      "check --vllm-args \"vllm serve meta-llama/Llama-3.1-8B --max-model-len 32768 "
      "-tp 2 --port 8000\" --gpu h100-sxm --require-concurrency 8");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("llama-3.1-8b on 2 x h100-sxm, vllm tp 2, max_model_len 32,768") !=
        std::string::npos);
  CHECK(r.out.find("note: ignored (no effect on the KV cache): --port ...") != std::string::npos);
  auto f = RunKvplan(
      "check --vllm-args 'vllm serve falcon-7b -tp 2' --gpu h100-sxm "
      "--require-concurrency 1");
  CHECK(f.exit_code == 1);
  CHECK(f.out.find("Total number of attention heads (71) must be divisible by tensor parallel "
                   "size (2).") != std::string::npos);
  auto no_gpu = RunKvplan("check --vllm-args 'vllm serve gpt2'");
  CHECK(no_gpu.exit_code == 2);
  CHECK(no_gpu.err ==
        "kvplan: error: --vllm-args needs --gpu (a catalog name or a profile YAML)\n");
}

TEST_CASE("latency requirements use the latency model's figures") {
  DeployConfig d = ParseDeployConfig(std::string(kGood) +
                                         "  latency:\n    batch: 8\n    context: 8K\n"
                                         "    max_tpot_ms: 1000\n    max_ttft_ms: 0.001\n",
                                     "d.yaml");
  ModelSpec m = LoadModel("llama-3.1-8b");
  HardwareSpec h = LoadHardware("h100-sxm");
  CheckReport r = RunChecks(m, h, d);
  REQUIRE(r.items.size() == 4);
  CHECK(r.items[2].name == "max_tpot_ms");
  CHECK(r.items[2].pass);
  CHECK(r.items[2].pos.line == 14);
  CHECK(r.items[3].name == "max_ttft_ms");
  CHECK(!r.items[3].pass);
  CHECK(r.items[3].pos.line == 15);
  ModelCost cost = ComputeModelCost(m, FindCacheDtype("bf16"), FindWeightFormat("bf16"), 1);
  StepEstimate e = EstimateDecodeStep(cost, h, 8192, 8);
  CHECK(r.items[2].measured == fmt::format("{:.2f} ms", e.seconds * 1e3));
  CHECK(r.items[2].required == "<= 1000 ms at batch 8, context 8,192");
  StepEstimate p = EstimatePrefill(cost, h, 8192);
  CHECK(r.items[3].measured == fmt::format("{:.1f} ms", p.seconds * 1e3));
}

TEST_CASE("check: llama.cpp's cache is the n_ctx cells it allocates, not the free memory") {
  // Two slots of 16K in 32K cells fill the cache: no headroom, whatever
  // memory is left on an H100 (it once read 93.7 % spare, 128 of 2,042 blocks).
  std::string dir = TempDir();
  WriteFile(dir, "lc.yaml",
            "name: two-slots\nmodel: llama-3.1-8b\nhardware:\n  gpu: h100-sxm\nengine:\n"
            "  name: llama.cpp\n  args: {ctx_size: 32768, parallel: 2}\nrequirements:\n"
            "  min_concurrency: 2\n  min_headroom_percent: 10\n  min_tokens_in_cache: 1K\n");
  auto r = RunKvplan("check '" + dir + "/lc.yaml'");
  CHECK(r.out.find("measured 32,768 tokens, required >= 1,024") != std::string::npos);
  CHECK(r.out.find("128 blocks x 256 tokens") != std::string::npos);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("128 KV blocks of 256 tokens (32,768 tokens") != std::string::npos);
  CHECK(r.out.find("128 blocks / 64 blocks per 16,384-token request = 2.00x") != std::string::npos);
  CHECK(r.out.find("FAIL  min_headroom_percent  measured 0.0% of the cache spare") !=
        std::string::npos);
  CHECK(r.out.find("2 requests of 16,384 tokens hold 128 of 128 blocks") != std::string::npos);
}

TEST_CASE("check: an empty folder is an invalid entry in every format, never an empty document") {
  std::string dir = TempDir() + "/none";
  std::filesystem::create_directories(dir);
  auto j = RunKvplan("check '" + dir + "' --format junit");
  CHECK(j.exit_code == 2);
  CHECK(j.out.find("<testsuites name=\"kvplan check\" tests=\"1\" failures=\"0\" errors=\"1\" "
                   "skipped=\"0\">") != std::string::npos);
  CHECK(j.out.find("no deployment configs (*.yaml, *.yml) in this folder") != std::string::npos);
  auto js = RunKvplan("check '" + dir + "' --format json");
  CHECK(js.exit_code == 2);
  CHECK(js.out.find("no deployment configs") != std::string::npos);
}

TEST_CASE(
    "check --vllm-args: VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 lets max_model_len pass the model's") {
  const std::string cmd =
      "vllm serve Qwen/Qwen3-8B --max-model-len 65536\" --gpu h100-sxm "
      "--require-concurrency 1";
  auto refused = RunKvplan("check --vllm-args \"" + cmd);
  CHECK(refused.exit_code == 1);
  CHECK(refused.out.find("FAIL  startup") != std::string::npos);
  for (const char* v : {"1", "true", "TRUE"}) {
    CAPTURE(v);
    auto allowed = RunKvplan(std::string("check --vllm-args \"VLLM_ALLOW_LONG_MAX_MODEL_LEN=") + v +
                             " " + cmd);
    CHECK(allowed.exit_code == 0);
    CHECK(allowed.out.find("PASS: all 2 checks pass") != std::string::npos);
    CHECK(allowed.out.find("vLLM takes it (VLLM_ALLOW_LONG_MAX_MODEL_LEN=1), the model was not "
                           "trained that long") != std::string::npos);
  }
  auto off = RunKvplan("check --vllm-args \"VLLM_ALLOW_LONG_MAX_MODEL_LEN=0 " + cmd);
  CHECK(off.exit_code == 1);
  // Other variables are named as ignored, not dropped silently.
  auto other = RunKvplan("check --vllm-args \"HF_HOME=/x " + cmd);
  CHECK(other.out.find("ignored (no effect on the KV cache): HF_HOME=...") != std::string::npos);
  auto token = RunKvplan("check --vllm-args \"HF_TOKEN=hf_abc123 " + cmd);
  CHECK(token.out.find("hf_abc123") == std::string::npos);
}

TEST_CASE("check text: one request is singular") {
  auto one = RunKvplan(
      "check --vllm-args \"VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve meta-llama/Llama-3.1-8B "
      "--max-model-len 300000\" --gpu h100-sxm --require-concurrency 1");
  CHECK(one.out.find("measured 1 request of 300,000 tokens, required >= 1") != std::string::npos);
  auto four = RunKvplan(
      "check --vllm-args \"vllm serve meta-llama/Llama-3.1-8B --max-model-len 100000\" --gpu "
      "h100-sxm --require-concurrency 1");
  CHECK(four.out.find("measured 4 requests of 100,000 tokens") != std::string::npos);
}

TEST_CASE("check FOLDER: hidden folders are not entered, and a file named twice is checked once") {
  std::string dir = TempDir() + "/repo";
  std::filesystem::create_directories(dir + "/.github/workflows");
  std::filesystem::create_directories(dir + "/deploy");
  WriteFile(dir + "/.github/workflows", "ci.yml", "on: push\njobs: {}\n");
  WriteFile(dir + "/deploy", "good.yaml", kGood);
  auto r = RunKvplan("check '" + dir + "' '" + dir + "/deploy/good.yaml' --format json");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("ci.yml") == std::string::npos);
  size_t n = 0;
  for (size_t at = r.out.find("good.yaml"); at != std::string::npos;
       at = r.out.find("good.yaml", at + 1))
    ++n;
  CHECK(n == 1);
}

TEST_CASE("check FOLDER: a config whose symlink leads nowhere fails the gate, not skipped") {
  std::string dir = TempDir() + "/links";
  std::filesystem::create_directories(dir);
  WriteFile(dir, "good.yaml", kGood);
  std::filesystem::create_symlink(dir + "/moved-away.yaml", dir + "/prod.yaml");
  // Two links to each other: no crash, both listed, both fail.
  std::filesystem::create_symlink(dir + "/loop-b.yaml", dir + "/loop-a.yaml");
  std::filesystem::create_symlink(dir + "/loop-a.yaml", dir + "/loop-b.yaml");
  auto r = RunKvplan("check '" + dir + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("good.yaml") != std::string::npos);
  CHECK(r.err.find(dir + "/prod.yaml: cannot open file: No such file or directory") !=
        std::string::npos);
  CHECK(r.err.find(dir + "/loop-a.yaml: cannot open file: Too many levels of symbolic links") !=
        std::string::npos);
  CHECK(r.err.find("internal error") == std::string::npos);
  auto j = RunKvplan("check '" + dir + "' --format junit");
  CHECK(j.exit_code == 2);
  CHECK(j.out.find("prod.yaml") != std::string::npos);
  CHECK(j.out.find("errors=\"3\"") != std::string::npos);
  // A FIFO named *.yaml (or a link to one) would block the read forever,
  // hanging the CI job: it is an error, not opened.
  REQUIRE(mkfifo((dir + "/pipe.yaml").c_str(), 0644) == 0);
  std::filesystem::create_symlink(dir + "/pipe.yaml", dir + "/to-pipe.yaml");
  auto f = RunKvplan("check '" + dir + "'");
  CHECK(f.exit_code == 2);
  CHECK(f.err.find(dir + "/pipe.yaml: a FIFO, not a config file") != std::string::npos);
  // (the link is the same file as pipe.yaml: reported once, as a file named twice is)
  CHECK(f.err.find("to-pipe.yaml") == std::string::npos);
  // A pipe named on the command line is read to its end (`size <(cat spec)`).
  const std::string piped = "cat '" + SourcePath("models/gpt2.yaml") +
                            "' | '" KVPLAN_BINARY "' size /dev/stdin -c 1K >/dev/null 2>&1";
  CHECK(std::system(piped.c_str()) == 0);
}

TEST_CASE("the CUDA-graph sizes: deploy keys and --vllm-args, in vLLM's spellings") {
  // The capture size a command line states: max_cudagraph_capture_size, else
  // the largest listed size (before the engine's max_num_batched_tokens cap).
  const auto graphs = [](const std::string& cmd) -> uint64_t {
    const DeployConfig d = ParseVllmCommand(cmd);
    if (!d.args.cuda_graph_sizes.empty()) {
      return *std::max_element(d.args.cuda_graph_sizes.begin(), d.args.cuda_graph_sizes.end());
    }
    return d.args.cuda_graph_max_bs.value_or(0);
  };
  CHECK(graphs("vllm serve m --cudagraph-capture-sizes 1 2 4 64 --max-num-seqs 8") == 64);
  CHECK(graphs("vllm serve m --cuda-graph-sizes 1 2 4 64") == 64);  // the older name
  // nargs='+': every word up to the next flag is a size, as argparse reads it.
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve --cudagraph-capture-sizes 8 16 m"),
                    "--vllm-args: --cudagraph-capture-sizes: 'm' is not a batch size (a list "
                    "takes every word up to the next flag)");
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve m --cuda-graph-sizes=1,2,4K"),
                    "--vllm-args: --cuda-graph-sizes: '4K' is not a batch size (a list takes "
                    "every word up to the next flag)");
  CHECK(graphs("vllm serve m --cuda-graph-sizes=1,2,24") == 24);
  CHECK(graphs("vllm serve m -cc.max_cudagraph_capture_size 32") == 32);
  CHECK(graphs("vllm serve m --compilation-config.max_cudagraph_capture_size=16") == 16);
  CHECK(graphs("vllm serve m -cc.cudagraph_capture_sizes '[1, 2, 96]'") == 96);
  CHECK(graphs("vllm serve m --max-cudagraph-capture-size 40") == 40);
  CHECK(graphs("vllm serve m --compilation-config '{\"cudagraph_capture_sizes\": [1, 2, 48]}'") ==
        48);
  CHECK(graphs("vllm serve m -O '{\"max_cudagraph_capture_size\": 8}'") == 8);      // older vLLM
  CHECK(graphs("vllm serve m -cc '{\"max_cudagraph_capture_size\": null}'") == 0);  // the default
  // Both given: two lists are refused; a capture size beside a list must be
  // the largest size vLLM keeps (below).
  CHECK(graphs("vllm serve m --max-cudagraph-capture-size 4 --cuda-graph-sizes 1 2 4") == 4);
  CHECK_THROWS_WITH(
      ParseVllmCommand("vllm serve m --cuda-graph-sizes 1 2 -cc.cudagraph_capture_sizes [4]"),
      "--vllm-args: --cuda-graph-sizes and cudagraph_capture_sizes both list the CUDA-graph sizes "
      "(vLLM refuses both)");
  // Graphs off: optimization level 0 (vLLM 0.12 on) or cudagraph_mode NONE.
  for (const char* off :
       {"vllm serve m -O0", "vllm serve m -O 0", "vllm serve m --optimization-level=0",
        "vllm serve m -cc.cudagraph_mode=NONE",
        "vllm serve m -cc '{\"cudagraph_mode\": \"NONE\", \"level\": 3}'"}) {
    CAPTURE(off);
    const DeployConfig d = ParseVllmCommand(off);
    CHECK(d.args.enforce_eager.value_or(false));
  }
  const DeployConfig none =
      ParseVllmCommand("vllm serve m -cc '{\"cudagraph_mode\": \"NONE\", \"level\": 3}'");
  CHECK(none.args.NameOf("enforce_eager") == "cudagraph_mode NONE");
  REQUIRE(none.notes.size() == 1);
  CHECK(none.notes[0] == "ignored (no effect on the KV cache): -cc level");
  // Another optimization level is no graph size and takes no more than its word.
  const DeployConfig level = ParseVllmCommand("vllm serve m -O3 --max-model-len 4K");
  CHECK(*level.args.max_model_len == 4096);
  CHECK(!level.args.cuda_graph_max_bs);
  CHECK(!level.args.enforce_eager);
  REQUIRE(level.notes.size() == 1);
  CHECK(level.notes[0] == "ignored (no effect on the KV cache): -O ...");
  CHECK(ParseVllmCommand("vllm serve -O 3 m").model == "m");
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve -O meta-llama/Llama-3.1-8B"),
                    "--vllm-args: -O: 'meta-llama/Llama-3.1-8B' is neither an optimization level "
                    "(0-3) nor a JSON object");
  // vLLM reads more flags from --config FILE; kvplan would check other settings.
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve m --config serve.yaml"),
                    "--vllm-args: --config FILE is not read: give its settings as flags, or write "
                    "them in a deploy config (kvplan check FILE)");
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve m --cuda-graph-sizes"),
                    "--vllm-args: --cuda-graph-sizes needs a value");
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve m --cuda-graph-sizes 0"),
                    "--vllm-args: --cuda-graph-sizes: a graph batch size must be positive, got 0");
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve m -cc.max_cudagraph_capture_size 0"),
                    "--vllm-args: -cc.max_cudagraph_capture_size: a graph batch size must be "
                    "positive, got 0");
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve m --max-cudagraph-capture-size 64k"),
                    "--vllm-args: --max-cudagraph-capture-size: '64k' is not a batch size");
  CHECK_THROWS_WITH(
      ParseVllmCommand("vllm serve m --compilation-config '{\"max_cudagraph_capture_size\": [1]}'"),
      "--vllm-args: --compilation-config max_cudagraph_capture_size: expected a number");

  // vLLM caps the capture at max_num_batched_tokens and captures only the
  // listed sizes up to it (config/vllm.py).
  const ModelSpec llama = LoadModel("llama-3.1-8b");
  const HardwareSpec h100 = LoadHardware("h100-sxm");
  const auto captured = [&](const std::string& flags) {
    return RunChecks(
               llama, h100,
               ParseVllmCommand("vllm serve meta-llama/Llama-3.1-8B --max-model-len 8K " + flags))
        .capacity.config.cuda_graph_max_bs;
  };
  CHECK(captured("--max-num-batched-tokens 2048 --cuda-graph-sizes 1 2 4096") == 2);
  CHECK(captured("--max-cudagraph-capture-size 20000") == 8192);  // H100 default: 8192 tokens
  CHECK(captured("--max-num-batched-tokens 1024 --max-num-seqs 1024") == 512);
  CHECK(captured("--max-num-batched-tokens 256 --max-num-seqs 1024") == 256);
  CHECK(captured("--max-num-batched-tokens 16 --cuda-graph-sizes 32 64") == 0);  // none captured
  // The capture size must be the largest size kept under max_num_batched_tokens,
  // vLLM's startup error otherwise.
  CHECK(captured("--max-num-batched-tokens 256 --max-cudagraph-capture-size 4 "
                 "--cudagraph-capture-sizes 1 2 4 512") == 4);
  const CheckReport bad = RunChecks(
      llama, h100,
      ParseVllmCommand("vllm serve meta-llama/Llama-3.1-8B --max-num-batched-tokens 256 "
                       "--max-cudagraph-capture-size 512 --cudagraph-capture-sizes 1 2 4 512"));
  REQUIRE(!bad.items.empty());
  CHECK(bad.items[0].name == "startup");
  CHECK(!bad.items[0].pass);
  CHECK(bad.items[0].detail.find("customized max_cudagraph_capture_size(=512) should be consistent "
                                 "with the max value of cudagraph_capture_sizes(=4)") !=
        std::string::npos);
  // vLLM lowers an unset max_num_seqs to max_num_batched_tokens and refuses
  // a given one above it (arg_utils.py, config/scheduler.py).
  const CheckReport seqs =
      RunChecks(llama, h100,
                ParseVllmCommand("vllm serve meta-llama/Llama-3.1-8B --max-model-len 4096 "
                                 "--max-num-batched-tokens 16"));
  CHECK(seqs.capacity.config.max_num_seqs == 16);
  CHECK(seqs.capacity.config.cuda_graph_max_bs == 16);
  const CheckReport over =
      RunChecks(llama, h100,
                ParseVllmCommand("vllm serve meta-llama/Llama-3.1-8B --max-model-len 4096 "
                                 "--max-num-batched-tokens 64 --max-num-seqs 256"));
  REQUIRE(!over.items.empty());
  CHECK(!over.items[0].pass);
  CHECK(over.items[0].detail ==
        "max_num_batched_tokens (64) must be greater than or equal to max_num_seqs (256).");
  // An explicit cudagraph_mode wins over the level's default.
  CHECK(!ParseVllmCommand("vllm serve m -O0 -cc.cudagraph_mode=FULL").args.enforce_eager);
  CHECK(*ParseVllmCommand("vllm serve m -cc.cudagraph_mode=NONE -O3").args.enforce_eager);
  CHECK(*ParseVllmCommand("vllm serve m -cc.cudagraph_mode=none").args.enforce_eager);
  // A mode vLLM does not know is its startup error, not graphs as usual.
  CHECK_THROWS_WITH(ParseVllmCommand("vllm serve m -cc.cudagraph_mode=NOEN"),
                    "--vllm-args: -cc.cudagraph_mode: expected NONE, PIECEWISE, FULL, "
                    "FULL_DECODE_ONLY or FULL_AND_PIECEWISE, got 'NOEN'");
  // The capture size from the flag and from the compilation config: refused,
  // as in a deploy file; the same flag twice keeps the last, as argparse does.
  CHECK_THROWS_WITH(
      ParseVllmCommand(
          "vllm serve m --max-cudagraph-capture-size 64 -cc.max_cudagraph_capture_size=32"),
      "--vllm-args: --max-cudagraph-capture-size and the compilation config's "
      "max_cudagraph_capture_size both set the largest CUDA-graph batch: give it once");
  CHECK(*ParseVllmCommand("vllm serve m --max-cudagraph-capture-size 64 "
                          "--max-cudagraph-capture-size 32")
             .args.cuda_graph_max_bs == 32);

  // Deploy files: vLLM's max_cudagraph_capture_size, SGLang's cuda_graph_max_bs.
  const ModelSpec m = LoadModel("llama-3.1-8b");
  const HardwareSpec h = LoadHardware("h100-sxm");
  const CheckReport plain = RunChecks(m, h, ParseDeployConfig(kGood, "d.yaml"));
  const CheckReport small = RunChecks(
      m, h,
      ParseDeployConfig(Replace(kGood, "max_model_len: 32768",
                                "max_model_len: 32768\n    max_cudagraph_capture_size: 64"),
                        "d.yaml"));
  CHECK(plain.capacity.reserve.cuda_graph_bytes == 512 * 2 * kMiB);  // min(512, 2 x 1024)
  CHECK(small.capacity.reserve.cuda_graph_bytes == 64 * 2 * kMiB);
  // vLLM >= 0.21 takes the graphs out of the cache's budget.
  CHECK(small.capacity.kv_budget_bytes == plain.capacity.kv_budget_bytes + 448 * 2 * kMiB);
  const CheckReport cli =
      RunChecks(m, h,
                ParseVllmCommand("vllm serve meta-llama/Llama-3.1-8B --max-model-len 32768 "
                                 "-cc.max_cudagraph_capture_size 64"));
  CHECK(cli.capacity.kv_budget_bytes == small.capacity.kv_budget_bytes);
  const DeployConfig sg = ParseDeployConfig(
      Replace(Replace(kGood, "name: vllm", "name: sglang"), "max_model_len: 32768",
              "context_length: 32768\n    cuda_graph_max_bs: 48"),
      "d.yaml");
  CHECK(*sg.args.cuda_graph_max_bs == 48);
  CHECK(RunChecks(m, h, sg).capacity.config.cuda_graph_max_bs == 48);
  CHECK_THROWS_WITH(ParseDeployConfig(Replace(kGood, "max_model_len: 32768",
                                              "max_model_len: 32768\n    cuda_graph_max_bs: 48"),
                                      "d.yaml"),
                    doctest::Contains("d.yaml:9:5: cuda_graph_max_bs: unknown field in vllm args"));
}

TEST_CASE("--vllm-args names the flags that change memory kvplan does not model") {
  const DeployConfig d = ParseVllmCommand(
      "vllm serve m --cpu-offload-gb 10 --enable-chunked-prefill --enable-prefix-cachin "
      "--speculative-config '{\"model\": \"d\"}' --port 8000 --num-gpu-blocks-override 100");
  REQUIRE(d.notes.size() == 2);
  // A real flag gets no did-you-mean; a typo of a flag kvplan reads does.
  CHECK(d.notes[0] ==
        "ignored (no effect on the KV cache): --enable-chunked-prefill, --enable-prefix-cachin "
        "(did you mean '--enable-prefix-caching'?), --port ...");
  CHECK(d.notes[1] ==
        "not modelled (they change the memory left for the KV cache; the figures assume them "
        "absent): --cpu-offload-gb ...");
  REQUIRE(d.args.speculative);  // modelled: the draft's cache and weights
  CHECK(d.args.speculative->model == "d");
  CHECK(d.args.num_gpu_blocks_override == 100u);  // modelled: the block count
  // vLLM's ROCm image has the same entrypoint.
  CHECK(ParseVllmCommand("docker run --device /dev/kfd vllm/vllm-openai-rocm:v0.10.1 --model m")
            .model == "m");
  CHECK_THROWS(ParseVllmCommand("docker run vllm/vllm-openai-rocmx --model m"));
}

TEST_CASE("engine.env: the server's environment in a deploy file") {
  const ModelSpec m = LoadModel("llama-3.1-8b");
  const HardwareSpec h = LoadHardware("h100-sxm");
  const auto with_env = [](const std::string& env, const std::string& engine = "vllm") {
    return Replace(Replace(kGood, "name: vllm\n", "name: " + engine + "\n  env:\n" + env),
                   "max_model_len: 32768",
                   engine == "vllm" ? "max_model_len: 32768" : "context_length: 32768");
  };
  const DeployConfig d = ParseDeployConfig(
      with_env("    HF_TOKEN: hf_SECRET\n    VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: 0\n"),
      "d.yaml");
  REQUIRE(d.vllm_graph_profiling.has_value());
  CHECK(!*d.vllm_graph_profiling);
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0] == "engine.env: ignored (no effect on the KV cache): HF_TOKEN");  // no value
  // The graphs' estimate stays in the cache's budget, as the same variable
  // before a command line leaves it.
  const CheckReport plain = RunChecks(m, h, ParseDeployConfig(kGood, "d.yaml"));
  const CheckReport off = RunChecks(m, h, d);
  CHECK(off.capacity.kv_budget_bytes ==
        plain.capacity.kv_budget_bytes + plain.capacity.reserve.cuda_graph_bytes);
  CHECK(RunChecks(m, h,
                  ParseVllmCommand("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 vllm serve "
                                   "meta-llama/Llama-3.1-8B --max-model-len 32768"))
            .capacity.kv_budget_bytes == off.capacity.kv_budget_bytes);
  CHECK(ParseDeployConfig(with_env("    VLLM_ALLOW_LONG_MAX_MODEL_LEN: \"True\"\n"), "d.yaml")
            .vllm_allow_long_max_model_len);
  // Other engines: vLLM's variables mean nothing there.
  const DeployConfig sg = ParseDeployConfig(
      with_env("    VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: 0\n", "sglang"), "d.yaml");
  CHECK(!sg.vllm_graph_profiling);
  REQUIRE(sg.notes.size() == 1);
  CHECK(
      sg.notes[0] ==
      "engine.env: ignored (no effect on the KV cache): VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS");
  // Bad values name their line.
  CHECK_THROWS_WITH(
      ParseDeployConfig(with_env("    VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: 2\n"), "d.yaml"),
      "d.yaml:8:47: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: expected 0 or 1, got '2'");
  CHECK_THROWS_WITH(
      ParseDeployConfig(with_env("    VLLM_ALLOW_LONG_MAX_MODEL_LEN: yes\n"), "d.yaml"),
      "d.yaml:8:36: VLLM_ALLOW_LONG_MAX_MODEL_LEN: expected 1/true or 0/false, got "
      "'yes'");
  CHECK_THROWS_WITH(ParseDeployConfig(with_env("    HF_TOKEN: [a]\n"), "d.yaml"),
                    "d.yaml:8:15: HF_TOKEN: expected a value such as 1 or true");
  CHECK_THROWS_WITH(
      ParseDeployConfig(Replace(kGood, "name: vllm\n", "name: vllm\n  env: 1\n"), "d.yaml"),
      "d.yaml:7:8: env: expected a map of NAME: value (the server's environment)");
  // docker's `-e NAME` passes the host's value, which kvplan cannot see.
  const DeployConfig bare =
      ParseVllmCommand("docker run -e VLLM_ALLOW_LONG_MAX_MODEL_LEN vllm/vllm-openai --model m");
  CHECK(!bare.vllm_allow_long_max_model_len);
  REQUIRE(bare.notes.size() == 1);
  CHECK(bare.notes[0] == "ignored (no effect on the KV cache): VLLM_ALLOW_LONG_MAX_MODEL_LEN");
}

TEST_CASE("check json: figures as numbers with their unit, the words beside them") {
  auto r =
      RunKvplan("check " + SourcePath("examples/llama-70b-long-context.yaml") + " --format json");
  CHECK(r.exit_code == 1);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& checks = j["files"][0]["checks"];
  REQUIRE(checks.size() == 3);
  CHECK(checks[0]["name"] == "startup");
  CHECK(checks[0]["measured"].is_null());
  CHECK(checks[0]["measured_text"] == "starts");
  CHECK(checks[1]["name"] == "min_concurrency");
  CHECK(checks[1]["status"] == "fail");
  CHECK(checks[1]["measured"] == 6);
  CHECK(checks[1]["required"] == 8);
  CHECK(checks[1]["unit"] == "requests");
  CHECK(checks[1]["comparison"] == ">=");
  CHECK(checks[1]["measured_text"] == "6 requests of 131,072 tokens");
  CHECK(checks[2]["measured"] == 906912);
  CHECK(checks[2]["unit"] == "tokens");
  // The nearest changes that pass, each checked again: 113,360 tokens is
  // the longest max_model_len at which 8 requests fit in the 56,682 blocks
  // (8 x 7,085 blocks of 16 tokens = 56,680), tp 8 doubles the cache per
  // request, and the H100 NVL's 94 GB hold 8 at 131,072 on four GPUs.
  CHECK(checks[1]["fixes"] ==
        nlohmann::json::array(
            {"max_model_len 113360", "tensor_parallel_size 8 (8 GPUs)", "gpu h100-nvl"}));
  CHECK(checks[2]["fixes"].empty());
}

TEST_CASE("check: what follows from a failure is skipped; the verdict counts failures") {
  auto r = RunKvplan("check " + SourcePath("examples/falcon-7b-tp2.yaml"));
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("  FAIL  startup ") != std::string::npos);
  CHECK(r.out.find("  SKIP  min_concurrency  required >= 16\n") != std::string::npos);
  CHECK(r.out.find("skipped: the engine would not start (see startup)") != std::string::npos);
  // 71 heads divide by tp 1: the smallest tp that starts.
  CHECK(r.out.find("passes with tensor_parallel_size 1 (1 GPU)\n") != std::string::npos);
  CHECK(r.out.find("  FAIL: 1 of 2 checks fails, 1 skipped\n") != std::string::npos);
  auto g = RunKvplan("check " + SourcePath("examples/falcon-7b-tp2.yaml") + " --format github");
  CHECK(g.out.find("(FAIL: 1 of 2 checks fails, 1 skipped)") != std::string::npos);
  CHECK(g.out.find("title=kvplan check min_concurrency") == std::string::npos);  // not annotated
  auto ok = RunKvplan("check " + SourcePath("examples/llama-8b-chat.yaml") + " --format github");
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("checks fail") == std::string::npos);
  CHECK(ok.out.find("(PASS: all ") != std::string::npos);
  // Headroom beyond a min_concurrency that fails is skipped, not a negative spare.
  const std::string dir = TempDir();
  WriteFile(
      dir, "tight.yaml",
      Replace(kGood, "min_concurrency: 8", "min_concurrency: 100000\n  min_headroom_percent: 10"));
  auto h = RunKvplan("check tight.yaml", dir);
  CHECK(h.exit_code == 1);
  CHECK(h.out.find("SKIP  min_headroom_percent") != std::string::npos);
  CHECK(h.out.find("min_concurrency fails, so nothing is spare beyond it") != std::string::npos);
  CHECK(h.out.find("% of the cache spare") == std::string::npos);
}

TEST_CASE("requirements.serving: TTFT and TPOT under a rate or users, from the fleet model") {
  const ModelSpec m = LoadModel("llama-3.1-8b");
  const HardwareSpec h = LoadHardware("h100-sxm");
  auto with = [](const std::string& serving) {
    return Replace(kGood, "  min_concurrency: 8\n", "  min_concurrency: 8\n  serving:\n" + serving);
  };
  const DeployConfig ok = ParseDeployConfig(
      with("    rate: 5\n    prompt: 2000\n    output: 500\n    max_ttft_ms: 500\n"
           "    max_tpot_ms: 50\n"),
      "d.yaml");
  REQUIRE(ok.requirements.serving);
  CHECK(ok.requirements.serving->percentile == 0.9);
  const CheckReport r = RunChecks(m, h, ok);
  CHECK(r.Pass());
  const CheckItem* ttft = nullptr;
  for (const CheckItem& i : r.items) {
    if (i.name == "serving_ttft_ms") ttft = &i;
  }
  REQUIRE(ttft);
  CHECK(ttft->required == "<= 500 ms p90 at 5 requests/s, 2000 + 500 tokens");
  CHECK(ttft->pos.line == 15);
  CHECK(ttft->measured_value);
  // Beyond what one GPU holds: unbounded, a failure.
  const CheckReport over =
      RunChecks(m, h,
                ParseDeployConfig(with("    rate: 500\n    prompt: 2000\n    output: 500\n"
                                       "    max_tpot_ms: 50\n"),
                                  "d.yaml"));
  CHECK_FALSE(over.Pass());
  bool unbounded = false;
  for (const CheckItem& i : over.items) {
    if (i.name == "serving_tpot_ms") unbounded = i.measured == "unbounded";
  }
  CHECK(unbounded);
  // Users: each holds one request; a TPOT target below the floor fails.
  CHECK_FALSE(RunChecks(m, h,
                        ParseDeployConfig(with("    users: 4\n    prompt: 1000\n    output: 100\n"
                                               "    percentile: p99\n    max_tpot_ms: 1\n"),
                                          "d.yaml"))
                  .Pass());
  // Longer than max_model_len: skipped, said why.
  const CheckReport longer =
      RunChecks(m, h,
                ParseDeployConfig(with("    rate: 1\n    prompt: 40000\n    output: 500\n"
                                       "    max_ttft_ms: 500\n"),
                                  "d.yaml"));
  bool skipped = false;
  for (const CheckItem& i : longer.items) {
    if (i.name == "serving_ttft_ms") skipped = i.skipped;
  }
  CHECK(skipped);
  CHECK(ErrorOf(with("    prompt: 10\n    output: 10\n    max_tpot_ms: 5\n")) ==
        "d.yaml:12:5: requirements.serving: give rate (requests/s) or users (concurrent), one "
        "of them");
  CHECK(ErrorOf(with("    rate: 1\n    prompt: 10\n    output: 10\n")) ==
        "d.yaml:12:5: requirements.serving: give max_ttft_ms, max_tpot_ms or both");
  CHECK(ErrorOf(with("    rate: 1\n    prompt: 10\n    output: 10\n    percentile: p120\n"
                     "    max_tpot_ms: 5\n")) ==
        "d.yaml:15:17: percentile: 'p120' is not one of p50, p90, p95, p99");
}

TEST_CASE("engine.args max_model_len -1 (or auto) is vLLM's auto-fit, as on its command line") {
  for (const char* v : {"-1", "auto", "'-1'"}) {
    CAPTURE(v);
    const DeployConfig d = ParseDeployConfig(
        Replace(kGood, "max_model_len: 32768", std::string("max_model_len: ") + v), "d.yaml");
    CHECK(d.args.max_model_len_auto);
    CHECK_FALSE(d.args.max_model_len);
  }
  CHECK(ErrorOf(Replace(kGood, "max_model_len: 32768", "max_model_len: -2"))
            .find("d.yaml:8:20: max_model_len") == 0);
}
