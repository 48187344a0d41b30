// The replica model behind `kvplan fleet` (docs/fleet.md, "The model").
#include "plan/fleet_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvplan {

NodeSpec NodeOf(const HardwareSpec& hw) {
  if (hw.node) return *hw.node;
  NodeSpec n;  // one GPU alone: no link to share
  n.gpus = 1;
  n.link_gbps = hw.interconnect_gbps / 2;
  return n;
}

ReplicaModel::ReplicaModel(const ModelSpec& model, const ModelCost& cost, const HardwareSpec& hw,
                           ReplicaShape shape, double prompt, double output)
    : cost_(cost),
      hw_(hw),
      node_(NodeOf(hw)),
      shape_(shape),
      prompt_(prompt),
      output_(output),
      hidden_(model.hidden_size),
      layers_(model.layers) {
  const auto p = static_cast<uint64_t>(std::max(1.0, std::round(prompt)));
  prefill_s_ = EstimatePrefill(cost_, hw_, p).seconds + CommSeconds(static_cast<double>(p));
}

double ReplicaModel::AllReduceSeconds(double bytes) const {
  const uint64_t tp = shape_.tp;
  if (tp <= 1) return 0;
  const double gbps = node_.link_gbps > 0 ? node_.link_gbps : hw_.interconnect_gbps / 2;
  const double ring = gbps > 0 ? 2.0 * static_cast<double>(tp - 1) / static_cast<double>(tp) *
                                     bytes / (gbps * 1e9 * kLinkEfficiency)
                               : 0;
  return node_.link_latency_us * 1e-6 + ring;
}

double ReplicaModel::StageHopSeconds(double bytes) const {
  // Stages beyond one node talk over the network, else over the link.
  const bool across = shape_.tp * shape_.pp > node_.gpus && node_.network_gbps > 0;
  const double gbps = across ? node_.network_gbps : node_.link_gbps;
  const double us = across ? node_.network_latency_us : node_.link_latency_us;
  return us * 1e-6 + (gbps > 0 ? bytes / (gbps * 1e9 * kLinkEfficiency) : 0);
}

double ReplicaModel::CommSeconds(double tokens) const {
  const double bytes = tokens * static_cast<double>(hidden_) * kActivationBytes;
  double s = 0;
  if (shape_.tp > 1) s += 2.0 * static_cast<double>(layers_) * AllReduceSeconds(bytes);
  if (shape_.pp > 1) s += static_cast<double>(shape_.pp - 1) * StageHopSeconds(bytes);
  return s;
}

double ReplicaModel::DecodeSeconds(uint64_t batch) {
  batch = std::max<uint64_t>(batch, 1);
  if (auto it = decode_.find(batch); it != decode_.end()) return it->second;
  const uint64_t micro = (batch + shape_.pp - 1) / shape_.pp;
  const auto context = static_cast<uint64_t>(std::max(1.0, std::round(prompt_ + output_ / 2)));
  const double s = EstimateDecodeStep(cost_, hw_, context, micro).seconds +
                   CommSeconds(static_cast<double>(micro));
  decode_[batch] = s;
  return s;
}

double QueueWaitSeconds(double s, double rho, double p) {
  if (rho <= 0) return 0;
  if (rho >= 1) return std::numeric_limits<double>::infinity();
  return std::max(0.0, s / (1 - rho) * std::log(rho / (1 - p)));
}

namespace {

// The decode batch Little's law gives at `rate` when each token takes
// DecodeSeconds(batch) / (1 - share): the fixed point, or < 0 when it
// passes `cap` (the load does not settle within memory).
double SettleBatch(ReplicaModel& r, double rate, double share, double cap, double& tpot) {
  double batch = 1;
  // The step grows with the batch a whole request at a time, so the
  // iteration settles within `cap` steps when it settles at all.
  const auto limit = static_cast<int>(std::min(cap, 1e5)) + 200;
  for (int i = 0; i < limit; ++i) {
    tpot = r.DecodeSeconds(static_cast<uint64_t>(std::ceil(batch))) / (1 - share);
    const double next = rate * r.Output() * tpot;
    if (next > cap) return -1;
    if (std::abs(next - batch) < 1e-3) return next;
    batch = next;
  }
  return -1;  // not settled: taken as unstable
}

}  // namespace

ReplicaLoad LoadAggregated(ReplicaModel& r, double rate, double percentile, double batch_cap) {
  ReplicaLoad l;
  l.rate = rate;
  l.prefill_share = rate * r.PrefillSeconds();
  if (l.prefill_share >= 1) return l;
  l.batch = SettleBatch(r, rate, l.prefill_share, batch_cap, l.tpot_s);
  if (l.batch < 0) return l;
  // A prompt is cut into chunks; each chunk's step also runs the decode batch.
  const double chunks = std::ceil(r.Prompt() / static_cast<double>(kPrefillChunkTokens));
  l.prefill_s = r.PrefillSeconds() +
                chunks * r.DecodeSeconds(static_cast<uint64_t>(std::ceil(std::max(l.batch, 1.0))));
  const double rho = rate * l.prefill_s;
  if (rho >= 1) return l;
  l.wait_s = QueueWaitSeconds(l.prefill_s, rho, percentile);
  l.ttft_s = l.wait_s + l.prefill_s;
  const double mean_ttft = l.prefill_s / (1 - rho);
  l.in_flight = rate * (mean_ttft + r.Output() * l.tpot_s);
  l.stable = true;
  return l;
}

double SaturatedRate(ReplicaModel& r, double batch_cap) {
  const auto m = static_cast<uint64_t>(std::max(1.0, std::floor(batch_cap)));
  const double md = static_cast<double>(m);
  return md / (r.Output() * r.DecodeSeconds(m) + md * r.PrefillSeconds());
}

ReplicaLoad LoadHolding(ReplicaModel& r, double in_flight, double percentile, double batch_cap) {
  auto load = [&](double rate) { return LoadAggregated(r, rate, percentile, batch_cap); };
  ReplicaLoad l = load(RateHolding(in_flight, SaturatedRate(r, batch_cap), load));
  // Short of the users asked for: the replica cannot hold them.
  if (l.in_flight < in_flight * 0.99) l.stable = false;
  return l;
}

ReplicaLoad LoadPrefillOnly(ReplicaModel& r, double rate, double percentile) {
  ReplicaLoad l;
  l.rate = rate;
  l.prefill_s = r.PrefillSeconds();
  l.prefill_share = rate * l.prefill_s;
  if (l.prefill_share >= 1) return l;
  l.wait_s = QueueWaitSeconds(l.prefill_s, l.prefill_share, percentile);
  l.ttft_s = l.wait_s + l.prefill_s;
  l.in_flight = rate * l.prefill_s / (1 - l.prefill_share);
  l.stable = true;
  return l;
}

ReplicaLoad LoadDecodeOnly(ReplicaModel& r, double rate, double batch_cap) {
  ReplicaLoad l;
  l.rate = rate;
  l.batch = SettleBatch(r, rate, 0, batch_cap, l.tpot_s);
  if (l.batch < 0) return l;
  l.in_flight = l.batch;
  l.stable = true;
  return l;
}

}  // namespace kvplan
