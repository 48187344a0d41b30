#include "plan/latency.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "cli_runner.h"
#include "import/resolve.h"
#include "spec/catalog.h"
#include "spec/yaml_reader.h"
#include "util/units.h"

using namespace kvplan;
using kvplan::test::CliResult;
using kvplan::test::RunKvplan;
using kvplan::test::SourcePath;

namespace {

ModelCost Cost(const std::string& name, uint64_t tp = 1, const std::string& kv = "auto") {
  ModelSpec m = LoadModel(name);
  const CacheDtype& d =
      FindCacheDtype(kv == "auto" ? std::string(AutoCacheDtype(m.weight_dtype)) : kv);
  CheckKvConfig(m, d, tp);
  return ComputeModelCost(m, d, FindWeightFormat(m.weight_dtype), tp);
}

HardwareSpec WithCurve(HardwareSpec hw, std::vector<BandwidthPoint> curve) {
  MeasuredProfile p;
  p.device = "cpu";
  p.read_ceiling_gbps = 20;
  p.curve = std::move(curve);
  hw.measured = p;
  return hw;
}

// Llama-3.1-8B's weight passes on one rank in bf16, by hand: {bytes of one
// matrix, how many a step reads}. Per layer q/k/v fused (4096 + 2 x 1024
// rows) x 4096 x 2 B, o 4096 x 4096 x 2, gate+up 28,672 x 4096 x 2, down
// 4096 x 14,336 x 2, the two norms 2 x 4096 x 2; then the final norm and
// the lm_head (128,256 x 4096 x 2). The untied embedding is a lookup.
const std::vector<std::pair<uint64_t, uint64_t>> kLlama8bPasses = {
    {8'192, 1},        {16'384, 32},      {33'554'432, 32},  {50'331'648, 32},
    {117'440'512, 32}, {234'881'024, 32}, {1'050'673'152, 1}};

// Seconds the weights phase takes on `hw`: each pass at its own size.
double LlamaWeightsSeconds(const HardwareSpec& hw, uint64_t batch) {
  double s = 0;
  for (auto [bytes, n] : kLlama8bPasses) {
    s += static_cast<double>(bytes * n) / (WeightsBandwidthGbps(hw, bytes, batch) * 1e9);
  }
  return s;
}

}  // namespace

TEST_CASE("expected fraction of experts a batch touches") {
  CHECK(ExpertsTouchedFraction(0, 0, 7) == 1.0);
  CHECK(ExpertsTouchedFraction(8, 2, 1) == doctest::Approx(0.25));
  CHECK(ExpertsTouchedFraction(8, 2, 2) == doctest::Approx(1 - 0.75 * 0.75));
  CHECK(ExpertsTouchedFraction(256, 8, 1) == doctest::Approx(8.0 / 256));
  CHECK(ExpertsTouchedFraction(256, 8, 64) == doctest::Approx(1 - std::pow(248.0 / 256, 64)));
  CHECK(ExpertsTouchedFraction(8, 2, 100) > 0.9999);
}

TEST_CASE("bandwidth: datasheet x efficiency, or the measured curve interpolated in log(bytes)") {
  HardwareSpec h100 = LoadHardware("h100-sxm");
  CHECK(StepBandwidthGbps(h100, 1'000'000) == doctest::Approx(h100.memory_bandwidth_gbps * 0.75));
  CHECK_FALSE(HasMeasuredCurve(h100));
  HardwareSpec p = WithCurve(h100, {{1'000'000, 10}, {100'000'000, 20}, {10'000'000'000, 18}});
  CHECK(HasMeasuredCurve(p));
  CHECK(StepBandwidthGbps(p, 1000) == 10);                         // clamped below
  CHECK(StepBandwidthGbps(p, 1'000'000) == 10);                    // at a point
  CHECK(StepBandwidthGbps(p, 10'000'000) == doctest::Approx(15));  // log-midpoint of 1e6..1e8
  CHECK(StepBandwidthGbps(p, 1'000'000'000) == doctest::Approx(19));
  CHECK(StepBandwidthGbps(p, 50'000'000'000) == 18);  // clamped above
  // The points a lookup is made of (what latency --validate measures again
  // before each step): two sizes, one at a measured size or clamped.
  CHECK(CurvePointsRead(p, 10'000'000, 1) == std::vector<size_t>{0, 1});
  CHECK(CurvePointsRead(p, 1'000'000, 1) == std::vector<size_t>{0});
  CHECK(CurvePointsRead(p, 1000, 1) == std::vector<size_t>{0});
  CHECK(CurvePointsRead(p, 50'000'000'000, 1) == std::vector<size_t>{2});
  CHECK(CurvePointsRead(h100, 10'000'000, 1).empty());
  // With groups: two sizes at each of the two nearest groups, or one group
  // where the lookup is at a measured group or beyond the last.
  HardwareSpec g = WithCurve(
      h100, {{1'000'000, 10, 1}, {100'000'000, 20, 1}, {1'000'000, 8, 4}, {100'000'000, 16, 4}});
  CHECK(CurvePointsRead(g, 10'000'000, 2) == std::vector<size_t>{0, 1, 2, 3});
  CHECK(StepBandwidthGbps(g, 10'000'000, 2) == doctest::Approx((15 + 12) / 2.0));
  CHECK(CurvePointsRead(g, 10'000'000, 4) == std::vector<size_t>{2, 3});
  CHECK(CurvePointsRead(g, 100'000'000, 8) == std::vector<size_t>{3});
  // The weights curve, by batch; none without one.
  CHECK(WeightsCurvePointsRead(g, 10'000'000, 1).empty());
  g.measured->weights_curve = {
      {2'000'000, 30, 1, 1}, {8'000'000, 40, 1, 1}, {2'000'000, 25, 1, 2}, {8'000'000, 35, 1, 2}};
  CHECK(WeightsCurvePointsRead(g, 4'000'000, 2) == std::vector<size_t>{2, 3});
  CHECK(WeightsCurvePointsRead(g, 4'000'000, 4) == std::vector<size_t>{2, 3});
  // And the estimate says where it read them: one layer's pass of the
  // cache; the weights at every matrix's size (pass_bytes: the largest, the
  // lm_head).
  const ModelCost c = Cost("llama-3.1-8b");
  const StepEstimate e = EstimateDecodeStep(c, g, 4096, 1);
  CHECK(e.attention.pass_bytes == e.kv_bytes / 32);
  CHECK(e.weights.pass_bytes == 1'050'673'152);
  std::vector<uint64_t> sizes;
  for (auto [bytes, n] : kLlama8bPasses) sizes.push_back(bytes);
  CHECK(WeightPassBytes(c, e.weight_bytes, 1) == sizes);
}

TEST_CASE("decode step of Llama-3.1-8B on an H100, by hand") {
  ModelCost c = Cost("llama-3.1-8b");
  HardwareSpec h100 = LoadHardware("h100-sxm");
  // All 8,030,261,248 bf16 weights but the 128,256 x 4,096 embedding table
  // (a lookup: a step reads one row per token).
  CHECK(c.lookup_weight_bytes == 128256ull * 4096 * 2);
  CHECK(c.dense_weight_bytes == 8'030'261'248ull * 2 - 128256ull * 4096 * 2);
  CHECK(c.expert_weight_bytes == 0);
  StepEstimate e = EstimateDecodeStep(c, h100, 4096, 1);
  CHECK(e.kv_bytes ==
        536'870'912);  // 4,096 tokens x 131,072 B (bf16, 8 KV heads x 128 x 32 layers x 2)
  CHECK(e.weight_bytes == c.dense_weight_bytes);
  const double bw = 3350 * 0.75;
  CHECK(e.bandwidth_gbps == doctest::Approx(bw));
  CHECK(e.memory_s == doctest::Approx((15'009'849'344.0 + 536'870'912.0) / (bw * 1e9)));
  // FLOPs: 2 x active params + 4 x n x layers x q_heads x head_dim.
  const double active = 8'030'261'248.0 - 128256.0 * 4096;
  CHECK(c.active_params == doctest::Approx(active));
  CHECK(e.flops == doctest::Approx(2 * active + 4.0 * 4096 * 32 * 32 * 128));
  CHECK(e.compute_s == doctest::Approx(e.flops / (h100.PeakFlops("bf16") * 0.6)));
  CHECK(e.bound == Bound::kBandwidth);
  CHECK(e.seconds == e.memory_s);
  // A big enough batch at a short context (128 tokens) is compute-bound, and the turn
  // is where ComputeBoundBatch says.
  const uint64_t turn = ComputeBoundBatch(c, h100, 128, 1 << 16);
  REQUIRE(turn > 1);
  CHECK(EstimateDecodeStep(c, h100, 128, turn).bound == Bound::kCompute);
  CHECK(EstimateDecodeStep(c, h100, 128, turn / 2).bound == Bound::kBandwidth);
  // At 4K tokens the KV bytes per sequence keep every batch bandwidth-bound.
  CHECK(ComputeBoundBatch(c, h100, 4096, 1 << 16) == 0);
  // The weight GEMMs alone do turn: 2 FLOP per bf16 weight (2 bytes) per
  // sequence is B FLOP per byte, against the ridge of 989.4 TFLOP/s x 0.6
  // over 3,350 GB/s x 0.75 = 236.3 FLOP per byte: batch 237, at any context.
  CHECK(WeightsComputeBoundBatch(c, h100, 4096, 1 << 16) == 237);
  CHECK(WeightsComputeBoundBatch(c, h100, 128, 1 << 16) == 237);
  CHECK(EstimateDecodeStep(c, h100, 4096, 236).weights.bound == Bound::kBandwidth);
  CHECK(EstimateDecodeStep(c, h100, 4096, 237).weights.bound == Bound::kCompute);
  CHECK(WeightsComputeBoundBatch(c, h100, 4096, 237) == 237);  // a limit that is no power of 2
  CHECK(WeightsComputeBoundBatch(c, h100, 4096, 236) == 0);
  CHECK(WeightsComputeBoundBatch(c, h100, 4096, 0) == 0);
}

TEST_CASE("prefill: linear plus causal attention FLOPs, with a bandwidth floor") {
  ModelCost c = Cost("llama-3.1-8b");
  HardwareSpec h100 = LoadHardware("h100-sxm");
  StepEstimate p = EstimatePrefill(c, h100, 8192);
  const double pairs = 8192.0 * 8193 / 2;
  CHECK(p.flops == doctest::Approx(2 * c.active_params * 8192 + 2.0 * 32 * 32 * 256 * pairs));
  CHECK(p.bound == Bound::kCompute);
  CHECK(p.kv_bytes == 8192ull * 131072);
  // One token: reading the weights once dominates.
  StepEstimate one = EstimatePrefill(c, h100, 1);
  CHECK(one.bound == Bound::kBandwidth);
  CHECK(one.seconds == doctest::Approx(EstimateDecodeStep(c, h100, 1, 1).seconds));
  // Quadratic: doubling a long prompt more than doubles the FLOPs.
  CHECK(EstimatePrefill(c, h100, 65536).flops > 2.2 * EstimatePrefill(c, h100, 32768).flops);
}

TEST_CASE("tensor parallel divides weights, KV and FLOPs per rank") {
  HardwareSpec h100 = LoadHardware("h100-sxm");
  ModelCost one = Cost("llama-3.1-70b", 1), four = Cost("llama-3.1-70b", 4);
  StepEstimate a = EstimateDecodeStep(one, h100, 8192, 8),
               b = EstimateDecodeStep(four, h100, 8192, 8);
  CHECK(b.kv_bytes * 4 == a.kv_bytes);
  CHECK(std::fabs(static_cast<double>(b.weight_bytes) * 4 / static_cast<double>(a.weight_bytes) -
                  1) < 0.01);
  CHECK(b.flops * 4 == doctest::Approx(a.flops));
  CHECK(b.seconds < a.seconds / 3.5);
}

TEST_CASE("MoE: active parameters for compute, touched experts for memory") {
  ModelCost c = Cost("mixtral-8x7b");
  // Mistral AI: 46.7B parameters, 12.9B active per token; that count has
  // the 32,000 x 4,096 input embedding in it, a lookup kvplan leaves out of
  // the FLOPs (docs/latency.md): 12.9B - 0.13B.
  CHECK(c.active_params == doctest::Approx(12.9e9).epsilon(0.02));
  CHECK(c.active_params == doctest::Approx(12'748'853'248.0));
  CHECK(c.active_params + 32000.0 * 4096 == doctest::Approx(12.9e9).epsilon(0.002));
  HardwareSpec a100 = LoadHardware("a100-80gb");
  StepEstimate b1 = EstimateDecodeStep(c, a100, 1024, 1);
  CHECK(b1.weight_bytes == c.dense_weight_bytes + c.expert_weight_bytes / 4);
  StepEstimate b64 = EstimateDecodeStep(c, a100, 1024, 64);
  CHECK(b64.weight_bytes > c.dense_weight_bytes + c.expert_weight_bytes * 99 / 100);
  // DeepSeek-V3: 37B of 671B active; MLA latent cache, 70,272 B per token.
  ModelCost ds = Cost("deepseek-v3");
  CHECK(ds.active_params == doctest::Approx(37e9).epsilon(0.05));
  CHECK(EstimateDecodeStep(ds, a100, 1000, 1).kv_bytes == 70'272'000);
}

TEST_CASE("sliding windows cap the KV read and the attention FLOPs") {
  ModelCost g = Cost("gemma-2-9b");
  REQUIRE_FALSE(g.windowed.empty());
  HardwareSpec h100 = LoadHardware("h100-sxm");
  StepEstimate at8k = EstimateDecodeStep(g, h100, 8192, 1);
  StepEstimate at4k = EstimateDecodeStep(g, h100, 4096, 1);
  // Half the layers keep at most 4,096 tokens: from 4K to 8K only the full
  // half grows.
  CHECK(at8k.kv_bytes - at4k.kv_bytes == g.kv.SequenceBytes(8192) - g.kv.SequenceBytes(4096));
  CHECK(at8k.kv_bytes < 2 * at4k.kv_bytes);
}

TEST_CASE("every bundled model on every GPU: finite, positive, monotone in the batch") {
  for (const ModelSpec& m : CatalogModels()) {
    const CacheDtype& d = FindCacheDtype(AutoCacheDtype(m.weight_dtype));
    CheckKvConfig(m, d, 1);
    ModelCost c = ComputeModelCost(m, d, FindWeightFormat(m.weight_dtype), 1);
    CHECK(c.active_params > 0);
    for (const HardwareSpec& hw : CatalogHardware()) {
      CAPTURE(m.name);
      CAPTURE(hw.name);
      double last_tpot = 0, last_rate = 0;
      for (uint64_t b = 1; b <= 256; b *= 4) {
        StepEstimate e = EstimateDecodeStep(c, hw, 2048, b);
        CHECK(std::isfinite(e.seconds));
        CHECK(e.seconds > 0);
        CHECK(e.seconds >= last_tpot);
        const double rate = static_cast<double>(b) / e.seconds;
        CHECK(rate >= last_rate * 0.999);
        last_tpot = e.seconds;
        last_rate = rate;
      }
      StepEstimate p = EstimatePrefill(c, hw, 2048);
      CHECK(std::isfinite(p.seconds));
      CHECK(p.seconds > 0);
    }
  }
}

TEST_CASE("the weights are read matrix by matrix: the passes cover every byte a step reads") {
  // Every bundled model, whole and split 8 ways: the passes' totals are the
  // weights a step reads with every expert touched (lookups left out).
  for (const ModelSpec& m : CatalogModels()) {
    for (uint64_t tp : {1, 8}) {
      CAPTURE(m.name);
      CAPTURE(tp);
      const CacheDtype& d = FindCacheDtype(AutoCacheDtype(m.weight_dtype));
      if (tp > 1 && m.query_heads % tp != 0) continue;
      const ModelCost c = ComputeModelCost(m, d, ModelWeightFormat(m, ""), tp);
      // Weights known only as `params` (Mamba-2, linear attention) have no matrices.
      if (!m.HasWeightShapes()) {
        CHECK(c.weight_passes.empty());
        continue;
      }
      REQUIRE(!c.weight_passes.empty());
      uint64_t dense = 0, experts = 0;
      for (const ModelCost::WeightPass& p : c.weight_passes) {
        CHECK(p.bytes > 0);
        CHECK(p.total % p.bytes == 0);  // a whole number of matrices
        (p.expert ? experts : dense) += p.total;
      }
      CHECK(dense == c.dense_weight_bytes);
      CHECK(experts == c.expert_weight_bytes);
      // Without a curve the sum is the old product: bytes / (datasheet x 0.75).
      const HardwareSpec h100 = LoadHardware("h100-sxm");
      const StepEstimate e = EstimateDecodeStep(c, h100, 2048, 1);
      CHECK(e.weights.memory_s ==
            doctest::Approx(static_cast<double>(e.weight_bytes) /
                            (h100.memory_bandwidth_gbps * kDatasheetBandwidthEfficiency * 1e9)));
    }
  }
  // Mixtral: a layer's routed experts are one fused-MoE pass per matrix
  // (8 x gate+up 28,672 x 4,096 x 2 B, 8 x down 4,096 x 14,336 x 2 B, in
  // each of 32 layers), read at the touched fraction: a batch of 1 reads 2
  // of 8, as the step's byte count says, and the curve is read at 2
  // experts' bytes.
  const ModelCost mixtral = Cost("mixtral-8x7b");
  std::vector<std::pair<uint64_t, uint64_t>> experts;
  for (const ModelCost::WeightPass& p : mixtral.weight_passes) {
    if (p.expert) experts.emplace_back(p.bytes, p.total / p.bytes);
  }
  CHECK(experts ==
        std::vector<std::pair<uint64_t, uint64_t>>{{939'524'096, 32}, {1'879'048'192, 32}});
  const std::vector<uint64_t> b1_sizes = WeightPassBytes(mixtral, 0, 1);
  CHECK(std::count(b1_sizes.begin(), b1_sizes.end(), 234'881'024) == 1);  // 2 x 117 MB (down)
  CHECK(std::count(b1_sizes.begin(), b1_sizes.end(), 469'762'048) == 1);  // 2 x 235 MB (gate+up)
  CHECK(std::count(b1_sizes.begin(), b1_sizes.end(), 939'524'096) == 0);
  // A batch of 64 touches 1 - (6/8)^64 = 1 - 1.0e-8 of them: nearly all,
  // 1,879,048,192 x (1 - 1.0e-8) = 1,879,048,173 B of gate+up.
  const std::vector<uint64_t> b64_sizes = WeightPassBytes(mixtral, 0, 64);
  CHECK(b64_sizes.back() == 1'879'048'173);
  HardwareSpec flat = WithCurve(LoadHardware("a100-80gb"), {{1'000'000, 10}, {100'000'000, 20}});
  flat.measured->weights_curve = {{1'000'000, 10, 1}, {100'000'000, 20, 1}};
  const StepEstimate b1 = EstimateDecodeStep(mixtral, flat, 1024, 1);
  double dense_s = 0;
  for (const ModelCost::WeightPass& p : mixtral.weight_passes) {
    if (!p.expert)
      dense_s += static_cast<double>(p.total) / (WeightsBandwidthGbps(flat, p.bytes) * 1e9);
  }
  // The experts' 100+ MB matrices read at the clamped 20 GB/s.
  CHECK(b1.weights.memory_s ==
        doctest::Approx(dense_s + static_cast<double>(mixtral.expert_weight_bytes) / 4 / 20e9));
  // A tied embedding is the lm_head's matmul: gpt2 reads its 50,257 x 768
  // table (padded to 50,304 rows, fp32) as one pass; an untied one
  // (Llama) is a lookup and not a pass.
  const ModelCost gpt2 = Cost("gpt2");
  CHECK(gpt2.weight_passes.back().bytes == 50'304ull * 768 * 4);
  CHECK(Cost("llama-3.1-8b").weight_passes.back().bytes == 128'256ull * 4096 * 2);
}

TEST_CASE("kvplan latency: text, json keys, and errors") {
  auto r = test::RunKvplan("latency llama-3.1-8b --gpu h100-sxm -c 4K -b 8 --format json");
  REQUIRE(r.exit_code == 0);
  for (const char* key : {"\"ttft_ms\"", "\"tpot_ms\"", "\"bound\": \"bandwidth\"",
                          "\"bandwidth_source\": \"datasheet\"", "\"batches\"",
                          "\"tokens_per_s_aggregate\"", "\"compute_bound_batch\""}) {
    CHECK(r.out.find(key) != std::string::npos);
  }
  auto text = test::RunKvplan("latency llama-3.1-8b --gpu h100-sxm -c 256");
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("TTFT") != std::string::npos);
  CHECK(text.out.find("Decode turns compute-bound at batch") != std::string::npos);
  // At 256 tokens the KV still grows the step by 65 % before the turn; at 16 it does not.
  CHECK(text.out.find("Decode turns compute-bound at batch 512: below it the step is "
                      "bandwidth-bound, but it grows with the batch (5.99 ms at batch 1, 9.89 ms "
                      "at batch 256): the KV bytes read per step, and the FLOPs, grow with it.") !=
        std::string::npos);
  // The weights' own ridge, where the step as a whole never turns.
  CHECK(test::RunKvplan("latency llama-3.1-8b --gpu h100-sxm -c 8K")
            .out.find("The weight GEMMs alone turn compute-bound at batch 237: from there their "
                      "FLOPs take longer than reading the weights (the ridge: 236 FLOP per byte at "
                      "2512 GB/s and 594 TFLOP/s); the step as a whole stays bandwidth-bound, its "
                      "KV bytes growing with the batch.\n") != std::string::npos);
  CHECK(r.out.find("\"weights_compute_bound_batch\": 237,") != std::string::npos);
  CHECK(test::RunKvplan("latency llama-3.1-8b --gpu h100-sxm -c 16")
            .out.find("Decode turns compute-bound at batch 256: below it a step costs about the "
                      "same at any batch (the weights dominate the bytes).") != std::string::npos);
  // Where the step grows below the turn (an MoE touching more experts, a
  // long context), the text says so instead of "about the same".
  auto moe = test::RunKvplan("latency qwen3-30b-a3b --profile " +
                             SourcePath("tests/data/profile-groups.yaml") + " -c 8K -b 16");
  CHECK(moe.exit_code == 0);
  CHECK(moe.out.find("about the same") == std::string::npos);
  CHECK(moe.out.find("below it the step is bandwidth-bound, but it grows with the batch (654 ms at "
                     "batch 1,") != std::string::npos);
  CHECK(moe.out.find("the KV and expert bytes read per step, and the FLOPs, grow with it.") !=
        std::string::npos);

  // One line on stderr, exit 2, nothing on stdout.
  const auto refused = [](const std::string& args, const std::string& message) {
    CAPTURE(args);
    auto got = test::RunKvplan(args);
    CHECK(got.exit_code == 2);
    CHECK(got.out.empty());
    CHECK(got.err == "kvplan: error: " + message + "\n");
  };
  const std::string h100 = "latency llama-3.1-8b --gpu h100-sxm";
  refused("latency llama-3.1-8b -c 4K", "latency: give --gpu NAME or --profile FILE");
  refused("latency --gpu h100-sxm", "latency: MODEL is required (or --validate)");
  refused(h100 + " -b 0", "--batch: must be at least 1");

  // Past the model's limit, as vLLM refuses it; the default context is 4096,
  // or the model's own limit when that is shorter (GPT-2: 1,024).
  refused(h100 + " -c 1G",
          "--context 1,073,741,824: more than llama-3.1-8b's max_context of 131,072");
  refused(h100 + " -c 4K --prompt 131073",
          "--prompt 131,073: more than llama-3.1-8b's max_context of 131,072");
  refused(h100 + " -c ''", "--context: empty value (see kvplan --help)");
  refused(h100 + " --prompt ''", "--prompt: empty value (see kvplan --help)");
  auto edge = test::RunKvplan(h100 + " -c 128K --format json");
  CHECK(edge.exit_code == 0);
  CHECK(edge.out.find("\"context_tokens\": 131072") != std::string::npos);
  auto gpt2 = test::RunKvplan("latency gpt2 --gpu h100-sxm --format json");
  CHECK(gpt2.exit_code == 0);
  CHECK(gpt2.out.find("\"context_tokens\": 1024") != std::string::npos);
  auto llama = test::RunKvplan(h100 + " --format json");
  CHECK(llama.out.find("\"context_tokens\": 4096") != std::string::npos);
}

TEST_CASE("kvplan latency --profile uses the measured curve") {
  const std::string dir = test::TempDir();
  const std::string path = test::WriteFile(dir, "cpu.yaml", R"(name: cpu
memory_bytes: 25769803776
memory_bandwidth_gbps: 20
flops:
  fp32: 1.0e11
  fp16: 1.0e11
source: "test"
measured:
  device: cpu
  machine: "test machine"
  read_ceiling_gbps: 20
  curve:
    - {bytes: 1000000, gbps: 8}
    - {bytes: 100000000000, gbps: 16}
)");
  auto r = test::RunKvplan("latency llama-3.1-8b --profile " + path + " -c 1K --format json");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"bandwidth_source\": \"measured\"") != std::string::npos);
  CHECK(r.out.find("\"bandwidth_efficiency\": 1") != std::string::npos);
  const std::string plain = test::WriteFile(dir, "plain.yaml", R"(name: plain
memory_bytes: 1000
memory_bandwidth_gbps: 20
source: "test"
)");
  auto bad = test::RunKvplan("latency llama-3.1-8b --profile " + plain);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("has no measured: section") != std::string::npos);
}

TEST_CASE("latency --validate refuses a profile measured on other threads or another device") {
  const std::string dir = test::TempDir();
  const auto profile = [&](const std::string& name, const std::string& device,
                           const std::string& threads) {
    return test::WriteFile(dir, name,
                           "name: p\nmemory_bytes: 1000\nmemory_bandwidth_gbps: 20\n"
                           "source: \"test\"\nmeasured:\n  device: " +
                               device + "\n  read_ceiling_gbps: 20\n" + threads +
                               "  curve:\n    - {bytes: 1000000, gbps: 8}\n");
  };
  // The threads a profile was measured on read back (0: a profile that does not say).
  const std::string two = profile("two.yaml", "cpu", "  threads: 2\n");
  CHECK(ParseHardwareYaml(test::ReadFile(two), "two.yaml").measured->threads == 2);
  HardwareSpec back = ParseHardwareYaml(test::ReadFile(two), "two.yaml");
  CHECK(ParseHardwareYaml(HardwareToYaml(back), "again.yaml").measured->threads == 2);
  back.measured->threads = 0;
  CHECK(HardwareToYaml(back).find("threads") == std::string::npos);
  // One thread timed against a two-thread curve would fail every row for a
  // reason that is not the model: refused before anything is timed.
  auto r = test::RunKvplan("latency --validate --quick --threads 1 --profile " + two);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "kvplan: error: --profile " + two +
                     ": measured on 2 thread(s), but this validation runs on 1 (--threads 1); "
                     "measure one with kvplan bench --threads 1 --save FILE\n");
  const std::string gpu = profile("gpu.yaml", "cuda", "");
  auto g = test::RunKvplan("latency --validate --quick --profile " + gpu);
  CHECK(g.exit_code == 2);
  CHECK(g.err == "kvplan: error: --profile " + gpu +
                     ": measured on cuda, but the validation times decode steps on this CPU\n");
  const std::string zero = profile("zero.yaml", "cpu", "  threads: 0\n");
  auto z = test::RunKvplan("latency --validate --quick --threads 1 --profile " + zero);
  CHECK(z.exit_code == 2);
  CHECK(z.err == "kvplan: error: " + zero + ":8:12: threads: must be positive, got 0\n");
}

TEST_CASE("latency --validate shows every round's error of each shape") {
  const std::string one = test::WriteFile(
      test::TempDir(), "one-thread.yaml",
      "name: p\nmemory_bytes: 1000000000\nmemory_bandwidth_gbps: 20\nsource: \"test\"\n"
      "measured:\n  device: cpu\n  read_ceiling_gbps: 20\n  threads: 1\n"
      "  curve:\n    - {bytes: 1000000, gbps: 8}\n    - {bytes: 100000000, gbps: 15}\n");
  auto r = test::RunKvplan(
      "latency --validate --quick --threads 1 --rounds 3 --repeats 1 "
      "--profile " +
      one + " --format json");
  REQUIRE(r.exit_code <= 1);  // pass or fail: this checks the report, not the machine
  const YAML::Node j = ParseYaml(r.out, "out.json");
  CHECK(j["rounds"].as<int>() == 3);
  REQUIRE(j["points"].size() == 3);
  for (const YAML::Node& p : j["points"]) {
    REQUIRE(p["round_errors"].size() == 3);
    std::vector<double> each;
    for (const YAML::Node& e : p["round_errors"]) each.push_back(e.as<double>());
    std::sort(each.begin(), each.end());
    CHECK(p["error"].as<double>() == each[1]);  // the median round is the row
    // The attention beside the step's time, stated at the profile's ceiling as it is.
    CHECK(p["measured_attention_at_profile_ceiling_ms"].as<double>() > 0);
    CHECK(p["measured_attention_ms"].as<double>() > 0);
  }
  auto csv = test::RunKvplan(
      "latency --validate --quick --threads 1 --rounds 2 --repeats 1 "
      "--profile " +
      one + " --format csv");
  REQUIRE(csv.exit_code <= 1);
  CHECK(csv.out.rfind(
            "context_tokens,batch,bytes,measured_ms,predicted_ms,raw_error,"
            "ceiling_beside_gbps,measured_at_profile_ceiling_ms,error,round_error_min,"
            "round_error_max,measured_attention_ms,measured_attention_at_profile_ceiling_ms,"
            "predicted_attention_ms\n",
            0) == 0);
}

TEST_CASE(
    "decode phases: weights and attention each on their roofline, looked up per layer, summed") {
  ModelCost c = Cost("llama-3.1-8b");
  CHECK(c.layers == 32);
  CHECK(c.cache_layers == 32);
  // A curve that rises with the bytes of one pass: 1 MB at 5 GB/s, 1 GB at 20 GB/s.
  HardwareSpec p = WithCurve(LoadHardware("h100-sxm"), {{1'000'000, 5}, {1'000'000'000, 20}});
  StepEstimate e = EstimateDecodeStep(c, p, 4096, 1);
  // Attention reads 536,870,912 B in 32 layer passes of 16,777,216 B each;
  // the weights 15,009,849,344 B matrix by matrix (kLlama8bPasses), each
  // GEMV at the curve for its own size.
  CHECK(e.attention.bytes == 536'870'912);
  CHECK(e.attention.bandwidth_gbps == doctest::Approx(StepBandwidthGbps(p, 16'777'216)));
  CHECK(e.weights.bytes == 15'009'849'344);
  CHECK(e.weights.memory_s == doctest::Approx(LlamaWeightsSeconds(p, 1)));
  CHECK(e.weights.bandwidth_gbps == doctest::Approx(15'009'849'344.0 / (e.weights.memory_s * 1e9)));
  CHECK(e.attention.bandwidth_gbps < e.weights.bandwidth_gbps);
  CHECK(e.attention.memory_s ==
        doctest::Approx(536'870'912.0 / (e.attention.bandwidth_gbps * 1e9)));
  CHECK(e.seconds == doctest::Approx(e.weights.seconds + e.attention.seconds));
  CHECK(e.memory_s == doctest::Approx(e.weights.memory_s + e.attention.memory_s));
  CHECK(e.bandwidth_gbps == doctest::Approx((e.weight_bytes + e.kv_bytes) / (e.memory_s * 1e9)));
  // A phase that is compute-bound counts its compute time, the other its memory time.
  const uint64_t turn = ComputeBoundBatch(c, LoadHardware("h100-sxm"), 128, 1 << 16);
  StepEstimate big = EstimateDecodeStep(c, LoadHardware("h100-sxm"), 128, turn * 4);
  CHECK(big.weights.bound == Bound::kCompute);
  CHECK(big.attention.bound == Bound::kBandwidth);
  CHECK(big.seconds == doctest::Approx(big.weights.compute_s + big.attention.memory_s));
  CHECK(big.seconds >= std::max(big.memory_s, big.compute_s));
}

TEST_CASE("a curve measured at several GQA groups is read at the model's group") {
  HardwareSpec p = WithCurve(LoadHardware("h100-sxm"), {{1'000'000, 10, 1},
                                                        {100'000'000, 20, 1},
                                                        {1'000'000, 4, 4},
                                                        {100'000'000, 8, 4},
                                                        {1'000'000, 2, 16}});
  CHECK(StepBandwidthGbps(p, 10'000'000) == doctest::Approx(15));       // group 1 by default
  CHECK(StepBandwidthGbps(p, 10'000'000, 4) == doctest::Approx(6));     // the group-4 curve
  CHECK(StepBandwidthGbps(p, 10'000'000, 2) == doctest::Approx(10.5));  // half way in log(group)
  CHECK(StepBandwidthGbps(p, 10'000'000, 8) == doctest::Approx(4));     // 6 and 2, half way
  CHECK(StepBandwidthGbps(p, 10'000'000, 64) == 2);  // clamped to the largest group
  // The reader keeps the groups and round-trips them.
  HardwareSpec back = ParseHardwareYaml(HardwareToYaml(p), "p.yaml");
  REQUIRE(back.measured->curve.size() == 5);
  CHECK(back.measured->curve[2].group == 4);
  CHECK(back.measured->curve[4].group == 16);
  // Llama-3.1-8B (32 query heads, 8 KV heads) reads attention at group 4, weights at 1.
  ModelCost c = Cost("llama-3.1-8b");
  CHECK(c.attention_group == 4);
  StepEstimate e = EstimateDecodeStep(c, p, 4096, 1);
  CHECK(e.attention.bandwidth_gbps == doctest::Approx(StepBandwidthGbps(p, 16'777'216, 4)));
  CHECK(e.weights.memory_s == doctest::Approx(LlamaWeightsSeconds(p, 1)));  // at group 1
  CHECK(Cost("deepseek-v3").attention_group == 128);  // MLA: every head reads the one latent
}

TEST_CASE("the weights read at the profile's GEMV curve when it has one, else at group 1") {
  HardwareSpec p =
      WithCurve(LoadHardware("h100-sxm"),
                {{1'000'000, 10, 1}, {100'000'000, 20, 1}, {1'000'000, 4, 4}, {100'000'000, 8, 4}});
  ModelCost c = Cost("llama-3.1-8b");
  // Without a weights curve: the attention curve at group 1, as before.
  CHECK(WeightsBandwidthGbps(p, 10'000'000) == doctest::Approx(15));
  const StepEstimate before = EstimateDecodeStep(c, p, 4096, 1);
  CHECK(before.weights.memory_s == doctest::Approx(LlamaWeightsSeconds(p, 1)));
  // gate_up (235 MB), down (117 MB) and lm_head are clamped above at 20
  // GB/s; qkv at 50 MB reads 10 + 10 x log(50.3) / log(100) = 18.5 GB/s.
  CHECK(WeightsBandwidthGbps(p, 50'331'648) == doctest::Approx(18.5087).epsilon(1e-4));
  // With one: interpolated in log(bytes), clamped at both ends, used by the weights phase only.
  p.measured->weights_curve = {{1'000'000, 6, 1}, {100'000'000, 12, 1}};
  CHECK(WeightsBandwidthGbps(p, 1000) == 6);
  CHECK(WeightsBandwidthGbps(p, 10'000'000) == doctest::Approx(9));
  CHECK(WeightsBandwidthGbps(p, 10'000'000'000) == 12);
  const StepEstimate after = EstimateDecodeStep(c, p, 4096, 1);
  CHECK(after.weights.memory_s == doctest::Approx(LlamaWeightsSeconds(p, 1)));
  // By hand: the 13.96 GB of o/qkv/down/gate_up/lm_head matrices over 100 MB
  // at 12 GB/s, o and qkv in between, the 532 KB of norms at 6 GB/s.
  const double by_hand = (32 * (117'440'512.0 + 234'881'024) + 1'050'673'152) / 12e9 +
                         32 * 33'554'432.0 / (WeightsBandwidthGbps(p, 33'554'432) * 1e9) +
                         32 * 50'331'648.0 / (WeightsBandwidthGbps(p, 50'331'648) * 1e9) +
                         (32 * 16'384 + 8'192) / 6e9;
  CHECK(after.weights.memory_s == doctest::Approx(by_hand));
  CHECK(after.weights.bandwidth_gbps < 12);
  CHECK(after.weights.bandwidth_gbps > 11);
  CHECK(after.attention.bandwidth_gbps == doctest::Approx(before.attention.bandwidth_gbps));
  // It round-trips through the profile writer and reader.
  const HardwareSpec back = ParseHardwareYaml(HardwareToYaml(p), "p.yaml");
  REQUIRE(back.measured->weights_curve.size() == 2);
  CHECK(back.measured->weights_curve[1].bytes == 100'000'000);
  CHECK(back.measured->weights_curve[1].gbps == 12);
  // The reader refuses a weights curve out of order, empty, or with a zero rate.
  const std::string head =
      HardwareToYaml(WithCurve(LoadHardware("h100-sxm"), {{1'000'000, 10, 1}}));
  CHECK_THROWS_WITH(ParseHardwareYaml(head + "  weights_curve:\n    - {bytes: 2000, gbps: 5}\n"
                                             "    - {bytes: 1000, gbps: 6}\n",
                                      "w.yaml"),
                    doctest::Contains("w.yaml:33:15: bytes: weights_curve points must be in "
                                      "increasing order of bytes"));
  CHECK_THROWS_WITH(ParseHardwareYaml(head + "  weights_curve: []\n", "w.yaml"),
                    doctest::Contains("weights_curve: expected a non-empty list"));
  CHECK_THROWS_WITH(
      ParseHardwareYaml(head + "  weights_curve:\n    - {bytes: 1000, gbps: 0}\n", "w.yaml"),
      doctest::Contains("w.yaml:32:27: gbps: must be positive, got 0"));
  CHECK_THROWS_WITH(
      ParseHardwareYaml(head + "  weights_curve:\n    - {bytes: 1000, gbps: 3, group: 2}\n",
                        "w.yaml"),
      doctest::Contains("group"));
}

TEST_CASE("the weights curve's batch axis: a batch-B step reads the GEMV measured at B") {
  HardwareSpec p = WithCurve(LoadHardware("h100-sxm"), {{1'000'000, 10, 1}, {100'000'000, 20, 1}});
  auto point = [](uint64_t bytes, double gbps, uint64_t batch) {
    BandwidthPoint b{bytes, gbps};
    b.batch = batch;
    return b;
  };
  p.measured->weights_curve = {point(1'000'000, 6, 1), point(100'000'000, 12, 1),
                               point(1'000'000, 4, 4), point(100'000'000, 8, 4)};
  CHECK(WeightsBandwidthGbps(p, 10'000'000) == doctest::Approx(9));       // batch 1 by default
  CHECK(WeightsBandwidthGbps(p, 10'000'000, 4) == doctest::Approx(6));    // the batch-4 curve
  CHECK(WeightsBandwidthGbps(p, 10'000'000, 2) == doctest::Approx(7.5));  // half way in log(batch)
  CHECK(WeightsBandwidthGbps(p, 10'000'000, 64) == doctest::Approx(6));   // clamped to the largest
  // The decode step passes its batch; attention is not affected.
  ModelCost c = Cost("llama-3.1-8b");
  const StepEstimate b1 = EstimateDecodeStep(c, p, 4096, 1);
  const StepEstimate b4 = EstimateDecodeStep(c, p, 4096, 4);
  CHECK(b1.weights.memory_s == doctest::Approx(LlamaWeightsSeconds(p, 1)));
  CHECK(b4.weights.memory_s == doctest::Approx(LlamaWeightsSeconds(p, 4)));
  // The batch-4 curve is the batch-1 curve x 2/3 at every size.
  CHECK(b4.weights.memory_s == doctest::Approx(b1.weights.memory_s * 1.5));
  // Round trip: batch is written only where it is not 1, and read back.
  const std::string yaml = HardwareToYaml(p);
  CHECK(yaml.find("    - {bytes: 1000000, gbps: 6}\n") != std::string::npos);
  CHECK(yaml.find("    - {bytes: 100000000, gbps: 8, batch: 4}\n") != std::string::npos);
  const HardwareSpec back = ParseHardwareYaml(yaml, "p.yaml");
  REQUIRE(back.measured->weights_curve.size() == 4);
  CHECK(back.measured->weights_curve[1].batch == 1);
  CHECK(back.measured->weights_curve[2].batch == 4);
  CHECK(WeightsBandwidthGbps(back, 10'000'000, 2) == doctest::Approx(7.5));
  // Bad batches: zero, absurd, out of order; and batch is no field of the attention curve.
  const std::string head =
      HardwareToYaml(WithCurve(LoadHardware("h100-sxm"), {{1'000'000, 10, 1}}));
  CHECK_THROWS_WITH(
      ParseHardwareYaml(head + "  weights_curve:\n    - {bytes: 1000, gbps: 3, batch: 0}\n",
                        "w.yaml"),
      doctest::Contains("w.yaml:32:37: batch: must be positive, got 0"));
  CHECK_THROWS_WITH(
      ParseHardwareYaml(head + "  weights_curve:\n    - {bytes: 1000, gbps: 3, batch: 99999}\n",
                        "w.yaml"),
      doctest::Contains("w.yaml:32:37: batch: 99999 is not a batch size (1 to 65536 sequences)"));
  CHECK_THROWS_WITH(
      ParseHardwareYaml(head + "  weights_curve:\n    - {bytes: 1000, gbps: 3, batch: 4}\n"
                               "    - {bytes: 2000, gbps: 3, batch: 2}\n",
                        "w.yaml"),
      doctest::Contains("w.yaml:33:37: batch: weights_curve points must be in increasing "
                        "order of batch, then bytes"));
  CHECK_THROWS_WITH(ParseHardwareYaml(HardwareToYaml(WithCurve(LoadHardware("h100-sxm"), {})) +
                                          "    - {bytes: 1000, gbps: 3, batch: 2}\n",
                                      "w.yaml"),
                    doctest::Contains("batch: unknown field in curve[0]"));
}

TEST_CASE(
    "latency CLI: a grouped profile names its groups and the model's, and JSON has both phases") {
  const std::string profile = SourcePath("tests/data/profile-groups.yaml");
  CliResult r = RunKvplan("latency llama-3.1-8b --profile " + profile + " -c 8K");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("(4 points at GQA groups 1, 4; attention read at group 4; weights at the GEMV "
                   "curve, 2 points, each matrix at its size, test machine)") != std::string::npos);
  // A model known only by its params has no matrices: one layer's share, said so.
  const std::string params_only = kvplan::test::WriteFile(
      kvplan::test::TempDir(), "ponly.yaml",
      "name: ponly\nsource: test\nlayers: 32\nhidden_size: 4096\nquery_heads: 32\nkv_heads: 8\n"
      "head_dim: 128\nmax_context: 8192\nparams: 8000000000\nweight_dtype: bf16\n");
  CliResult p = RunKvplan("latency " + params_only + " --profile " + profile + " -c 1K");
  REQUIRE(p.exit_code == 0);
  CHECK(p.out.find("weights at the GEMV curve, 2 points, at one layer's share (no "
                   "architecture), test machine)") != std::string::npos);
  CliResult j = RunKvplan("latency llama-3.1-8b --profile " + profile + " -c 8K --format json");
  REQUIRE(j.exit_code == 0);
  CHECK(j.out.find("\"weights\": {") != std::string::npos);
  CHECK(j.out.find("\"attention\": {") != std::string::npos);
  // MHA (Llama-2-7B: 32 query and 32 KV heads) reads the group-1 curve.
  CliResult mha = RunKvplan("latency llama-2-7b --profile " + profile + " -c 2K");
  CHECK(mha.out.find("attention read at group 1;") != std::string::npos);
}

TEST_CASE("attention runs at the bf16 peak whatever the weight format; the weights at theirs") {
  const ModelSpec m = LoadModel("llama-3.1-8b");
  const CacheDtype& kv = FindCacheDtype("bf16");
  const HardwareSpec h100 = LoadHardware("h100-sxm");
  const ModelCost bf16 = ComputeModelCost(m, kv, FindWeightFormat("bf16"), 1);
  const ModelCost fp8 = ComputeModelCost(m, kv, FindWeightFormat("fp8"), 1);
  CHECK(fp8.compute_dtype == "fp8");
  CHECK(fp8.attention_dtype == "bf16");
  const StepEstimate a = EstimatePrefill(bf16, h100, 32768), b = EstimatePrefill(fp8, h100, 32768);
  // 2 x 32 heads x (128 + 128) x 32 layers per pair, 32,768 x 32,769 / 2
  // pairs: 281 TFLOP, at 989.4 x 0.6 TFLOP/s = 474 ms with either format.
  const double flops = 2.0 * 32 * 256 * 32 * (32768.0 * 32769 / 2);
  CHECK(b.attention.flops == doctest::Approx(flops));
  CHECK(b.attention_peak_flops == 989.4e12);
  CHECK(b.attention.compute_s == doctest::Approx(flops / (989.4e12 * 0.6)));
  CHECK(b.attention.compute_s == doctest::Approx(0.4742).epsilon(0.001));
  CHECK(b.attention.compute_s == doctest::Approx(a.attention.compute_s));
  // The weight GEMMs do run at the fp8 peak: half the bf16 time.
  CHECK(b.peak_flops == 1978.9e12);
  CHECK(b.weights.compute_s == doctest::Approx(a.weights.compute_s * 989.4 / 1978.9));
  // Decode attention too.
  CHECK(EstimateDecodeStep(fp8, h100, 8192, 64).attention.compute_s ==
        doctest::Approx(EstimateDecodeStep(bf16, h100, 8192, 64).attention.compute_s));

  CliResult r = RunKvplan("latency llama-3.1-8b --gpu h100-sxm --weight-dtype fp8 -c 32K");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("compute:   weight matmuls at the fp8 dense peak 1979 TFLOP/s x 0.60\n"
                   "           attention at the bf16 dense peak 989.4 TFLOP/s x 0.60 (16-bit "
                   "activations)\n") != std::string::npos);
  CHECK(r.out.find("281 TFLOP at 593.6 TFLOP/s = 474 ms") != std::string::npos);
  // Thousands of TFLOP read as numbers, not "1.32e+04".
  CliResult big = RunKvplan("latency llama-3.1-405b --gpu h200 -tp 8 -c 128K");
  CHECK(big.out.find("| 13,230 TFLOP at 593.6 TFLOP/s = 22,286 ms") != std::string::npos);
  CHECK(big.out.find("e+") == std::string::npos);
  CliResult j =
      RunKvplan("latency llama-3.1-8b --gpu h100-sxm --weight-dtype fp8 -c 32K --format json");
  CHECK(j.out.find("\"compute_dtype\": \"fp8\"") != std::string::npos);
  CHECK(j.out.find("\"attention_compute_dtype\": \"bf16\"") != std::string::npos);
  CHECK(j.out.find("\"attention_peak_flops\": 989400000000000") != std::string::npos);
}

TEST_CASE("a weight format the GPU has no peak for runs at, and is labelled, the bf16 peak") {
  const HardwareSpec h100 = LoadHardware("h100-sxm"), a100 = LoadHardware("a100-80gb");
  const HardwareSpec b200 = LoadHardware("b200");
  CHECK(PeakDtypeFor(h100, "fp4") == "bf16");
  CHECK(PeakDtypeFor(a100, "fp8") == "bf16");
  CHECK(PeakDtypeFor(b200, "fp4") == "fp4");
  CHECK(PeakDtypeFor(h100, "fp8") == "fp8");
  // NVIDIA's HGX B200 table: FP4 18 PFLOPS with sparsity, 9 dense.
  CHECK(b200.PeakFlops("fp4") == 9000e12);
  CHECK(PeakFlopsFor(b200, "fp4") == 9000e12);
  HardwareSpec none = a100;
  none.flops.clear();
  CHECK(PeakDtypeFor(none, "fp8").empty());
  CHECK(PeakFlopsFor(none, "fp8") == 0);

  CliResult b = RunKvplan("latency llama-3.1-70b --gpu b200 --weight-dtype nvfp4 -c 8K");
  REQUIRE(b.exit_code == 0);
  CHECK(b.out.find("compute:   weight matmuls at the fp4 dense peak 9000 TFLOP/s x 0.60\n") !=
        std::string::npos);
  CliResult h = RunKvplan("latency llama-3.1-70b --gpu h100-sxm -tp 2 --weight-dtype nvfp4 -c 8K");
  REQUIRE(h.exit_code == 0);
  CHECK(h.out.find("weight matmuls at the bf16 dense peak 989.4 TFLOP/s x 0.60 (no fp4 figure for "
                   "h100-sxm)\n") != std::string::npos);
  CliResult a = RunKvplan("latency llama-3.1-8b --gpu a100-80gb --weight-dtype fp8 -c 8K");
  REQUIRE(a.exit_code == 0);
  CHECK(a.out.find("weight matmuls at the bf16 dense peak 312 TFLOP/s x 0.60 (no fp8 figure for "
                   "a100-80gb)\n") != std::string::npos);
  CHECK(a.out.find("fp8 dense peak") == std::string::npos);
  CliResult aj = RunKvplan("latency llama-3.1-8b --gpu a100-80gb --weight-dtype fp8 --format json");
  CHECK(aj.out.find("\"compute_dtype\": \"bf16\"") != std::string::npos);
  CHECK(aj.out.find("\"weights_format_compute_dtype\": \"fp8\"") != std::string::npos);
  // bf16 weights: one peak for both phases, one line.
  CliResult one = RunKvplan("latency llama-3.1-8b --gpu h100-sxm -c 4K");
  CHECK(one.out.find("compute:   bf16 dense peak 989.4 TFLOP/s x 0.60\n\n") != std::string::npos);
}

// The number of times `what` occurs in `text`.
static size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_CASE("the batch table marks batches whose weights + KV exceed the GPU") {
  // 16.06 GB of weights + 1.07 GB of KV per 8K sequence against the H100's
  // 85.52 GB: batch 64 fits (84.8 GB), 128 does not (153.5 GB).
  CliResult r = RunKvplan("latency llama-3.1-8b --gpu h100-sxm -c 8K -b 16");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find(" 64 ") != std::string::npos);
  CHECK(r.out.find("64*") == std::string::npos);
  CHECK(r.out.find("128*") != std::string::npos);
  CHECK(r.out.find("256*") != std::string::npos);
  CHECK(r.out.find("* weights + KV exceed the 79.65 GiB of h100-sxm per rank: that batch cannot "
                   "be resident (times shown as if it were)\n") != std::string::npos);
  CliResult j = RunKvplan("latency llama-3.1-8b --gpu h100-sxm -c 8K -b 16 --format json");
  REQUIRE(j.exit_code == 0);
  CHECK(Occurrences(j.out, "\"fits\": false") == 2);     // rows 128 and 256
  CHECK(Occurrences(j.out, "\"fits\": true") == 1 + 7);  // batch 16; rows 1 to 64
  CHECK(j.out.find("\"weights_fit\": true") != std::string::npos);
  CHECK(j.out.find("\"memory_bytes\": 85520809984") != std::string::npos);
  // A batch that fits has no marker and no legend.
  CliResult fits = RunKvplan("latency llama-3.1-8b --gpu h100-sxm -c 8K --max-batch 32");
  CHECK(fits.out.find("*") == std::string::npos);
  // The model alone does not fit: Mixtral-8x7B's bf16 weights on an 80 GB A100.
  CliResult mx = RunKvplan("latency mixtral-8x7b --gpu a100-80gb -c 8K --prompt 2K --format json");
  REQUIRE(mx.exit_code == 0);
  CHECK(mx.out.find("\"weights_fit\": false") != std::string::npos);
  CHECK(mx.out.find("\"fits\": false") != std::string::npos);
  CHECK(mx.out.find("\"fits\": true") == std::string::npos);
  CliResult mt = RunKvplan("latency mixtral-8x7b --gpu a100-80gb -c 8K --prompt 2K");
  CHECK(mt.out.find("note: the weights alone need ") != std::string::npos);
  CHECK(mt.out.find("the model does not load at tensor parallel 1 (kvplan capacity)") !=
        std::string::npos);
}

TEST_CASE("latency csv: plain numbers, the unit in the header") {
  CliResult r = RunKvplan("latency llama-3.1-8b --gpu h100-sxm -c 8K -b 16 --format csv");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("batch,fits,resident_bytes,weight_bytes,kv_bytes,memory_ms,compute_ms,tpot_ms,"
                    "tokens_per_s_per_sequence,tokens_per_s_aggregate,bound\n",
                    0) == 0);
  // Batch 1: 15,009,849,344 B of weights and 8,192 x 131,072 B of KV read;
  // 16,060,522,496 B of weights resident (the embedding table too) + the KV.
  CHECK(r.out.find("\n1,true,17134264320,15009849344,1073741824,") != std::string::npos);
  CHECK(r.out.find("\n256,false,") != std::string::npos);
  CHECK(r.out.find(" GB") == std::string::npos);
  CHECK(r.out.find(" ms") == std::string::npos);
}

TEST_CASE("a CPU profile's bandwidth prints with the digits to check it by hand") {
  const std::string profile = SourcePath("tests/data/profile-groups.yaml");
  CliResult r = RunKvplan("latency llama-3.1-8b --profile " + profile + " -c 8K");
  REQUIRE(r.exit_code == 0);
  // The weights curve (9 GB/s at 1 MiB to 14 at 1 GiB, so 9 + 0.5 x
  // log2(MiB)) at each matrix: gate_up 224 MiB 12.90 GB/s, down 112 MiB
  // 12.40, qkv 48 MiB 11.79, o 32 MiB 11.50, x 32 layers: 32 x (18.21 +
  // 9.47 + 4.27 + 2.92) ms = 1,115.7 ms; lm_head 1,002 MiB at 13.98: 75.2
  // ms; norms at 9: 0.06 ms. 1,191 ms, 15.01 GB / 1.191 s = 12.6 GB/s.
  // Attention: the group-4 curve at one layer's 33.5 MB of KV, 1.07 GB /
  // 6.5 GB/s = 165 ms. Both check by hand, where "13 GB/s" and "7 GB/s"
  // would not.
  CHECK(r.out.find("15.01 GB at 12.6 GB/s = 1,191 ms") != std::string::npos);
  CHECK(r.out.find("1.07 GB at 6.5 GB/s = 165 ms") != std::string::npos);
}

TEST_CASE("kvplan latency runs an fp32 checkpoint as the engines do: in bf16, as capacity does") {
  // gemma-2-9b is published in fp32; vLLM, SGLang and TRT-LLM serve it in
  // bf16 (docs/capacity.md): 18.48 GB of weights at the bf16 peak, not 37.
  auto lat = test::RunKvplan("latency gemma-2-9b --gpu h100-sxm -c 4K --format json");
  REQUIRE(lat.exit_code == 0);
  CHECK(lat.out.find("\"weight_dtype\": \"bf16\"") != std::string::npos);
  CHECK(lat.out.find("\"kv_cache_dtype\": \"bf16\"") != std::string::npos);
  CHECK(lat.out.find("\"compute_dtype\": \"bf16\"") != std::string::npos);
  CHECK(lat.out.find("\"weight_bytes_resident\": 18483411968,") != std::string::npos);
  auto cap = test::RunKvplan("capacity gemma-2-9b --gpu h100-sxm --format json");
  REQUIRE(cap.exit_code == 0);
  CHECK(cap.out.find("\"weights_bytes\": 18483411968,") != std::string::npos);
  // size's "auto" cache is the same type (same bytes as fp16; the label agrees now).
  CHECK(test::RunKvplan("size gemma-2-9b --format json").out.find("\"kv_cache_dtype\": \"bf16\"") !=
        std::string::npos);
  // Asked for, fp32 weights are still fp32.
  CHECK(test::RunKvplan("latency gemma-2-9b --gpu h100-sxm -c 4K --weight-dtype fp32 --format json")
            .out.find("\"weight_bytes_resident\": 36966823936,") != std::string::npos);
}
