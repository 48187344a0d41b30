// TensorRT-LLM's variable sliding-window attention (VSWA): when the KV pool
// cannot hold one sequence at every layer's full window, TensorRT-LLM
// shrinks the windows before it sizes the pools
// (tensorrt_llm/_torch/pyexecutor/resource_manager.py,
// adjust_window_sizes_for_vswa; its cases are tests/data/engine-cases/
// trtllm.yaml). The common flow (capacity.cpp) runs it for TensorRT-LLM.
#include <algorithm>
#include <map>

#include "plan/capacity_internal.h"
#include "util/checked.h"
#include "util/units.h"

namespace kvplan {
namespace {

__extension__ typedef unsigned __int128 Uint128;  // window x bytes can exceed 64 bits

}  // namespace

std::vector<TrtllmWindow> TrtllmWindows(const KvCost& kv, uint64_t max_seq_len) {
  std::map<uint64_t, TrtllmWindow> by_window;
  for (const GroupCost& g : kv.groups) {
    if (g.per_token_bytes == 0) continue;  // state and shared layers keep no tokens
    // A window is at most max_seq_len (the manager clamps it on construction);
    // full attention's window is max_seq_len.
    const uint64_t w = g.cap_tokens != 0 ? std::min(g.cap_tokens, max_seq_len) : max_seq_len;
    TrtllmWindow& t = by_window[w];
    t.window = w;
    t.layers += g.layers;
    t.token_bytes = CheckedAdd(t.token_bytes, g.per_token_bytes, "bytes per token");
  }
  std::vector<TrtllmWindow> out;
  for (const auto& [w, t] : by_window) out.push_back(t);
  return out;
}

std::vector<TrtllmWindow> TrtllmClampWindows(const std::vector<TrtllmWindow>& windows,
                                             uint64_t pool_bytes, uint64_t max_tokens) {
  // One sequence at full windows: each window's tokens in each of its layers.
  Uint128 required = 0;
  uint64_t cost = 0;  // bytes of one token in every layer whose window is still ahead
  for (const TrtllmWindow& t : windows) {
    required += static_cast<Uint128>(t.window) * t.token_bytes;
    cost = CheckedAdd(cost, t.token_bytes, "bytes per token");
  }
  if (required < pool_bytes) return windows;
  // Ascending windows: the tokens between the previous window and this one
  // are charged to every layer that still attends that far; once the pool
  // runs out (or max_tokens is reached) every larger window gets what was
  // reached.
  std::map<uint64_t, TrtllmWindow> out;
  uint64_t remaining = pool_bytes, reached = 0, prev = 0;
  for (const TrtllmWindow& t : windows) {
    if (remaining > 0 && cost > 0) {
      const uint64_t tokens = std::min(remaining / cost, t.window - prev);
      remaining -= tokens * cost;
      reached += tokens;
      if (reached < t.window) remaining = 0;
      if (max_tokens != 0 && reached >= max_tokens) {
        reached = max_tokens;
        remaining = 0;
      }
    }
    TrtllmWindow& o = out[reached];
    o.window = reached;
    o.layers += t.layers;
    o.token_bytes += t.token_bytes;
    cost -= t.token_bytes;
    prev = t.window;
  }
  std::vector<TrtllmWindow> v;
  for (const auto& [w, t] : out) v.push_back(t);
  return v;
}

/// TensorRT-LLM with several attention windows: the windows it keeps, and a
/// warning where it shrinks them to fit one sequence in the pool.
void ClampTrtllmWindows(CapacityResult& r, const StageCapacity& t, const EngineConfig& c) {
  const std::vector<TrtllmWindow> windows = TrtllmWindows(t.kv, c.max_model_len);
  if (windows.size() <= 1) return;
  r.trtllm_windows = TrtllmClampWindows(windows, t.kv_budget_bytes, c.trtllm_max_tokens);
  if (r.trtllm_windows.back().window == windows.back().window) return;
  std::string kept;
  for (const TrtllmWindow& w : r.trtllm_windows) {
    kept += fmt::format("{}{} on {}", kept.empty() ? "" : ", ", WithCommas(w.window),
                        Plural(w.layers, "layer"));
  }
  AddLint(r, Severity::kWarning, "trtllm-window-clamped",
          fmt::format("the KV pool ({}) holds no sequence of {} tokens at every window, so "
                      "TensorRT-LLM shrinks the attention windows to: {}",
                      FormatGiB(t.kv_budget_bytes), WithCommas(windows.back().window), kept));
}

}  // namespace kvplan
