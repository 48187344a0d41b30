// A checkpoint folder's exact weight bytes (its safetensors index or
// headers) in capacity, latency and check, said in text and JSON; an
// override of the weight format counts from the architecture again; a
// malformed header is one error line naming the file.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "cli_runner.h"

using kvplan::test::CliResult;
using kvplan::test::RunKvplan;
using kvplan::test::SourcePath;
using kvplan::test::TempDir;
using kvplan::test::WriteFile;

namespace {

// A Llama-3.1-8B folder whose index says `total` bytes.
std::string Checkpoint(const std::string& total) {
  const std::string dir = TempDir() + "/Llama-3.1-8B";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(SourcePath("tests/data/hf/llama-3.1-8b.json"), dir + "/config.json");
  WriteFile(dir, "model.safetensors.index.json",
            R"({"metadata": {"total_size": )" + total + R"(}, "weight_map": {}})");
  return dir;
}

}  // namespace

TEST_CASE("weights: a checkpoint's index total_size replaces the architecture's count") {
  // 15 GB on purpose: the architecture counts 16,060,522,496 bytes.
  const std::string dir = Checkpoint("15000000000");
  CliResult j = RunKvplan("capacity " + dir + " --gpu h100-sxm --max-model-len 8K --format json");
  REQUIRE(j.exit_code == 0);
  CHECK(j.out.find("\"weights_bytes\": 15000000000") != std::string::npos);
  CHECK(j.out.find("\"weights_from\": \"exact: model.safetensors.index.json total_size\"") !=
        std::string::npos);
  CliResult t = RunKvplan("capacity " + dir + " --gpu h100-sxm --max-model-len 8K");
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("weights (exact: model.safetensors.index.json total_size)") !=
        std::string::npos);
  // tp 2: each GPU holds the architecture's share of the exact total.
  CliResult tp2 =
      RunKvplan("capacity " + dir + " --gpu h100-sxm -tp 2 --max-model-len 8K --format json");
  REQUIRE(tp2.exit_code == 0);
  CHECK(tp2.out.find("\"weights_bytes\": 75") != std::string::npos);  // ~7.5 GB + replicated norms
  // Another weight format is counted from the architecture.
  CliResult fp8 = RunKvplan("capacity " + dir +
                            " --gpu h100-sxm --max-model-len 8K --weight-dtype fp8 "
                            "--format json");
  REQUIRE(fp8.exit_code == 0);
  CHECK(fp8.out.find("weights_from") == std::string::npos);
  // latency and check say it too.
  CliResult lat = RunKvplan("latency " + dir + " --gpu h100-sxm -c 8K");
  REQUIRE(lat.exit_code == 0);
  CHECK(lat.out.find("(exact: model.safetensors.index.json total_size)") != std::string::npos);
  CliResult chk =
      RunKvplan("check --gpu h100-sxm --vllm-args 'vllm serve " + dir + " --max-model-len 4096'");
  CHECK(chk.exit_code == 0);
  CHECK(chk.out.find("note: weights: 13.97 GiB per GPU (exact: model.safetensors.index.json "
                     "total_size)") != std::string::npos);
  // A catalog model has no checkpoint bytes: its lines are as before.
  CliResult cat = RunKvplan("capacity llama-3.1-8b --gpu h100-sxm --max-model-len 8K");
  CHECK(cat.out.find("exact:") == std::string::npos);
}

TEST_CASE("weights: a malformed safetensors header beside config.json is one error line") {
  const std::string dir = TempDir() + "/Broken";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(SourcePath("tests/data/hf/llama-3.1-8b.json"), dir + "/config.json");
  WriteFile(dir, "model.safetensors", std::string("\x05\0\0\0\0\0\0\0{\"a\":", 13));
  CliResult r = RunKvplan("capacity " + dir + " --gpu h100-sxm");
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("kvplan: error: " + dir +
                        "/model.safetensors: safetensors header: not valid "
                        "JSON at byte",
                    0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}
