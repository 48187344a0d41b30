// A model with state layers only (no attention) reads the same way in every
// command: no bytes per token, one fixed state per request, and a whole
// number of requests in any budget (docs/capacity.md, "Attention-free
// models"), never "unbounded" or a fractional concurrency.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

namespace kvplan::test {
namespace {

// 64 layers x 196,608 B of state: one request's whole cache at any length.
constexpr uint64_t kStateBytes = 64ull * 196608;

std::string Model() {
  return SourcePath("tests/data/models/mamba-2.8b.yaml");
}

}  // namespace

TEST_CASE("attention-free: size is batch x state, whatever the context") {
  for (const char* context : {"1K", "4K", "1M"}) {
    CAPTURE(context);
    const CliResult r = RunKvplan("size " + Model() + " -c " + context + " -b 8 --format json");
    REQUIRE(r.exit_code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(j["bytes_per_token"] == 0);
    CHECK(j["bytes_per_sequence"] == kStateBytes);
    CHECK(j["bytes_total"] == 8 * kStateBytes);
  }
}

TEST_CASE("attention-free: every paged engine counts whole state slots") {
  for (const char* engine : {"vllm", "sglang", "trtllm"}) {
    CAPTURE(engine);
    const CliResult r =
        RunKvplan("capacity " + Model() + " --gpu h100-sxm --engine " + engine + " --format json");
    REQUIRE(r.exit_code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(j["bytes_per_token"] == 0);
    CHECK(j["block_bytes"] == kStateBytes);
    CHECK(j["blocks_per_request"] == 1);
    const uint64_t budget = j["kv_budget_bytes"];
    // One slot per request: the budget's whole slots, a whole number.
    CHECK(j["num_blocks"] == budget / kStateBytes);
    CHECK(j["max_concurrency"] == j["num_blocks"]);
    CHECK(j["largest_max_model_len"] == 1048576);
    CHECK(j["fits"] == true);
  }
  // The text says the same, with no fractional concurrency.
  const CliResult t = RunKvplan("capacity " + Model() + " --gpu h100-sxm");
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("bytes per token                      0 B") != std::string::npos);
  CHECK(t.out.find("unbounded") == std::string::npos);
}

TEST_CASE("attention-free: a budget below one state holds no request") {
  const CliResult r =
      RunKvplan("capacity " + Model() + " --gpu h100-sxm --kv-cache-memory-bytes 10MiB");
  CHECK(r.exit_code == 1);  // vLLM would not start: not one request's state fits
  CHECK(r.out.find("needs 12.00 MiB of KV cache but the cache has 10.00 MiB") != std::string::npos);
}

TEST_CASE("attention-free: tradeoff and paging give the slot count at every length") {
  const CliResult j = RunKvplan("capacity " + Model() + " --gpu h100-sxm --format json");
  REQUIRE(j.exit_code == 0);
  // vLLM keeps its null block back: the usable slots.
  const uint64_t slots = nlohmann::json::parse(j.out)["usable_blocks"];
  const CliResult t = RunKvplan("tradeoff " + Model() + " --gpu h100-sxm --format json");
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("unbounded") == std::string::npos);
  const nlohmann::json tj = nlohmann::json::parse(t.out);
  REQUIRE(!tj["by_context"].empty());
  for (const nlohmann::json& point : tj["by_context"]) {
    CHECK(point["blocks_per_request"] == 1);
    CHECK(point["max_batch"] == slots);
  }
  const CliResult p = RunKvplan("paging " + Model() +
                                " --gpu h100-sxm --mix uniform:prompt=100..8000,output=50..2000");
  REQUIRE(p.exit_code == 0);
  CHECK(p.out.find("Paging holds 1.00x the requests of contiguous reservation.") !=
        std::string::npos);
}

}  // namespace kvplan::test

namespace kvplan::test {

TEST_CASE("models: each group's cache form, in text and JSON") {
  const CliResult t = RunKvplan("models nemotron-h-8b-base-8k");
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("4 full + 24 none + 24 state (mamba2)") != std::string::npos);
  CHECK(t.out.find("24 none: nothing (MLP only)") != std::string::npos);
  CHECK(t.out.find("24 state: 4.06 MiB per sequence and layer, fixed (mamba2:") !=
        std::string::npos);
  const CliResult j = RunKvplan("models falcon-h1-0.5b-instruct --format json");
  REQUIRE(j.exit_code == 0);
  const nlohmann::json groups = nlohmann::json::parse(j.out)["layer_groups"];
  REQUIRE(groups.size() == 2);
  CHECK(groups[1]["state_form"] == "mamba2");
  CHECK(groups[1]["parallel"] == true);
  CHECK(groups[1]["state_bytes"] == 403968);
}

}  // namespace kvplan::test
