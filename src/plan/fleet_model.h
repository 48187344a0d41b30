// One serving replica at steady state: how fast it decodes and prefills at a
// batch, what the tensor- and pipeline-parallel links add, and what a
// request rate does to its TTFT and TPOT (Little's law, chunked-prefill
// interference, an M/M/1 wait for the prefill queue). `kvplan fleet` sizes
// fleets from it; docs/fleet.md states every piece.
#pragma once

#include <cstdint>
#include <map>

#include "plan/latency.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"

namespace kvplan {

/// NCCL reaches about 80% of a link's line rate (nccl-tests: 370 of 450 GB/s
/// on NVLink 4); the same share is taken of every link and network.
inline constexpr double kLinkEfficiency = 0.8;
/// Prompt tokens one chunked-prefill step takes beside the decode batch
/// (vLLM's and SGLang's default token budget for online serving).
inline constexpr uint64_t kPrefillChunkTokens = 8192;
/// Activations move between ranks in 16 bits.
inline constexpr uint64_t kActivationBytes = 2;

/// The node a replica runs on, as fleet reads it from HardwareSpec::node
/// (one GPU and no network when the spec has none).
NodeSpec NodeOf(const HardwareSpec& hw);

/// A replica: `tp` ranks within a node, `pp` stages (across nodes when
/// tp * pp is more than a node holds).
struct ReplicaShape {
  uint64_t tp = 1;
  uint64_t pp = 1;
};

/// What one replica's timing rests on: the per-rank cost, the device, its
/// node and the request's mean lengths. Decode steps are memoised by batch.
class ReplicaModel {
 public:
  ReplicaModel(const ModelSpec& model, const ModelCost& cost, const HardwareSpec& hw,
               ReplicaShape shape, double prompt, double output);

  /// One all-reduce of `bytes` among the tp ranks: latency + ring transfer.
  double AllReduceSeconds(double bytes) const;
  /// One hop between pipeline stages carrying `bytes`.
  double StageHopSeconds(double bytes) const;
  /// Tensor- and pipeline-parallel communication of one step over `tokens`
  /// tokens: two all-reduces per layer, pp - 1 hops.
  double CommSeconds(double tokens) const;
  /// Time per output token at `batch` requests decoding: the pipeline
  /// holds pp micro-batches, each a step of the whole model at batch / pp
  /// at the mean context (prompt + output / 2), plus communication.
  double DecodeSeconds(uint64_t batch);
  /// One prompt's prefill alone: compute and bandwidth floor, communication.
  double PrefillSeconds() const { return prefill_s_; }
  /// Weight-read floor: a step at batch 1 (no queue, no interference).
  double FloorSeconds() { return DecodeSeconds(1); }

  const ReplicaShape& Shape() const { return shape_; }
  const NodeSpec& Node() const { return node_; }
  double Prompt() const { return prompt_; }
  double Output() const { return output_; }

 private:
  const ModelCost& cost_;
  const HardwareSpec& hw_;
  NodeSpec node_;
  ReplicaShape shape_;
  double prompt_, output_;
  uint64_t hidden_, layers_;
  double prefill_s_ = 0;
  std::map<uint64_t, double> decode_;  // batch -> seconds
};

/// A replica serving `rate` requests/s, at steady state.
struct ReplicaLoad {
  double rate = 0;           // requests/s
  double prefill_share = 0;  // fraction of the GPU's time spent in prefill (rho_p)
  double batch = 0;          // requests decoding at once (Little's law)
  double in_flight = 0;      // requests held: decoding and waiting for their first token
  double tpot_s = 0;         // decode step stretched by the prefill chunks between
  double prefill_s = 0;      // one prompt's prefill with the decode steps it shares
  double wait_s = 0;         // queueing before prefill at the percentile
  double ttft_s = 0;         // wait + prefill + first step (+ transfer, disaggregated)
  bool stable = false;       // the queue drains: rho_p < 1 and the batch converges
};

/// Steady state of `r` at `rate` requests/s. `chunked`: prefill shares the
/// GPU with decode (aggregated serving); else the replica only decodes or
/// only prefills (disaggregated: see the flags). `percentile` in (0, 1).
/// `batch_cap` bounds the batch (the memory's requests); beyond it the load
/// is unstable.
ReplicaLoad LoadAggregated(ReplicaModel& r, double rate, double percentile, double batch_cap);

/// The rate at which `load(rate)` (a ReplicaLoad) holds `in_flight`
/// requests, in_flight growing with the rate, within (0, hi]: bisection.
template <typename Load>
double RateHolding(double in_flight, double hi, Load load) {
  double lo = 0;
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    const ReplicaLoad l = load(mid);
    (l.stable && l.in_flight < in_flight ? lo : hi) = mid;
  }
  return lo;
}

/// The replica's saturated rate: its cache full (`batch_cap` requests
/// decoding) with prefill between the steps.
double SaturatedRate(ReplicaModel& r, double batch_cap);

/// LoadAggregated at the rate at which `r` holds `in_flight` requests (a
/// closed loop of that many users); unstable when it cannot.
ReplicaLoad LoadHolding(ReplicaModel& r, double in_flight, double percentile, double batch_cap);

/// A prefill-only replica at `rate`: the wait and prefill time.
ReplicaLoad LoadPrefillOnly(ReplicaModel& r, double rate, double percentile);

/// A decode-only replica at `rate`: batch and TPOT (no prefill chunks).
ReplicaLoad LoadDecodeOnly(ReplicaModel& r, double rate, double batch_cap);

/// The p-quantile of an M/M/1 queue's wait with service time `s` at
/// utilisation `rho` < 1: P(W > t) = rho e^{-(1 - rho) t / s}.
double QueueWaitSeconds(double s, double rho, double p);

}  // namespace kvplan
