// Times the search behind `kvplan fleet`: one model over three GPU types,
// two cache dtypes and every layout (tp within a node, pp across nodes),
// aggregated and disaggregated, in both load modes (a rate with TTFT/TPOT
// targets, and concurrent users). The answer is checked first (a plan
// found, every plan within its targets), then timed.
//
// Build and run (the target is not built by default):
//   cmake --build --preset release --target kvplan_bench_fleet
//   ./build/release/kvplan_bench_fleet
//
// Prints the median of 9 runs as CPU time and wall time per search, for
// llama-3.1-70b and deepseek-v3 on h100-sxm, h200 and l40s. Figures:
// docs/perf.md, "fleet search".
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <vector>

#include "plan/fleet.h"
#include "spec/catalog.h"

using namespace kvplan;

namespace {

const ModelSpec& Model(const std::string& name) {
  for (const ModelSpec& m : CatalogModels()) {
    if (m.name == name) return m;
  }
  std::fprintf(stderr, "no catalog model %s\n", name.c_str());
  std::exit(1);
}

std::vector<FleetGpu> Gpus() {
  std::vector<FleetGpu> out;
  for (const HardwareSpec& h : CatalogHardware()) {
    if (h.name == "h100-sxm" || h.name == "h200" || h.name == "l40s") out.push_back({h, 2.0});
  }
  return out;
}

double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// One search of each load mode; returns plans found.
size_t Search(const ModelSpec& m, const std::vector<FleetGpu>& gpus, bool check) {
  FleetOptions o;
  o.kv_dtypes = {"auto", "fp8"};
  FleetLoad rate;
  rate.rate = 50;
  rate.prompt = 2000;
  rate.output = 500;
  rate.max_len = 2500;
  FleetTargets t;
  t.ttft_s = 2;
  t.tpot_s = 0.1;
  FleetResult a = PlanFleet(m, gpus, rate, t, o);
  FleetLoad users = rate;
  users.rate = 0;
  users.users = 200;
  FleetResult b = PlanFleet(m, gpus, users, FleetTargets{}, o);
  if (check) {
    if (a.plans.empty() || b.plans.empty()) {
      std::fprintf(stderr, "%s: no plan found\n", m.name.c_str());
      std::exit(1);
    }
    for (const FleetPlan& p : a.plans) {
      if (p.tpot_s > t.tpot_s * 1.0001 || p.ttft_s > t.ttft_s * 1.0001) {
        std::fprintf(stderr, "%s: a plan misses its targets\n", m.name.c_str());
        std::exit(1);
      }
    }
  }
  return a.plans.size() + b.plans.size();
}

}  // namespace

int main() {
  const std::vector<FleetGpu> gpus = Gpus();
  for (const char* name : {"llama-3.1-70b", "deepseek-v3"}) {
    const ModelSpec& m = Model(name);
    Search(m, gpus, true);
    std::vector<double> cpu, wall;
    size_t plans = 0;
    for (int i = 0; i < 9; ++i) {
      const double c0 = CpuSeconds();
      const auto w0 = std::chrono::steady_clock::now();
      plans = Search(m, gpus, false);
      wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
      cpu.push_back(CpuSeconds() - c0);
    }
    std::sort(cpu.begin(), cpu.end());
    std::sort(wall.begin(), wall.end());
    fmt::print(
        "{}: two searches (rate with targets, users), 3 GPUs x 2 cache dtypes x every layout, {} "
        "plans: CPU {:.1f} ms, wall {:.1f} ms (median of 9)\n",
        name, plans, cpu[4] * 1e3, wall[4] * 1e3);
  }
  return 0;
}
