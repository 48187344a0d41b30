// requirements.serving: a deployment's TTFT (at a percentile) and TPOT
// under a request rate or concurrent users, from the replica model kvplan
// fleet plans with (plan/fleet_model.h, docs/fleet.md): the load split over
// the deployment's replicas (dp), each holding what its cache holds.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "plan/check_internal.h"
#include "plan/fleet_model.h"
#include "plan/weights.h"
#include "spec/cache_dtype.h"

namespace kvplan {

void ServingItems(const ModelSpec& m, const HardwareSpec& gpu, const DeployConfig& d,
                  const CapacityResult& cap, bool startup_ok, CheckReport& r) {
  const ServingRequirement& s = *d.requirements.serving;
  const std::string load =
      s.users > 0 ? fmt::format("{} users", s.users) : fmt::format("{:g} requests/s", s.rate);
  const std::string pct = fmt::format("p{:g}", s.percentile * 100);
  auto required = [&](double ms, bool ttft) {
    return fmt::format("<= {:g} ms{} at {}, {} + {} tokens", ms, ttft ? " " + pct : "", load,
                       s.prompt, s.output);
  };
  const bool too_long = s.prompt + s.output > cap.max_model_len;
  if (!startup_ok || cap.kv_cache_dtype.empty() || too_long) {
    const std::string why = too_long
                                ? fmt::format("a {}-token request is longer than max_model_len {}",
                                              s.prompt + s.output, cap.max_model_len)
                                : kNotStarted;
    if (s.max_ttft_ms) {
      r.items.push_back(SkippedItem("serving_ttft_ms", required(*s.max_ttft_ms, true),
                                    *s.max_ttft_ms, "ms", "<=", why, s.ttft_pos));
    }
    if (s.max_tpot_ms) {
      r.items.push_back(SkippedItem("serving_tpot_ms", required(*s.max_tpot_ms, false),
                                    *s.max_tpot_ms, "ms", "<=", why, s.tpot_pos));
    }
    return;
  }
  const ModelCost cost = ComputeModelCost(m, FindCacheDtype(cap.kv_cache_dtype),
                                          ResolvedWeightFormat(m, cap.config), cap.config.tp);
  ReplicaModel rm(m, cost, gpu, ReplicaShape{cap.config.tp, cap.config.pp},
                  static_cast<double>(s.prompt), static_cast<double>(s.output));
  // A replica holds what its cache holds of these requests, and no more
  // than the engine's max_num_seqs.
  const double held = std::min<double>(
      static_cast<double>(cap.max_tokens) / static_cast<double>(s.prompt + s.output),
      cap.config.max_num_seqs > 0 ? static_cast<double>(cap.config.max_num_seqs) : 1e9);
  const double replicas = static_cast<double>(std::max<uint64_t>(cap.replicas, 1));
  const ReplicaLoad l =
      s.users > 0 ? LoadHolding(rm, static_cast<double>(s.users) / replicas, s.percentile, held)
                  : LoadAggregated(rm, s.rate / replicas, s.percentile, held);
  const std::string how =
      l.stable ? fmt::format(
                     "{:.3g} requests/s a replica (of {:g}), {:.1f} decoding at once of the {:.0f} "
                     "it holds; prefill {:.0f} ms, {:.0f}% of the GPU's time, queue wait {:.0f} ms "
                     "at {} (docs/fleet.md)",
                     l.rate, replicas, l.batch, held, l.prefill_s * 1e3, l.prefill_share * 100,
                     l.wait_s * 1e3, pct)
               : fmt::format(
                     "the load does not settle: a replica would need more than the {:.0f} "
                     "requests its cache holds, or more prefill time than it has (saturated at "
                     "{:.3g} requests/s a replica)",
                     held, SaturatedRate(rm, held));
  auto item = [&](const char* name, double ms, double want, bool ttft, const SourcePos& pos) {
    const bool pass = l.stable && ms <= want;
    r.items.push_back(
        WithNumbers(Item(name, pass, l.stable ? fmt::format("{:.1f} ms", ms) : "unbounded",
                         required(want, ttft), how, pos),
                    l.stable ? std::optional<double>(ms) : std::nullopt, want, "ms", "<="));
  };
  if (s.max_ttft_ms) item("serving_ttft_ms", l.ttft_s * 1e3, *s.max_ttft_ms, true, s.ttft_pos);
  if (s.max_tpot_ms) item("serving_tpot_ms", l.tpot_s * 1e3, *s.max_tpot_ms, false, s.tpot_pos);
}

}  // namespace kvplan
