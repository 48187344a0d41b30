// Times the trade-off sweep behind `kvplan tradeoff`: every bundled model x
// every bundled GPU x three cache dtypes, ComputeCapacity once per deployment,
// then 82 context lengths (max batch each) and 82 batch sizes (max context
// each, a binary search) per deployment: over 100,000
// configurations in all.
//
// Build and run (the target is not built by default):
//   cmake --build --preset release --target kvplan_bench_tradeoff
//   ./build/release/kvplan_bench_tradeoff
//
// Before timing, the answers are validated (reference first, then speed).
// Prints the median of 7 runs as CPU time (steady on a shared machine) and
// wall time, and how much of it is ComputeCapacity. Figures: docs/perf.md,
// "tradeoff sweep".
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <vector>

#include "plan/capacity.h"
#include "plan/tradeoff.h"
#include "spec/catalog.h"

using namespace kvplan;

namespace {

constexpr uint64_t kGrid = 82;  // contexts and batch sizes per deployment

struct Deployment {
  CapacityResult cap;
  TradeoffInput in;
  std::vector<uint64_t> contexts;
  std::vector<uint64_t> batches;
};

TradeoffInput InputOf(const CapacityResult& cap) {
  TradeoffInput in;
  in.num_blocks = cap.num_blocks;
  in.block_size = cap.block_size;
  in.max_context = cap.max_model_len;
  const CapacityResult* p = &cap;
  in.blocks_for_request = [p](uint64_t n) { return p->BlocksForRequest(n); };
  return in;
}

// One full sweep; returns configurations evaluated and a checksum that keeps
// the optimiser from dropping the work.
std::pair<uint64_t, uint64_t> Sweep(std::vector<Deployment>& out) {
  uint64_t configs = 0, checksum = 0;
  out.clear();
  // Reserved up front: each TradeoffInput points at its CapacityResult.
  out.reserve(CatalogModels().size() * CatalogHardware().size() * 3);
  for (const ModelSpec& m : CatalogModels()) {
    for (const HardwareSpec& hw : CatalogHardware()) {
      for (const char* dtype : {"auto", "fp16", "fp8"}) {
        EngineConfig c;
        c.kv_cache_dtype = dtype;
        Deployment d;
        d.cap = ComputeCapacity(m, hw, c);
        if (d.cap.HasError() || d.cap.num_blocks == 0) continue;
        for (uint64_t i = 1; i <= kGrid; ++i) {
          d.contexts.push_back(std::max<uint64_t>(1, d.cap.max_model_len * i / kGrid));
          d.batches.push_back(i * i);
        }
        out.push_back(std::move(d));
        Deployment& e = out.back();
        e.in = InputOf(e.cap);
        Tradeoff t = ComputeTradeoff(e.in, e.contexts, e.batches);
        configs += t.by_context.size() + t.by_batch.size();
        for (const ContextPoint& p : t.by_context) checksum += p.max_batch;
        for (const BatchPoint& p : t.by_batch) checksum += p.max_context;
      }
    }
  }
  return {configs, checksum};
}

// ComputeCapacity alone, for the same deployments: the part of the sweep
// that is not the trade-off search.
uint64_t CapacityOnly() {
  uint64_t blocks = 0;
  for (const ModelSpec& m : CatalogModels()) {
    for (const HardwareSpec& hw : CatalogHardware()) {
      for (const char* dtype : {"auto", "fp16", "fp8"}) {
        EngineConfig c;
        c.kv_cache_dtype = dtype;
        blocks += ComputeCapacity(m, hw, c).num_blocks;
      }
    }
  }
  return blocks;
}

// CPU time of this process: steadier than wall time on a shared machine.
double CpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main() {
  std::vector<Deployment> deployments;
  auto [configs, checksum] = Sweep(deployments);
  // Validate every max-context answer by its definition (b requests of that
  // length fit, one token more does not), and for every 17th deployment
  // against a linear scan over all lengths, which also checks that blocks per
  // request never decrease with length (what the binary search relies on).
  uint64_t checked = 0;
  for (size_t k = 0; k < deployments.size(); ++k) {
    const Deployment& d = deployments[k];
    auto fits = [&](uint64_t n, uint64_t b) {
      return d.in.blocks_for_request(n) * b <= d.in.num_blocks;
    };
    for (uint64_t b : d.batches) {
      uint64_t fast = MaxContextAtBatch(d.in, b);
      bool ok = fast == 0 ? !fits(1, b)
                          : fits(fast, b) && (fast == d.in.max_context || !fits(fast + 1, b));
      if (k % 17 == 0 && b == d.batches[5]) {
        uint64_t slow = 0;
        for (uint64_t n = 1; n <= d.in.max_context && fits(n, b); ++n) slow = n;
        ok = ok && slow == fast;
      }
      if (!ok) {
        std::fprintf(stderr, "MISMATCH: deployment %zu batch %llu: %llu\n", k,
                     static_cast<unsigned long long>(b), static_cast<unsigned long long>(fast));
        return 1;
      }
      ++checked;
    }
  }
  std::vector<double> wall, cpu, cap_cpu;
  for (int run = 0; run < 7; ++run) {
    double c0 = CpuMs();
    auto t0 = std::chrono::steady_clock::now();
    auto [n, sum] = Sweep(deployments);
    auto t1 = std::chrono::steady_clock::now();
    double c1 = CpuMs();
    if (n != configs || sum != checksum) {
      std::fprintf(stderr, "non-deterministic sweep\n");
      return 1;
    }
    wall.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    cpu.push_back(c1 - c0);
    double c2 = CpuMs();
    volatile uint64_t sink = CapacityOnly();
    (void)sink;
    cap_cpu.push_back(CpuMs() - c2);
  }
  double med_cpu = Median(cpu), med_cap = Median(cap_cpu);
  fmt::print("deployments (model x gpu x kv dtype): {}\n", deployments.size());
  fmt::print("configurations: {} ({} max-context answers validated)\n", configs, checked);
  fmt::print("sweep: median {:.1f} ms CPU, {:.1f} ms wall (7 runs)\n", med_cpu, Median(wall));
  fmt::print("  of which ComputeCapacity for the {} deployments: {:.1f} ms CPU\n",
             deployments.size(), med_cap);
  fmt::print("  trade-off search alone: {:.1f} ms CPU = {:.2f} us per configuration\n",
             med_cpu - med_cap, (med_cpu - med_cap) * 1e3 / static_cast<double>(configs));
  fmt::print("{:.2f} million configurations per CPU-second, capacity included\n",
             static_cast<double>(configs) / med_cpu / 1e3);
  return 0;
}
