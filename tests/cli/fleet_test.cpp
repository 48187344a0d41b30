// kvplan fleet from the command line: the plan, its launch line and a
// deployment config that `kvplan check` passes; exit 1 with the bound when
// no plan meets the targets; JSON numbers; bad input as one line, exit 2.
#include <doctest/doctest.h>

#include <string>

#include "cli_runner.h"

using kvplan::test::RunKvplan;
using kvplan::test::TempDir;
using kvplan::test::WriteFile;

namespace {

void ExpectError(const std::string& args, const std::string& message) {
  CAPTURE(args);
  kvplan::test::CheckOneLineError(RunKvplan(args), message);
}

}  // namespace

TEST_CASE("fleet: a plan, its launch line and a config check passes") {
  auto r = RunKvplan(
      "fleet llama-3.1-70b --gpu h100-sxm,h200 --users 200 --prompt 2K --output 500 "
      "--kv-cache-dtype auto,fp8 --explain");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("load: 200 concurrent users, 2048 prompt + 500 output tokens") !=
        std::string::npos);
  CHECK(r.out.find("best: ") != std::string::npos);
  // The engine loads the model's Hugging Face repository, not kvplan's catalog name.
  CHECK(r.out.find("launch (each replica): vllm serve meta-llama/Llama-3.1-70B "
                   "--tensor-parallel-size ") != std::string::npos);
  CHECK(r.out.find("How the plan is reached") != std::string::npos);
  CHECK(r.out.find("3. Little's law") != std::string::npos);
  // The deployment config printed under the table passes `kvplan check`.
  const size_t at = r.out.find("# One replica of kvplan fleet's plan");
  REQUIRE(at != std::string::npos);
  const size_t end = r.out.find("\nHow the plan");
  const std::string dir = TempDir();
  const std::string file = WriteFile(dir, "fleet.yaml", r.out.substr(at, end - at + 1));
  auto c = RunKvplan("check " + file);
  CAPTURE(c.err);
  CHECK(c.exit_code == 0);
  CHECK(c.out.find("PASS") != std::string::npos);
}

TEST_CASE("fleet: targets, prices, JSON and CSV") {
  auto j = RunKvplan(
      "fleet llama-3.1-8b --gpu h100-sxm,l40s --rate 100 --prompt 2000 --output 500 --ttft 500ms "
      "--tpot 50ms --percentile p99 --price h100-sxm=2.99 --price l40s=0.99 --format json");
  REQUIRE(j.exit_code == 0);
  CHECK(j.out.find("\"ordered_by\": \"usd_per_hour\"") != std::string::npos);
  CHECK(j.out.find("\"ttft_ms\": 500,") != std::string::npos);
  CHECK(j.out.find("\"percentile\": 99,") != std::string::npos);
  CHECK(j.out.find("\"usd_per_million_output_tokens\": ") != std::string::npos);
  CHECK(j.out.find("\"pareto\": [") != std::string::npos);
  auto c = RunKvplan(
      "fleet llama-3.1-8b --gpu h100-sxm --rate 10 --prompt 1000 --output 200 --format csv "
      "--mode aggregated");
  REQUIRE(c.exit_code == 0);
  CHECK(c.out.rfind("gpu,gpus,mode,tp,pp,replicas,", 0) == 0);
  CHECK(c.out.find("disaggregated") == std::string::npos);
  // With targets the config gates them too (requirements.serving), and passes.
  auto t = RunKvplan(
      "fleet llama-3.1-8b --gpu h100-sxm --rate 100 --prompt 2000 --output 500 --ttft 500ms "
      "--tpot 50ms --percentile p99 --mode aggregated");
  REQUIRE(t.exit_code == 0);
  const size_t at = t.out.find("# One replica of kvplan fleet's plan");
  REQUIRE(at != std::string::npos);
  const std::string config = t.out.substr(at);
  CHECK(config.find("  serving:\n    rate: ") != std::string::npos);
  CHECK(config.find("    percentile: p99\n    max_ttft_ms: 500\n    max_tpot_ms: 50\n") !=
        std::string::npos);
  const std::string file = WriteFile(TempDir(), "fleet.yaml", config);
  auto gate = RunKvplan("check " + file);
  CAPTURE(gate.out);
  CHECK(gate.exit_code == 0);
  CHECK(gate.out.find("PASS  serving_ttft_ms") != std::string::npos);
  // A trickle still needs one replica; a lone user one replica too.
  auto trickle = RunKvplan(
      "fleet llama-3.1-8b --gpu h100-sxm --rate 1e-9 --prompt 100 --output 10 --format json");
  CHECK(trickle.out.find("\"replicas\": 1,") != std::string::npos);
  CHECK(trickle.out.find("\"replicas\": 0,") == std::string::npos);
  auto lone = RunKvplan(
      "fleet llama-3.1-8b --gpu h100-sxm --users 1 --prompt 30000 --output 10 --ttft 2s "
      "--format json --mode aggregated");
  CHECK(lone.out.find("\"replicas\": 1,") != std::string::npos);
  // TensorRT-LLM's config carries the cache dtype; int4 weights say they
  // need a quantized checkpoint.
  auto trt = RunKvplan(
      "fleet llama-3.1-8b --gpu h100-sxm --users 8 --prompt 1000 --output 100 --engine trtllm "
      "--kv-cache-dtype fp8 --weight-dtype int4");
  CHECK(trt.out.find("    kv_cache_dtype: fp8\n") != std::string::npos);
  CHECK(trt.out.find("(int4 weights: serve a checkpoint quantized to int4") != std::string::npos);
  auto sg = RunKvplan(
      "fleet llama-3.1-8b --gpu h100-sxm --users 8 --prompt 1000 --output 100 --engine sglang "
      "--kv-cache-dtype fp8");
  CHECK(sg.out.find("--kv-cache-dtype fp8_e4m3") != std::string::npos);
  // SGLang's and TensorRT-LLM's launch lines.
  auto s = RunKvplan(
      "fleet qwen3-8b --gpu h100-sxm --users 10 --prompt 1000 --output 100 --engine sglang");
  CHECK(s.out.find("python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp ") !=
        std::string::npos);
  CHECK(s.out.find("max_running_requests: ") != std::string::npos);
}

TEST_CASE("fleet: the frontier as a table, a terminal chart and SVG") {
  const std::string dir = TempDir();
  auto r = RunKvplan(
      "fleet llama-3.1-8b --gpu h100-sxm,l40s --users 64 --prompt 1000 --output 200 "
      "--plot --svg " +
      dir + "/f.svg");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("throughput against speed per user (the frontier over every layout):") !=
        std::string::npos);
  CHECK(r.out.find("wrote " + dir + "/f.svg") != std::string::npos);
  auto svg = RunKvplan(
      "fleet llama-3.1-8b --gpu h100-sxm --users 64 --prompt 1000 --output 200 "
      "--svg " +
      dir + "/f.svg");
  CHECK(svg.exit_code == 2);  // not overwritten without --force
  CHECK(svg.err.find("file exists (use --force to overwrite)") != std::string::npos);
}

TEST_CASE("fleet: exit 1 with the bound when no plan meets the targets") {
  auto r =
      RunKvplan("fleet llama-3.1-70b --gpu l40s --rate 1 --prompt 2000 --output 500 --tpot 10ms");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("no plan meets the targets.") != std::string::npos);
  CHECK(r.out.find("TPOT 10 ms is below the weight-read floor of ") != std::string::npos);
  CHECK(r.out.find("l40s tp8") != std::string::npos);
  CHECK(r.out.find("weights 131.42 GiB a GPU, 41.39 GiB usable") != std::string::npos);
}

TEST_CASE("fleet: bad input is one line, exit 2") {
  const std::string base = "fleet llama-3.1-8b --gpu h100-sxm --prompt 100 --output 10 ";
  ExpectError(base + "--rate 0", "--rate: expected requests/s above 0, got '0'");
  ExpectError(base + "--rate 1 --tpot 50", "--tpot: '50' has no unit: write it as 50ms or 50s");
  ExpectError(base + "--rate 1 --ttft 5parsecs",
              "--ttft: '5parsecs': unknown unit 'parsecs' (us, ms, s or min)");
  ExpectError(base + "--rate 1 --percentile 120",
              "--percentile: '120' is not one of p50, p90, p95, p99");
  ExpectError(base + "--rate 1 --price a100-80gb=2",
              "--price: 'a100-80gb' is not one of the --gpu types (h100-sxm)");
  ExpectError(base + "--rate 1 --price h100-sxm",
              "--price: 'h100-sxm': expected GPU=USD_PER_HOUR (h100-sxm=2.5)");
  ExpectError(base + "--rate 1 --price h100-sxm=2 --price h100-sxm=3",
              "--price h100-sxm: given twice");
  ExpectError("fleet llama-3.1-8b --gpu h100-sxm,h100-sxm --rate 1 --prompt 100 --output 10",
              "--gpu: h100-sxm named twice");
  ExpectError(base + "--rate 1 --max-gpus 0", "--max-gpus: must be at least 1");
  ExpectError(base + "--rate 1 --kv-cache-dtype auto,fp7",
              "--kv-cache-dtype: unknown cache dtype 'fp7' (known: fp32, fp16, bf16, fp8_e4m3, "
              "fp8_e5m2, int8, int8_pth, fp8_pth, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1, nvfp4, "
              "fp8_ds_mla)");
  ExpectError(base + "--rate 1 --users 3",
              "fleet: give exactly one of --users N (concurrent users) or --rate R (requests/s)");
  ExpectError("fleet llama-3.1-8b --gpu h100-sxm --rate 1 --prompt 100",
              "fleet: give the request lengths one way: --prompt P --output O, --mix SPEC or "
              "--requests FILE");
  ExpectError(base + "--rate 1 --engine llama.cpp",
              "fleet: plans vLLM, SGLang and TensorRT-LLM fleets");
  ExpectError(base + "--rate 1 --max-model-len 50",
              "--max-model-len 50: shorter than the longest request (110 tokens)");
}
