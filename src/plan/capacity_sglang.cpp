// SGLang's own sizing on top of the paged flow (capacity.cpp): a hybrid
// model's states live in a pool of their own beside the token pool
// (MambaPool, sized by handle_max_mamba_cache in
// model_runner_kv_cache_mixin.py), and the running cap comes from the pools
// it sized (init_memory).
#include <fmt/format.h>

#include <algorithm>

#include "plan/capacity_internal.h"
#include "util/units.h"

namespace kvplan {
namespace {

// SGLang's --mamba-full-memory-ratio default: state memory / token memory.
constexpr double kSglangStateRatio = 0.9;

// calculate_mamba_ratio: the state slots SGLang plans a running request
// (MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO), one with the radix cache off.
constexpr uint64_t kSlotsPerRunningRequest = 3;

}  // namespace

bool SeparateStatePool(const KvCost& kv, const EngineConfig& c) {
  return c.engine == Engine::kSglang && kv.fixed_bytes != 0 && kv.per_token_bytes != 0;
}

uint64_t SglangStateSlots(uint64_t budget, uint64_t per_request, const EngineConfig& c,
                          uint64_t asked_seqs) {
  const uint64_t groups = std::max<uint64_t>(1, c.attention_dp);
  if (c.max_state_slots != 0) return c.max_state_slots / groups;
  if (c.disable_radix_cache && asked_seqs != 0) return asked_seqs / groups;
  const double ratio = c.state_memory_ratio > 0 ? c.state_memory_ratio : kSglangStateRatio;
  return static_cast<uint64_t>(static_cast<double>(budget) * ratio / (1 + ratio) /
                               static_cast<double>(per_request));
}

void SetSglangRunningCap(CapacityResult& r, const ModelSpec& m, const HardwareSpec& gpu,
                         uint64_t asked, const EngineConfig& c) {
  const uint64_t half = std::max<uint64_t>(1, r.max_tokens / 2);
  uint64_t running = asked;
  if (running == 0) {
    const double pool = static_cast<double>(r.max_tokens) /
                        static_cast<double>(std::max<uint64_t>(1, c.max_model_len)) * 512.0;
    running = static_cast<uint64_t>(std::clamp(pool, 2048.0, 4096.0));
  }
  if (r.state_pool) {
    r.state_running_ratio = c.disable_radix_cache ? 1 : kSlotsPerRunningRequest;
    running = std::min(running, r.state_slots / r.state_running_ratio);
  }
  r.config.max_num_seqs = std::min(running, half);
  if (r.state_pool && r.config.max_num_seqs == 0) {
    // SGLang refuses it: "Not enough GPU memory" for a pool of 0, and a
    // running cap of 0.
    AddLint(r, Severity::kError, "state-slots",
            fmt::format("SGLang's state pool holds {} (it plans {} a running request), so no "
                        "request can run: {}",
                        Plural(r.state_slots, "slot"), r.state_running_ratio,
                        c.disable_radix_cache && c.max_state_slots == 0
                            ? "raise --max-running-requests (it sizes the pool with the radix "
                              "cache off)"
                            : "raise --mamba-full-memory-ratio or --max-mamba-cache-size, or "
                              "give the cache more memory"));
  }
  // Its logits (shown, outside the fraction) are a decode step's of the
  // running batch, which graph capture does not bound.
  const Reserve running_reserve = ModelReserve(m, gpu, r.config);
  r.reserve.logits_rows = running_reserve.logits_rows;
  r.reserve.logits_bytes = running_reserve.logits_bytes;
}

}  // namespace kvplan
