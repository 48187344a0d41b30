#include "plan/capacity.h"

#include <algorithm>
#include <cmath>

#include "plan/engines_log.h"
#include "plan/parallel.h"
#include "util/checked.h"
#include "util/units.h"

namespace kvplan {
namespace {

/// The part of `model` that one pipeline stage holds: the same groups with
/// their layer counts restricted to [first, first + n).
ModelSpec StageModel(const ModelSpec& m, uint64_t first, uint64_t n) {
  ModelSpec s = m;
  std::vector<size_t> group_of = m.LayerToGroup();
  for (LayerGroup& g : s.groups) g.layers = 0;
  for (uint64_t i = first; i < first + n && i < m.layers; ++i) s.groups[group_of[i]].layers++;
  s.layers = n;
  return s;
}

/// Tokens of an n-token request that a group holds, rounded the way the
/// engine allocates them (blocks of `bs`; llama.cpp: cells).
uint64_t HeldTokens(const GroupCost& g, uint64_t n, const EngineConfig& c, uint64_t cells_swa) {
  const uint64_t bs = c.block_size;
  const uint64_t full = RoundUp(n, bs);
  if (g.per_token_bytes == 0) return 0;
  if (g.kind != LayerKind::kSliding && g.kind != LayerKind::kChunked) return full;
  const uint64_t w = g.cap_tokens;
  switch (c.engine) {
    case Engine::kVllm:
      // kv_cache_interface.py: SlidingWindowSpec holds min(window - 1 +
      // max_num_batched_tokens, max_model_len) tokens in whole blocks plus
      // one; ChunkedLocalAttentionSpec min(chunk + batched, max_model_len).
      if (g.kind == LayerKind::kSliding) {
        return CheckedMul(CeilDiv(std::min(w - 1 + c.max_num_batched_tokens, n), bs) + 1, bs);
      }
      return RoundUp(std::min(w + c.max_num_batched_tokens, n), bs);
    case Engine::kLlamaCpp:
      return cells_swa;
    case Engine::kSglang:
    case Engine::kTrtllm:
      return std::min(full, RoundUp(w, bs));
  }
  return full;
}

uint64_t RequestBytes(const KvCost& kv, uint64_t n, const EngineConfig& c, uint64_t cells_swa) {
  uint64_t total = kv.fixed_bytes;
  for (const GroupCost& g : kv.groups) {
    total = CheckedAdd(total, CheckedMul(g.per_token_bytes, HeldTokens(g, n, c, cells_swa)),
                       "bytes per request");
  }
  return total;
}

uint64_t LlamaCppSwaCells(const ModelSpec& m, const EngineConfig& c, uint64_t cells) {
  // llama-kv-cache-iswa.cpp: min(n_ctx, PAD(n_swa * n_seq_max + n_ubatch, n_pad)).
  uint64_t window = 0;
  for (const LayerGroup& g : m.groups) {
    if (g.kind == LayerKind::kSliding || g.kind == LayerKind::kChunked) window = std::max(window, g.window);
  }
  if (window == 0 || c.swa_full) return cells;
  return std::min(cells, RoundUp(window * c.n_parallel + c.n_ubatch, c.block_size));
}

void AddLint(CapacityResult& r, Severity s, std::string code, std::string message) {
  r.lints.push_back({s, std::move(code), std::move(message)});
}

}  // namespace

bool CapacityResult::HasError() const {
  return std::any_of(lints.begin(), lints.end(),
                     [](const Lint& l) { return l.severity == Severity::kError; });
}

CapacityResult ComputeCapacity(const ModelSpec& m, const HardwareSpec& gpu, const EngineConfig& config) {
  CapacityResult r;
  EngineConfig c = ResolveEngineConfig(m, gpu, config);
  r.config = c;
  r.engine_name = std::string(EngineName(c.engine));
  r.lints = LintConfig(m, gpu, c);
  r.gpus_per_replica = c.tp * c.pp;
  r.replicas = c.dp;
  r.gpus = r.gpus_per_replica * c.dp;
  r.gpus_available = c.nodes * c.gpus_per_node;
  r.total_memory_bytes = gpu.TotalMemoryBytes();
  r.cluster_memory_bytes = CheckedMul(r.total_memory_bytes, r.gpus, "cluster memory");
  r.block_size = c.block_size;
  r.max_model_len = c.max_model_len;
  r.model_max_context = m.max_context;
  if (r.HasError()) return r;
  r.weight_dtype = ResolvedWeightDtype(m, c);  // known valid: LintConfig resolved it

  const CacheDtype& dtype = FindCacheDtype(ResolvedCacheDtype(c, r.weight_dtype));
  r.kv_cache_dtype = dtype.name;
  const WeightFormat format = FindWeightFormat(r.weight_dtype, c.quant_group_size);
  const ModelTensors tensors = BuildModelTensors(m);
  r.reserve = ModelReserve(m, gpu, c);

  // The budget before weights: a fraction of total memory (vLLM, SGLang), or
  // all of it (TRT-LLM applies its fraction after loading; llama.cpp none).
  const double total = static_cast<double>(r.total_memory_bytes);
  switch (c.engine) {
    case Engine::kVllm:
    case Engine::kSglang:
      r.usable_bytes = static_cast<uint64_t>(total * c.memory_fraction);
      break;
    case Engine::kTrtllm:
    case Engine::kLlamaCpp:
      r.usable_bytes = r.total_memory_bytes;
      break;
  }

  const std::vector<uint64_t> stage_layers = PipelineStageLayers(m.layers, c.pp);
  uint64_t first = 0;
  uint64_t min_blocks = UINT64_MAX;
  std::vector<uint64_t> trt_free;  // TRT-LLM: memory free after loading, per stage
  for (uint64_t s = 0; s < c.pp; ++s) {
    StageCapacity st;
    st.stage = s;
    st.first_layer = first;
    st.layers = stage_layers[s];
    first += st.layers;
    const bool last = s + 1 == c.pp;
    st.weights_bytes = StageWeightBytes(tensors, format, c.tp, st.first_layer, st.layers, s == 0, last);
    ModelSpec sm = StageModel(m, st.first_layer, st.layers);
    st.kv = ComputeKvCost(sm, dtype, c.tp);
    st.bytes_per_token = st.kv.per_token_bytes;
    st.block_bytes = CheckedMul(st.bytes_per_token, c.block_size, "block bytes");
    // Only the last stage samples: earlier stages reserve the forward pass alone.
    uint64_t reserve = r.reserve.total_bytes;
    if (!last && !r.reserve.overridden && (c.engine == Engine::kVllm || c.engine == Engine::kTrtllm)) {
      reserve = c.engine == Engine::kVllm
                    ? r.reserve.activation_bytes + r.reserve.non_torch_bytes + r.reserve.rope_cache_bytes
                    : reserve - r.reserve.logits_bytes;
    }
    int64_t headroom = 0;
    uint64_t budget = 0;
    if (c.engine == Engine::kTrtllm) {
      const int64_t free_after = static_cast<int64_t>(r.total_memory_bytes) -
                                 static_cast<int64_t>(st.weights_bytes) - static_cast<int64_t>(reserve);
      headroom = free_after > 0 ? static_cast<int64_t>(static_cast<double>(free_after) * c.memory_fraction)
                                : free_after;
      trt_free.push_back(free_after > 0 ? static_cast<uint64_t>(free_after) : 0);
    } else {
      headroom = static_cast<int64_t>(r.usable_bytes) - static_cast<int64_t>(st.weights_bytes) -
                 static_cast<int64_t>(reserve);
    }
    budget = headroom > 0 ? static_cast<uint64_t>(headroom) : 0;
    if (c.engine == Engine::kTrtllm && c.max_gpu_total_bytes != 0) budget = std::min(budget, c.max_gpu_total_bytes);
    if (c.kv_cache_memory_bytes != 0) budget = c.kv_cache_memory_bytes;
    if (c.max_total_tokens != 0) budget = CheckedMul(c.max_total_tokens, st.bytes_per_token, "KV budget");
    st.headroom_bytes = headroom;
    st.kv_budget_bytes = budget;
    st.num_blocks = st.block_bytes != 0 ? budget / st.block_bytes : 0;
    if (st.num_blocks < min_blocks || (st.num_blocks == min_blocks && st.weights_bytes > r.weights_bytes)) {
      min_blocks = st.num_blocks;
      r.tightest_stage = s;
      r.weights_bytes = st.weights_bytes;
    }
    r.stages.push_back(std::move(st));
  }
  r.explicit_budget = c.kv_cache_memory_bytes != 0 || c.max_total_tokens != 0;
  const StageCapacity& t = r.stages[r.tightest_stage];
  if (c.engine == Engine::kTrtllm) r.usable_bytes = trt_free[r.tightest_stage];
  if (r.explicit_budget) {
    // The engine takes the given budget as is (SGLang: at most what memory
    // allows); say so when the estimate has less room.
    const uint64_t room = t.headroom_bytes > 0 ? static_cast<uint64_t>(t.headroom_bytes) : 0;
    if (t.kv_budget_bytes > room) {
      AddLint(r, Severity::kWarning, "budget-over-memory",
              c.engine == Engine::kSglang && c.max_total_tokens != 0
                  ? fmt::format("--max-total-tokens {} is more than the {} tokens memory allows; SGLang "
                                "would keep the smaller", c.max_total_tokens,
                                t.bytes_per_token ? room / t.bytes_per_token : 0)
                  : fmt::format("the given KV budget {} is more than the {} left after weights and the "
                                "modelled reserve", FormatBoth(t.kv_budget_bytes), FormatBoth(room)));
    }
  }
  r.kv_budget_bytes = t.kv_budget_bytes;
  r.bytes_per_token = t.bytes_per_token;
  r.block_bytes = t.block_bytes;
  r.num_blocks = min_blocks;

  if (!r.explicit_budget && t.headroom_bytes <= 0) {
    const bool weights_alone =
        t.weights_bytes > (c.engine == Engine::kTrtllm ? r.total_memory_bytes : r.usable_bytes);
    AddLint(r, Severity::kError, weights_alone ? "weights-fit" : "no-kv-memory",
            weights_alone
                ? fmt::format("{} does not fit: its weights take {} per GPU but {} is usable; "
                              "use more GPUs (-tp/-pp) or quantized weights (--weight-dtype)",
                              m.name, FormatBoth(t.weights_bytes),
                              c.engine == Engine::kVllm || c.engine == Engine::kSglang
                                  ? fmt::format("{} x {} = {}", FormatBoth(r.total_memory_bytes),
                                                c.memory_fraction, FormatBoth(r.usable_bytes))
                                  : FormatBoth(r.total_memory_bytes))
                : fmt::format("no memory is left for the KV cache: weights {} + reserve {} exceed the "
                              "usable {} per GPU", FormatBoth(t.weights_bytes),
                              FormatBoth(r.reserve.total_bytes), FormatBoth(r.usable_bytes)));
    return r;
  }

  uint64_t cells_swa = 0;
  if (c.engine == Engine::kLlamaCpp) {
    // llama.cpp allocates n_ctx cells (padded) whatever the budget.
    r.cells = RoundUp(c.n_ctx, c.block_size);
    cells_swa = LlamaCppSwaCells(m, c, r.cells);
    uint64_t k = 0, v = 0;
    for (size_t i = 0; i < t.kv.groups.size(); ++i) {
      const GroupCost& g = t.kv.groups[i];
      if (g.per_token_bytes == 0) continue;
      const uint64_t cells = (g.kind == LayerKind::kSliding || g.kind == LayerKind::kChunked) ? cells_swa : r.cells;
      const uint64_t kb = g.kind == LayerKind::kMla ? g.per_token_bytes
                                                    : CheckedMul(g.kv_heads * dtype.VectorBytes(g.head_dim), g.layers);
      k = CheckedAdd(k, CheckedMul(kb, cells));
      v = CheckedAdd(v, CheckedMul(g.per_token_bytes - kb, cells));
    }
    r.k_bytes = k;
    r.v_bytes = v;
    r.kv_used_bytes = CheckedAdd(CheckedAdd(k, v), CheckedMul(t.kv.fixed_bytes, c.n_parallel));
    r.max_tokens = r.cells;
    r.request_bytes = RequestBytes(t.kv, c.max_model_len, c, cells_swa);
    r.blocks_per_request = r.block_bytes ? CeilDiv(r.request_bytes, r.block_bytes) : 0;
    r.fits = r.kv_used_bytes <= r.kv_budget_bytes;
    r.max_requests = r.fits ? c.n_parallel : 0;
    r.max_concurrency = static_cast<double>(r.max_requests);
    // The largest per-sequence context whose n_ctx * n_parallel cells fit.
    const uint64_t per_cell = t.bytes_per_token;
    uint64_t cells_fit = per_cell ? r.kv_budget_bytes / per_cell / c.block_size * c.block_size : 0;
    r.largest_max_model_len = std::min<uint64_t>(cells_fit / c.n_parallel, m.max_context);
    if (!r.fits) {
      AddLint(r, Severity::kWarning, "kv-fits",
              fmt::format("n_ctx {} needs {} of KV cache but only {} is left after weights and "
                          "the compute buffer; -c {} fits", c.n_ctx, FormatBoth(r.kv_used_bytes),
                          FormatBoth(r.kv_budget_bytes), r.largest_max_model_len * c.n_parallel));
    }
  } else {
    r.max_tokens = CheckedMul(r.num_blocks, c.block_size, "tokens in cache");
    r.kv_used_bytes = CheckedMul(r.num_blocks, r.block_bytes, "KV bytes");
    r.request_bytes = RequestBytes(t.kv, c.max_model_len, c, 0);
    r.blocks_per_request = r.block_bytes ? CeilDiv(r.request_bytes, r.block_bytes) : 0;
    r.max_concurrency = r.blocks_per_request
                            ? static_cast<double>(r.num_blocks) / static_cast<double>(r.blocks_per_request)
                            : 0;
    r.max_requests = r.blocks_per_request ? r.num_blocks / r.blocks_per_request : 0;
    r.fits = r.max_requests >= 1;
    // SGLang's K and V pools (+ one padding page).
    for (const GroupCost& g : t.kv.groups) {
      if (g.per_token_bytes == 0) continue;
      const uint64_t kb = g.kind == LayerKind::kMla ? g.per_token_bytes
                                                    : CheckedMul(g.kv_heads * dtype.VectorBytes(g.head_dim), g.layers);
      r.k_bytes = CheckedAdd(r.k_bytes, CheckedMul(kb, r.max_tokens + c.block_size));
      r.v_bytes = CheckedAdd(r.v_bytes, CheckedMul(g.per_token_bytes - kb, r.max_tokens + c.block_size));
    }
    // vLLM's estimate: the longest request whose blocks fit in the cache.
    uint64_t lo = 0, hi = m.max_context;
    while (lo < hi) {
      uint64_t mid = hi - (hi - lo) / 2;
      if (r.BlocksForRequest(mid) <= r.num_blocks) lo = mid; else hi = mid - 1;
    }
    r.largest_max_model_len = lo;
    if (!r.fits) {
      AddLint(r, Severity::kWarning, "max-model-len-fits",
              fmt::format("one request of max_model_len {} needs {} of KV cache but the cache has "
                          "{}; the largest max_model_len that fits is {}", c.max_model_len,
                          FormatGiB(r.request_bytes), FormatGiB(r.kv_budget_bytes),
                          r.largest_max_model_len));
    }
  }
  r.cluster_max_tokens = CheckedMul(r.max_tokens, r.replicas, "cluster tokens");
  r.cluster_max_requests = CheckedMul(r.max_requests, r.replicas, "cluster requests");
  if (c.engine == Engine::kVllm && !c.enforce_eager && !r.explicit_budget &&
      r.total_memory_bytes - r.usable_bytes < r.reserve.cuda_graph_bytes) {
    AddLint(r, Severity::kWarning, "graph-headroom",
            fmt::format("CUDA graphs (about {}) are captured after the cache is sized and must fit "
                        "in the {} left outside --gpu-memory-utilization {}", FormatGiB(r.reserve.cuda_graph_bytes),
                        FormatGiB(r.total_memory_bytes - r.usable_bytes), c.memory_fraction));
  }
  r.engine_log = EngineLogLines(m, r, dtype);
  return r;
}

uint64_t CapacityResult::BlocksForRequest(uint64_t tokens) const {
  if (stages.empty() || block_bytes == 0) return 0;
  const KvCost& kv = stages[tightest_stage].kv;
  EngineConfig c = config;
  if (c.engine == Engine::kLlamaCpp) {
    // Sliding layers hold their padded SWA cells; everything else `tokens`.
    uint64_t swa = 0;
    for (const GroupCost& g : kv.groups) {
      if (g.kind == LayerKind::kSliding || g.kind == LayerKind::kChunked) {
        swa = std::min(RoundUp(tokens, c.block_size),
                       RoundUp(g.cap_tokens * c.n_parallel + c.n_ubatch, c.block_size));
      }
    }
    return CeilDiv(RequestBytes(kv, tokens, c, swa), block_bytes);
  }
  return CeilDiv(RequestBytes(kv, tokens, c, 0), block_bytes);
}

uint64_t MaxModelLenAtConcurrency(const CapacityResult& r, uint64_t concurrency) {
  if (concurrency == 0 || r.num_blocks == 0) return 0;
  uint64_t lo = 0, hi = r.model_max_context;
  while (lo < hi) {
    uint64_t mid = hi - (hi - lo) / 2;
    uint64_t need = 0;
    try {
      need = CheckedMul(r.BlocksForRequest(mid), concurrency);
    } catch (const Error&) {
      need = UINT64_MAX;  // overflowed: certainly more than the cache
    }
    if (need <= r.num_blocks) lo = mid; else hi = mid - 1;
  }
  return lo;
}

}  // namespace kvplan
