// kvplan fleet's replica model against published serving measurements
// (tests/data/fleet/published.yaml: each row as published, with its
// source). Every row with a concurrency (closed loop) or an offline run and
// known lengths is predicted; the errors are printed (docs/fleet.md,
// "Validation", records them) and pinned with loose bounds, so a change to
// the model that moves them shows here.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "import/resolve.h"
#include "plan/fleet.h"
#include "spec/engine.h"

using namespace kvplan;

namespace {

struct Row {
  std::string id;
  double published = 0, predicted = 0;
  double error() const { return (predicted - published) / published; }
};

std::string Text(const YAML::Node& n) {
  return n && !n.IsNull() ? n.Scalar() : "";
}

std::vector<Row> Predict() {
  const YAML::Node rows =
      YAML::LoadFile(std::string(KVPLAN_SOURCE_DIR) + "/tests/data/fleet/published.yaml");
  std::vector<Row> out;
  for (const YAML::Node& r : rows) {
    const std::string kind = Text(r["kind"]);
    if (kind != "concurrency" && kind != "offline") continue;  // server rows: no prompt lengths
    if (Text(r["prompt_tokens"]).empty() || Text(r["output_tokens"]).empty()) continue;
    if (Text(r["output_tokens_per_s"]).empty() || Text(r["tp"]).empty()) continue;
    std::string weight = Text(r["weight_dtype"]);
    if (weight == "fp4") weight = "nvfp4";
    const std::string engine = Text(r["engine"]) == "other" ? "vllm" : Text(r["engine"]);
    // NVIDIA's FP8 and NVFP4 checkpoints (ModelOpt) that TensorRT-LLM and
    // NIM serve set kv_cache_quant_algo FP8 in hf_quant_config.json: an fp8
    // cache unless the row says otherwise.
    std::string cache = Text(r["kv_cache_dtype"]);
    if (cache.empty()) cache = engine == "trtllm" && weight != "bf16" ? "fp8" : "auto";
    const uint64_t concurrency = kind == "offline" ? 0 : r["concurrency"].as<uint64_t>();
    const ServingPrediction p = PredictServing(
        LoadModel(Text(r["model"])), LoadHardware(Text(r["gpu"])), ParseEngine(engine),
        ReplicaShape{r["tp"].as<uint64_t>(), 1}, cache, weight, concurrency,
        r["prompt_tokens"].as<double>(), r["output_tokens"].as<double>());
    out.push_back({Text(r["id"]), r["output_tokens_per_s"].as<double>(), p.output_tokens_per_s});
  }
  return out;
}

}  // namespace

TEST_CASE("fleet: predicted throughput against published serving measurements") {
  std::vector<Row> rows = Predict();
  REQUIRE(rows.size() >= 12);
  std::vector<double> errors;
  std::string table;
  for (const Row& r : rows) {
    errors.push_back(std::abs(r.error()));
    table += fmt::format("| {} | {:.0f} | {:.0f} | {:+.0f}% |\n", r.id, r.published, r.predicted,
                         r.error() * 100);
  }
  std::sort(errors.begin(), errors.end());
  const double median = errors[errors.size() / 2];
  MESSAGE("\n| row | published tok/s | predicted | error |\n"
          << table << "median |error| " << median * 100 << "%, worst " << errors.back() * 100
          << "%");
  // Loose bounds: they hold the model where docs/fleet.md records it.
  CHECK(median < 0.15);
  for (const Row& r : rows) {
    CAPTURE(r.id);
    CHECK(std::abs(r.error()) < 0.6);
  }
}
