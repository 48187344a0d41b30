// The fleet model and search (plan/fleet_model.h, plan/fleet.h): the
// queueing and link arithmetic by hand, Little's law held at the steady
// state, and the search's answers against the targets it was given.
#include "plan/fleet.h"

#include <doctest/doctest.h>

#include <cmath>

#include "import/resolve.h"
#include "plan/capacity.h"
#include "spec/cache_dtype.h"

using namespace kvplan;

namespace {

ModelCost CostOf(const ModelSpec& m, const HardwareSpec& hw, uint64_t tp) {
  EngineConfig c;
  c.tp = tp;
  return ComputeModelCost(m, FindCacheDtype("bf16"),
                          ResolvedWeightFormat(m, ResolveEngineConfig(m, hw, c)), tp);
}

FleetLoad Rate(double rate, double prompt, double output) {
  FleetLoad l;
  l.rate = rate;
  l.prompt = prompt;
  l.output = output;
  l.max_len = static_cast<uint64_t>(prompt + output);
  return l;
}

}  // namespace

TEST_CASE("fleet model: M/M/1 wait quantiles") {
  // P(W > t) = rho e^{-(1 - rho) t / s}: at rho 0.5, p90 is 2 s ln 5.
  CHECK(QueueWaitSeconds(1, 0.5, 0.9) == doctest::Approx(2 * std::log(5.0)));
  CHECK(QueueWaitSeconds(1, 0.5, 0.5) == 0);  // half the requests never wait
  CHECK(QueueWaitSeconds(1, 0, 0.99) == 0);
  CHECK(std::isinf(QueueWaitSeconds(1, 1, 0.5)));
  CHECK(QueueWaitSeconds(0.2, 0.8, 0.99) == doctest::Approx(0.2 / 0.2 * std::log(80.0)));
}

TEST_CASE("fleet model: links, steps and Little's law") {
  const ModelSpec m = LoadModel("llama-3.1-70b");
  const HardwareSpec h100 = LoadHardware("h100-sxm");
  REQUIRE(h100.node);
  CHECK(h100.node->gpus == 8u);
  CHECK(h100.node->link_gbps == 450);
  const ModelCost cost = CostOf(m, h100, 4);
  ReplicaModel r(m, cost, h100, ReplicaShape{4, 1}, 2000, 500);
  // A ring all-reduce: latency + 2 (tp - 1) / tp x bytes over 80% of the link.
  CHECK(r.AllReduceSeconds(1e6) == doctest::Approx(6e-6 + 1.5 * 1e6 / (450e9 * 0.8)));
  // Two per layer, batch x hidden x 2 bytes each.
  CHECK(r.CommSeconds(8) == doctest::Approx(2 * 80 * r.AllReduceSeconds(8 * 8192 * 2)));
  // A decode step is the latency model's plus that communication.
  CHECK(r.DecodeSeconds(8) ==
        doctest::Approx(EstimateDecodeStep(cost, h100, 2250, 8).seconds + r.CommSeconds(8)));
  CHECK(r.DecodeSeconds(64) > r.DecodeSeconds(1));
  // Steady state: the decode batch is rate x output x TPOT, the TPOT the
  // step stretched by the prefill's share of the GPU.
  const ReplicaLoad l = LoadAggregated(r, 2, 0.9, 1000);
  REQUIRE(l.stable);
  CHECK(l.prefill_share == doctest::Approx(2 * r.PrefillSeconds()));
  CHECK(l.batch == doctest::Approx(2 * 500 * l.tpot_s).epsilon(0.01));
  CHECK(l.tpot_s == doctest::Approx(r.DecodeSeconds(static_cast<uint64_t>(std::ceil(l.batch))) /
                                    (1 - l.prefill_share)));
  CHECK(l.ttft_s >= l.prefill_s);
  // Past the memory the load does not settle; past a full prefill share neither.
  CHECK_FALSE(LoadAggregated(r, 2, 0.9, 10).stable);
  CHECK_FALSE(LoadAggregated(r, 1.01 / r.PrefillSeconds(), 0.9, 1e9).stable);
  // Decode-only: no prefill share.
  const ReplicaLoad d = LoadDecodeOnly(r, 2, 1000);
  CHECK(d.tpot_s < l.tpot_s);
  // Stages beyond a node cross the network.
  ReplicaModel p(m, cost, h100, ReplicaShape{8, 2}, 2000, 500);
  CHECK(p.StageHopSeconds(1e6) == doctest::Approx(46e-6 + 1e6 / (50e9 * 0.8)));
}

TEST_CASE("fleet search: every plan meets its targets, the cheapest first") {
  const ModelSpec m = LoadModel("llama-3.1-8b");
  std::vector<FleetGpu> gpus = {{LoadHardware("h100-sxm"), 2.99}, {LoadHardware("l40s"), 0.99}};
  FleetTargets t;
  t.ttft_s = 0.5;
  t.tpot_s = 0.05;
  const FleetLoad load = Rate(100, 2000, 500);
  const FleetResult r = PlanFleet(m, gpus, load, t, FleetOptions{});
  REQUIRE_FALSE(r.plans.empty());
  CHECK(r.priced);
  for (size_t i = 0; i < r.plans.size(); ++i) {
    const FleetPlan& p = r.plans[i];
    CAPTURE(i);
    CHECK(p.tpot_s <= t.tpot_s);
    CHECK(p.ttft_s <= t.ttft_s);
    CHECK(p.rate == doctest::Approx(100));
    CHECK(p.utilisation <= 0.8 + 1e-9);
    CHECK(p.gpus == p.replicas * p.shape.tp * p.shape.pp);
    CHECK(p.usd_per_hour ==
          doctest::Approx(static_cast<double>(p.gpus) * (p.gpu == "l40s" ? 0.99 : 2.99)));
    if (i > 0) CHECK(p.usd_per_hour >= r.plans[i - 1].usd_per_hour);
    if (p.disaggregated) CHECK(p.replicas == p.prefill_replicas + p.decode_replicas);
  }
  // Twice the load needs more GPUs.
  const FleetResult twice = PlanFleet(m, gpus, Rate(200, 2000, 500), t, FleetOptions{});
  CHECK(twice.plans.front().gpus > r.plans.front().gpus);
  // The frontier: faster per user means fewer tokens per GPU.
  REQUIRE(r.pareto.size() >= 2);
  for (size_t i = 1; i < r.pareto.size(); ++i) {
    CHECK(r.pareto[i].tokens_per_s_per_user > r.pareto[i - 1].tokens_per_s_per_user);
    CHECK(r.pareto[i].tokens_per_s_per_gpu < r.pareto[i - 1].tokens_per_s_per_gpu);
  }
}

TEST_CASE("fleet search: users, and the bounds that rule families out") {
  const ModelSpec m = LoadModel("llama-3.1-70b");
  std::vector<FleetGpu> gpus = {{LoadHardware("h200"), 0}, {LoadHardware("l40s"), 0}};
  FleetLoad users = Rate(0, 2000, 500);
  users.users = 200;
  const FleetResult r = PlanFleet(m, gpus, users, FleetTargets{}, FleetOptions{});
  REQUIRE_FALSE(r.plans.empty());
  CHECK_FALSE(r.priced);
  const FleetPlan& best = r.plans.front();
  // The users are spread over the replicas: each holds its share in flight.
  CHECK(static_cast<double>(best.max_num_seqs * best.replicas) >= 200);
  bool memory = false;
  for (const FleetRejection& x : r.rejected) {
    if (x.bound == "memory" && x.family.rfind("l40s tp1", 0) == 0) {
      memory = true;
      CHECK(x.reason.find("weights 131.42 GiB a GPU") != std::string::npos);
    }
  }
  CHECK(memory);
  // PCIe cards have no network in their node: no pipeline across nodes.
  for (const FleetPlan& p : r.plans) {
    if (p.gpu == "l40s") CHECK(p.shape.pp == 1u);
  }
  // A TPOT under the weight-read floor of every layout: no plan, and why.
  FleetTargets fast;
  fast.tpot_s = 0.001;
  const FleetResult none = PlanFleet(m, gpus, Rate(1, 2000, 500), fast, FleetOptions{});
  CHECK(none.plans.empty());
  CHECK(none.best_tpot_s > 0.001);
  CHECK(none.best_tpot_family.find("h200 tp8") == 0);
  for (const FleetRejection& x : none.rejected) {
    if (x.bound != "memory") CHECK(x.bound == "TPOT");
  }
}

TEST_CASE("fleet search: pipeline stages across nodes when no node holds the weights") {
  // Llama-3.1-405B in bf16 (756 GiB of weights, 94.5 GiB a GPU at tp 8) fits no node of 8
  // H100s: two nodes, tp 8 x pp 2, as it is served.
  const ModelSpec m = LoadModel("llama-3.1-405b");
  FleetLoad users = Rate(0, 2000, 500);
  users.users = 8;
  FleetOptions o;
  o.weight_dtypes = {"bf16"};
  const FleetResult r = PlanFleet(m, {{LoadHardware("h100-sxm"), 0}}, users, FleetTargets{}, o);
  REQUIRE_FALSE(r.plans.empty());
  const FleetPlan& best = r.plans.front();
  CHECK(best.shape.tp == 8u);
  CHECK(best.shape.pp == 2u);
  CHECK(best.gpus == 16u);
  CHECK(best.nodes == 2u);
  // bf16 is the checkpoint's own format: nothing to quantize, no flag.
  CHECK(best.weight_flag.empty());
  // A node of 6 GPUs: the stages take the widest power-of-two tp it holds.
  HardwareSpec six = LoadHardware("h100-sxm");
  REQUIRE(six.node);
  six.node->gpus = 6;
  const FleetResult r6 = PlanFleet(m, {{six, 0}}, users, FleetTargets{}, o);
  REQUIRE_FALSE(r6.plans.empty());
  for (const FleetPlan& p : r6.plans) {
    CHECK(p.shape.tp == 4u);
    CHECK(p.shape.pp > 1u);
  }
}
