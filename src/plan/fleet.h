// The fleet search: for a load (a request rate, or users each with one
// request in flight) and TTFT/TPOT targets at a percentile, every GPU type,
// tensor/pipeline layout, cache and weight format and serving mode
// (aggregated, or disaggregated prefill and decode replicas), the fewest
// (or cheapest) GPUs that meet every target; and for each family that
// cannot, the bound that rules it out. docs/fleet.md states the model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/fleet_model.h"
#include "spec/engine.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"

namespace kvplan {

struct FleetLoad {
  double rate = 0;             // requests/s, Poisson arrivals (open loop); 0 when users is set
  uint64_t users = 0;          // concurrent users, each with one request in flight (closed loop)
  double prompt = 0;           // mean prompt tokens
  double output = 0;           // mean output tokens
  uint64_t max_len = 0;        // the longest request: the engine's max_model_len
  uint64_t shared_prefix = 0;  // tokens every request shares (cached once with prefix caching)
};

struct FleetTargets {
  double ttft_s = 0;             // 0: none
  double tpot_s = 0;             // 0: none
  double percentile = 0.9;       // the TTFT queueing quantile (0.5, 0.9, 0.99)
  double max_utilisation = 0.8;  // of a replica's saturated rate
};

struct FleetGpu {
  HardwareSpec hw;
  double usd_per_hour = 0;  // per GPU; 0: no price
};

struct FleetOptions {
  Engine engine = Engine::kVllm;
  std::vector<std::string> kv_dtypes = {"auto"};
  std::vector<std::string> weight_dtypes = {""};  // "": the checkpoint's
  bool disaggregated = true;                      // also search xPyD
  uint64_t max_gpus = 4096;
};

struct FleetPlan {
  std::string gpu;
  bool disaggregated = false;
  ReplicaShape shape;
  uint64_t replicas = 0;          // aggregated; disaggregated: prefill + decode
  uint64_t prefill_replicas = 0;  // disaggregated
  uint64_t decode_replicas = 0;
  uint64_t gpus = 0;
  uint64_t nodes = 0;
  std::string kv_dtype, weight_dtype;  // resolved
  std::string kv_flag, weight_flag;    // as asked: "auto" / "" (the checkpoint's) or a name
  uint64_t max_num_seqs = 0;  // per (decode) replica: the batch the load reaches, rounded up
  uint64_t mem_requests = 0;  // requests of the mean length a replica's cache holds
  double rate = 0;            // requests/s, whole fleet
  double batch = 0;           // requests decoding per (decode) replica
  double ttft_s = 0, tpot_s = 0;
  double utilisation = 0;  // of the (decode) replica's saturated rate
  double tokens_per_s_per_gpu = 0, tokens_per_s_per_user = 0;
  double usd_per_hour = 0, usd_per_million_tokens = 0;
  double transfer_bytes = 0, transfer_s = 0;  // disaggregated: one request's cache moved
  std::string limit;  // what caps a replica's rate: memory, TPOT, TTFT, utilisation
};

struct FleetRejection {
  std::string family;  // "l40s tp1 fp8 cache, aggregated"
  std::string bound;   // memory | TPOT | TTFT | GPUs
  std::string reason;  // one line with the numbers
};

/// A point of the throughput-latency frontier: one replica at one batch.
struct FleetPoint {
  std::string family;
  uint64_t batch = 0;
  double tokens_per_s_per_gpu = 0, tokens_per_s_per_user = 0;
};

struct FleetResult {
  std::vector<FleetPlan> plans;  // cheapest first
  std::vector<FleetRejection> rejected;
  std::vector<FleetPoint> pareto;           // tokens/s per user ascending, each on the frontier
  bool priced = false;                      // every GPU has a price: plans are ordered by $/hour
  double best_ttft_s = 0, best_tpot_s = 0;  // the fastest any family reaches alone
  std::string best_ttft_family, best_tpot_family;
};

FleetResult PlanFleet(const ModelSpec& model, const std::vector<FleetGpu>& gpus,
                      const FleetLoad& load, const FleetTargets& targets,
                      const FleetOptions& options);

/// One replica of `shape` serving `concurrency` requests of `prompt` and
/// `output` tokens in a closed loop (0: as many as its cache holds, the
/// engines' offline throughput runs): what the published benchmarks report.
struct ServingPrediction {
  double output_tokens_per_s = 0;  // whole replica
  double ttft_s = 0, tpot_s = 0;   // means
  double batch = 0;
  uint64_t mem_requests = 0;
};
ServingPrediction PredictServing(const ModelSpec& model, const HardwareSpec& hw, Engine engine,
                                 ReplicaShape shape, const std::string& kv_dtype,
                                 const std::string& weight_dtype, uint64_t concurrency,
                                 double prompt, double output);

}  // namespace kvplan
