#include "plan/capacity.h"

#include <algorithm>
#include <cmath>
#include <utility>

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
/// engine allocates them (blocks of `bs`).
uint64_t HeldTokens(const GroupCost& g, uint64_t n, const EngineConfig& c) {
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
      // Not reached: llama.cpp's window cells belong to all sequences at
      // once, so it is sized by SeqsAllocBytes, never per request.
      return full;
    case Engine::kSglang:
    case Engine::kTrtllm:
      return std::min(full, RoundUp(w, bs));
  }
  return full;
}

uint64_t PagedRequestBytes(const KvCost& kv, uint64_t n, const EngineConfig& c) {
  uint64_t total = kv.fixed_bytes;
  for (const GroupCost& g : kv.groups) {
    total =
        CheckedAdd(total, CheckedMul(g.per_token_bytes, HeldTokens(g, n, c)), "bytes per request");
  }
  return total;
}

bool Windowed(const GroupCost& g) {
  return g.kind == LayerKind::kSliding || g.kind == LayerKind::kChunked;
}

/// llama.cpp's cells for `seqs` sequences in an n_ctx of `n_ctx`: every layer
/// gets PAD(n_ctx) cells, except that sliding layers (llama-kv-cache-iswa.cpp)
/// get min(that, PAD(n_swa * seqs + n_ubatch, n_pad)) unless --swa-full. The
/// window cells grow with the sequences, not with the context: that is why
/// the fit is not per-token bytes times cells.
struct LlamaCppCells {
  uint64_t full = 0;
  uint64_t swa = 0;
};

LlamaCppCells CellsFor(const KvCost& kv, const EngineConfig& c, uint64_t n_ctx, uint64_t seqs) {
  LlamaCppCells out;
  out.full = RoundUp(n_ctx, c.block_size, "llama.cpp cells");
  out.swa = out.full;
  uint64_t window = 0;  // llama.cpp has one n_swa: the widest window
  for (const GroupCost& g : kv.groups) {
    if (Windowed(g)) window = std::max(window, g.cap_tokens);
  }
  if (window == 0 || c.swa_full) return out;
  const uint64_t want = CheckedAdd(CheckedMul(window, seqs, "llama.cpp SWA cells"), c.n_ubatch,
                                   "llama.cpp SWA cells");
  out.swa = std::min(out.full, RoundUp(want, c.block_size, "llama.cpp SWA cells"));
  return out;
}

/// What llama.cpp allocates for those cells, plus each sequence's fixed
/// (recurrent) state: what must fit in the budget.
uint64_t AllocBytes(const KvCost& kv, const LlamaCppCells& cells, uint64_t seqs) {
  uint64_t total = CheckedMul(kv.fixed_bytes, seqs, "llama.cpp KV bytes");
  for (const GroupCost& g : kv.groups) {
    const uint64_t n = Windowed(g) ? cells.swa : cells.full;
    total = CheckedAdd(total, CheckedMul(g.per_token_bytes, n, "llama.cpp KV bytes"),
                       "llama.cpp KV bytes");
  }
  return total;
}

/// llama.cpp with `seqs` sequences of `tokens` each (-np seqs -c tokens*seqs).
uint64_t SeqsAllocBytes(const KvCost& kv, const EngineConfig& c, uint64_t tokens, uint64_t seqs) {
  const uint64_t n_ctx = CheckedMul(tokens, seqs, "llama.cpp n_ctx");
  return AllocBytes(kv, CellsFor(kv, c, n_ctx, seqs), seqs);
}

/// vLLM's KV-cache layout for a model whose layers are of more than one kind.
struct VllmLayout {
  std::vector<KvCacheGroup> groups;  // empty: one group spans every layer (the simple case)
  uint64_t block_size = 0;           // attention tokens per block, after the Mamba raise
  uint64_t page_bytes = 0;           // one layer's page, unified over every group
  uint64_t state_page_bytes = 0;     // one Mamba layer's state before padding (0: none)
  std::string error;                 // vLLM cannot unify the page sizes: it refuses to start
};

/// Groups the layers the way vLLM does (vllm/v1/core/kv_cache_utils.py,
/// get_kv_cache_groups): layers with equal specs form one type; a model of one
/// type, or only of full-attention layers (MLA included), or only of sliding
/// layers of one window, keeps one group spanning every layer. Otherwise each
/// type is cut into groups of `group_size` layers (the smallest type's count,
/// or the largest's when it is under 1.5x the smallest), the last group of a
/// type padded, and every group gets its own blocks of one page per layer.
/// With Mamba layers the attention block grows until a page holds a Mamba
/// state (HybridAttentionMambaModelConfig), and the state page is padded to it.
VllmLayout VllmKvCacheGroups(const ModelSpec& m, const KvCost& kv, const EngineConfig& c) {
  struct Type {
    LayerKind kind;
    uint64_t window;       // cap_tokens
    uint64_t token_bytes;  // one token in one layer
    uint64_t state_bytes;  // one sequence in one layer (kState)
    std::vector<uint64_t> layers;
  };
  std::vector<Type> types;  // in order of first layer, as vLLM's dict of layer specs
  const std::vector<size_t> group_of = m.LayerToGroup();
  for (uint64_t i = 0; i < m.layers; ++i) {
    const LayerGroup& lg = m.groups[group_of[i]];
    const GroupCost& g = kv.groups[group_of[i]];
    if (lg.kind == LayerKind::kShared) continue;  // reads another layer's cache: no spec
    const uint64_t state = lg.kind == LayerKind::kState ? CeilDiv(lg.state_bytes, kv.tp) : 0;
    auto same = [&](const Type& t) {
      return t.kind == g.kind && t.window == g.cap_tokens &&
             t.token_bytes == g.bytes_per_token_layer && t.state_bytes == state;
    };
    auto it = std::find_if(types.begin(), types.end(), same);
    if (it == types.end()) {
      types.push_back({g.kind, g.cap_tokens, g.bytes_per_token_layer, state, {}});
      it = types.end() - 1;
    }
    it->layers.push_back(i);
  }
  VllmLayout out;
  out.block_size = c.block_size;
  if (types.size() <= 1) return out;
  // UniformTypeKVCacheSpecs: layers that all need the same token slots share one group.
  auto slots = [](const Type& t) {
    const bool full = t.kind == LayerKind::kFull || t.kind == LayerKind::kMla;
    return std::pair<int, uint64_t>(full ? 0 : static_cast<int>(t.kind) + 1, t.window);
  };
  const bool any_state = std::any_of(types.begin(), types.end(),
                                     [](const Type& t) { return t.kind == LayerKind::kState; });
  if (!any_state && std::all_of(types.begin(), types.end(),
                                [&](const Type& t) { return slots(t) == slots(types.front()); })) {
    return out;
  }

  // Attention block raised so that one page holds a Mamba state: a multiple of
  // the kernel alignment (16 for FlashAttention and FlashInfer, or the block
  // size when larger), then the state page padded to the attention page.
  uint64_t attn_token_bytes = 0;
  uint64_t state_page = 0;
  for (const Type& t : types) {
    if (t.kind == LayerKind::kState) {
      state_page = std::max(state_page, t.state_bytes);
    } else if (attn_token_bytes == 0) {
      attn_token_bytes = t.token_bytes;
    }
  }
  uint64_t bs = c.block_size;
  if (state_page != 0 && attn_token_bytes != 0) {
    const uint64_t align = std::max<uint64_t>(16, bs);
    const uint64_t need =
        CheckedMul(align, CeilDiv(state_page, CheckedMul(align, attn_token_bytes, "page bytes")));
    bs = std::max(bs, need);
  }
  out.block_size = bs;
  out.state_page_bytes = attn_token_bytes != 0 ? state_page : 0;

  // unify_kv_cache_spec_page_size: smaller attention pages take a larger block
  // (a whole multiple of theirs); a state page is padded to the attention page.
  auto page = [&](const Type& t) {
    if (t.kind != LayerKind::kState) return CheckedMul(bs, t.token_bytes, "page bytes");
    return attn_token_bytes != 0 ? CheckedMul(bs, attn_token_bytes, "page bytes") : t.state_bytes;
  };
  uint64_t max_page = 0;
  for (const Type& t : types) max_page = std::max(max_page, page(t));
  out.page_bytes = max_page;

  uint64_t fewest = UINT64_MAX, most = 0;
  for (const Type& t : types) {
    fewest = std::min<uint64_t>(fewest, t.layers.size());
    most = std::max<uint64_t>(most, t.layers.size());
  }
  // The "1" of an n:1 layer pattern, unless the largest type has under 1.5x
  // the smallest's layers (less padding that way).
  const uint64_t group_size = 2 * most < 3 * fewest ? most : fewest;
  for (size_t ti = 0; ti < types.size(); ++ti) {
    const Type& t = types[ti];
    const uint64_t p = page(t);
    if (max_page % p != 0 || (t.kind == LayerKind::kState && p != max_page)) {
      out.error = fmt::format(
          "vLLM cannot unify the page sizes of {}'s layers ({} B is not a whole fraction of {} "
          "B) and refuses to start",
          m.name, p, max_page);
      return out;
    }
    KvCacheGroup g;
    g.kind = t.kind;
    g.window = t.window;
    g.type = ti;
    // A state group has one block a request; vLLM sets its block to max_model_len.
    g.block_size = t.kind == LayerKind::kState ? c.max_model_len : bs * (max_page / p);
    // Layer i of the type goes to group i mod n, so that pipeline stages
    // share their layers evenly among the groups.
    const uint64_t n = CeilDiv(t.layers.size(), group_size);
    for (uint64_t j = 0; j < n; ++j) {
      g.layers.clear();
      for (uint64_t k = j; k < t.layers.size(); k += n) g.layers.push_back(t.layers[k]);
      out.groups.push_back(g);
    }
  }
  return out;
}

/// Layers per KV-cache group on the stage [first, first + n): the most that
/// any group has there (vLLM pads the others up to it).
uint64_t StageGroupSize(const std::vector<KvCacheGroup>& groups, uint64_t first, uint64_t n) {
  uint64_t most = 0;
  for (const KvCacheGroup& g : groups) {
    const uint64_t here = static_cast<uint64_t>(std::count_if(
        g.layers.begin(), g.layers.end(), [&](uint64_t i) { return i >= first && i < first + n; }));
    most = std::max(most, here);
  }
  return most;
}

/// Blocks one request of `n` tokens holds in one vLLM KV-cache group
/// (kv_cache_interface.py, max_memory_usage_bytes / page_size_bytes).
uint64_t VllmGroupBlocks(const KvCacheGroup& g, uint64_t n, uint64_t batched) {
  const uint64_t bs = g.block_size;
  switch (g.kind) {
    case LayerKind::kSliding:
      return CeilDiv(std::min(g.window - 1 + batched, n), bs) + 1;
    case LayerKind::kChunked:
      return CeilDiv(std::min(g.window + batched, n), bs);
    case LayerKind::kState:
      return 1;  // mamba_cache_mode "none": one state page per request
    case LayerKind::kFull:
    case LayerKind::kMla:
    case LayerKind::kShared:
      break;
  }
  return CeilDiv(n, bs);
}

/// have - weights - reserve, signed (negative: they do not fit). Computed in
/// 128 bits: casting each term to int64_t turned memory over 2^63 bytes into
/// a negative number and reported "usable 0 B".
int64_t Headroom(uint64_t have, uint64_t weights, uint64_t reserve) {
  __extension__ typedef __int128 Int128;
  const Int128 h = static_cast<Int128>(have) - weights - reserve;
  if (h > INT64_MAX || h < INT64_MIN) {
    Fail("overflow: KV headroom = {} - {} weights - {} reserve does not fit in 64 bits", have,
         weights, reserve);
  }
  return static_cast<int64_t>(h);
}

void AddLint(CapacityResult& r, Severity s, std::string code, std::string message) {
  r.lints.push_back({s, std::move(code), std::move(message)});
}

}  // namespace

std::optional<uint64_t> CapacityResult::RunningCap() const {
  if (config.engine == Engine::kLlamaCpp || config.max_num_seqs == 0) return std::nullopt;
  return config.max_num_seqs;
}

uint64_t CapacityResult::RunningAtOnce(uint64_t requests) const {
  const std::optional<uint64_t> limit = RunningCap();
  return limit ? std::min(requests, *limit) : requests;
}

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
  const WeightFormat format = ResolvedWeightFormat(m, c);  // known valid: LintConfig resolved it
  r.weight_dtype = format.name;
  r.weight_format = WeightFormatLabel(format);

  const CacheDtype& dtype = FindCacheDtype(ResolvedCacheDtype(m, c));
  r.kv_cache_dtype = dtype.name;
  const ModelTensors tensors = BuildModelTensors(m);
  r.reserve = ModelReserve(m, gpu, c);

  // vLLM pages a hybrid model by KV-cache group, each with its own blocks,
  // not with one block spanning every layer.
  if (c.engine == Engine::kVllm) {
    VllmLayout layout = VllmKvCacheGroups(m, ComputeKvCost(m, dtype, c.tp), c);
    if (!layout.error.empty()) {
      AddLint(r, Severity::kError, "vllm-page-size", layout.error);
      return r;
    }
    if (!layout.groups.empty()) {
      r.block_size_raised = layout.block_size != c.block_size;
      r.state_page_bytes = layout.state_page_bytes;
      c.block_size = layout.block_size;
      r.config = c;
      r.block_size = c.block_size;
      r.kv_cache_groups = std::move(layout.groups);
      r.page_bytes = layout.page_bytes;
    }
  }

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
    if (r.kv_cache_groups.empty()) {
      st.block_bytes = CheckedMul(st.bytes_per_token, c.block_size, "block bytes");
    } else {
      // get_kv_cache_config_from_groups: group_size tensors, each shared by one
      // layer of every group, so a block is one page in each of them.
      st.group_size = StageGroupSize(r.kv_cache_groups, st.first_layer, st.layers);
      st.block_bytes = CheckedMul(r.page_bytes, st.group_size, "block bytes");
    }
    // Only the last stage samples: earlier stages reserve the forward pass
    // where vLLM takes the larger phase, and drop the logits TRT-LLM adds.
    uint64_t reserve = r.reserve.total_bytes;
    if (!last && !r.reserve.overridden && (c.engine == Engine::kVllm || c.engine == Engine::kTrtllm)) {
      const Reserve& rs = r.reserve;
      reserve = c.engine == Engine::kVllm
                    ? reserve - std::max(rs.activation_bytes, rs.logits_bytes) + rs.activation_bytes
                    : reserve - rs.logits_bytes;
    }
    int64_t headroom = 0;
    uint64_t budget = 0;
    if (c.engine == Engine::kTrtllm) {
      const int64_t free_after = Headroom(r.total_memory_bytes, st.weights_bytes, reserve);
      headroom = free_after > 0 ? static_cast<int64_t>(static_cast<double>(free_after) * c.memory_fraction)
                                : free_after;
      trt_free.push_back(free_after > 0 ? static_cast<uint64_t>(free_after) : 0);
    } else {
      headroom = Headroom(r.usable_bytes, st.weights_bytes, reserve);
    }
    budget = headroom > 0 ? static_cast<uint64_t>(headroom) : 0;
    if (c.engine == Engine::kTrtllm && c.max_gpu_total_bytes != 0) budget = std::min(budget, c.max_gpu_total_bytes);
    if (c.kv_cache_memory_bytes != 0) budget = c.kv_cache_memory_bytes;
    // SGLang's --max-total-tokens: at most what memory allows
    // (ModelRunner keeps the smaller of the two and warns).
    if (c.max_total_tokens != 0) {
      budget = std::min(budget, CheckedMul(c.max_total_tokens, st.bytes_per_token, "KV budget"));
    }
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
  r.graphs_subtracted = !r.reserve.overridden && !r.explicit_budget &&
                        r.reserve.cuda_graph_bytes != 0 &&
                        (c.engine == Engine::kTrtllm || c.GraphsInBudget());
  const StageCapacity& t = r.stages[r.tightest_stage];
  if (c.engine == Engine::kTrtllm) r.usable_bytes = trt_free[r.tightest_stage];
  if (r.explicit_budget) {
    const uint64_t room = t.headroom_bytes > 0 ? static_cast<uint64_t>(t.headroom_bytes) : 0;
    if (c.max_total_tokens != 0) {
      // SGLang keeps the smaller (above); say so when that was memory.
      const uint64_t asked = CheckedMul(c.max_total_tokens, t.bytes_per_token, "KV budget");
      if (asked > room) {
        AddLint(
            r, Severity::kWarning, "budget-over-memory",
            fmt::format("--max-total-tokens {} is more than the {} tokens memory allows; SGLang "
                        "keeps the smaller",
                        c.max_total_tokens, t.bytes_per_token ? room / t.bytes_per_token : 0));
      }
    } else {
      // vLLM allocates --kv-cache-memory-bytes as given, without profiling
      // and whatever --gpu-memory-utilization says: beyond what the GPU has
      // once the weights are in it, it cannot start; beyond that less the
      // modelled reserve, it most likely cannot.
      // Every pipeline stage allocates the same budget: the stage with the
      // least room decides (not the tightest in blocks, the one with the most
      // layers). Other engines (llama.cpp sizes its cache by -c) keep the
      // warning.
      const auto by = [](auto field) {
        return
            [field](const StageCapacity& a, const StageCapacity& b) { return a.*field < b.*field; };
      };
      const StageCapacity& heaviest =
          *std::max_element(r.stages.begin(), r.stages.end(), by(&StageCapacity::weights_bytes));
      const int64_t physical = Headroom(r.total_memory_bytes, heaviest.weights_bytes, 0);
      const int64_t with_reserve =
          std::min_element(r.stages.begin(), r.stages.end(), by(&StageCapacity::headroom_bytes))
              ->headroom_bytes +
          (c.engine == Engine::kVllm ? static_cast<int64_t>(r.total_memory_bytes - r.usable_bytes)
                                     : 0);
      const bool over_gpu = c.engine == Engine::kVllm &&
                            (physical <= 0 || t.kv_budget_bytes > static_cast<uint64_t>(physical));
      const bool over_reserve =
          with_reserve <= 0 || t.kv_budget_bytes > static_cast<uint64_t>(with_reserve);
      if (over_gpu || over_reserve) {
        const uint64_t left = with_reserve > 0 ? static_cast<uint64_t>(with_reserve) : 0;
        AddLint(r, over_gpu ? Severity::kError : Severity::kWarning, "budget-over-memory",
                over_gpu
                    ? fmt::format("the given KV budget {} does not fit: the GPU has {} left "
                                  "after the {} of weights, so the engine fails to allocate it",
                                  FormatBoth(t.kv_budget_bytes),
                                  FormatBoth(physical > 0 ? static_cast<uint64_t>(physical) : 0),
                                  FormatBoth(heaviest.weights_bytes))
                    : fmt::format("the given KV budget {} is more than the {} left after weights "
                                  "and the modelled reserve",
                                  FormatBoth(t.kv_budget_bytes), FormatBoth(left)));
      }
    }
  }
  r.kv_budget_bytes = t.kv_budget_bytes;
  r.bytes_per_token = t.bytes_per_token;
  r.block_bytes = t.block_bytes;
  r.group_size = t.group_size;
  r.num_blocks = min_blocks;

  // An explicit vLLM budget skips the estimate; SGLang's token count is
  // capped by memory (above), so weights that do not fit still stop it.
  if (c.kv_cache_memory_bytes == 0 && t.headroom_bytes <= 0) {
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

  if (c.engine == Engine::kLlamaCpp) {
    // llama.cpp allocates n_ctx cells (padded) whatever the budget.
    const LlamaCppCells cells = CellsFor(t.kv, c, c.n_ctx, c.n_parallel);
    r.cells = cells.full;
    r.swa_cells = cells.swa;
    uint64_t k = 0, v = 0;
    for (size_t i = 0; i < t.kv.groups.size(); ++i) {
      const GroupCost& g = t.kv.groups[i];
      if (g.per_token_bytes == 0) continue;
      const uint64_t n = Windowed(g) ? cells.swa : cells.full;
      const uint64_t kb = g.kind == LayerKind::kMla ? g.per_token_bytes
                                                    : CheckedMul(g.kv_heads * dtype.VectorBytes(g.head_dim), g.layers);
      k = CheckedAdd(k, CheckedMul(kb, n));
      v = CheckedAdd(v, CheckedMul(g.per_token_bytes - kb, n));
    }
    r.k_bytes = k;
    r.v_bytes = v;
    r.kv_used_bytes = AllocBytes(t.kv, cells, c.n_parallel);
    r.max_tokens = r.cells;
    r.request_bytes = r.RequestBytes(c.max_model_len);
    r.blocks_per_request = r.BlocksForRequest(c.max_model_len);
    r.fits = r.kv_used_bytes <= r.kv_budget_bytes;
    r.max_requests = r.fits ? c.n_parallel : 0;
    r.max_concurrency = static_cast<double>(r.max_requests);
    // The longest per-sequence context whose cells for all n_parallel
    // sequences fit, window cells and state included: the same question
    // --concurrency asks at n_parallel, so the two answers agree.
    r.largest_max_model_len = MaxModelLenAtConcurrency(r, c.n_parallel);
    if (!r.fits) {
      AddLint(r, Severity::kWarning, "kv-fits",
              fmt::format("n_ctx {} needs {} of KV cache but only {} is left after weights and "
                          "the compute buffer; -c {} fits", c.n_ctx, FormatBoth(r.kv_used_bytes),
                          FormatBoth(r.kv_budget_bytes), r.largest_max_model_len * c.n_parallel));
    }
  } else {
    if (r.kv_cache_groups.empty()) {
      r.max_tokens = CheckedMul(r.num_blocks, c.block_size, "tokens in cache");
    } else {
      // _report_kv_cache_config: the blocks are shared by every group, so the
      // log divides them by the groups and counts the smallest block size.
      uint64_t min_block = UINT64_MAX;
      for (const KvCacheGroup& g : r.kv_cache_groups) min_block = std::min(min_block, g.block_size);
      r.max_tokens =
          CheckedMul(r.num_blocks / r.kv_cache_groups.size(), min_block, "tokens in cache");
    }
    r.kv_used_bytes = CheckedMul(r.num_blocks, r.block_bytes, "KV bytes");
    r.request_bytes = PagedRequestBytes(t.kv, c.max_model_len, c);
    r.blocks_per_request = !r.kv_cache_groups.empty() ? r.BlocksForRequest(c.max_model_len)
                           : r.block_bytes            ? CeilDiv(r.request_bytes, r.block_bytes)
                                                      : 0;
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
    // (With VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 past the model's own limit.)
    uint64_t lo = 0, hi = c.allow_long_max_model_len ? std::max(m.max_context, c.max_model_len)
                                                     : m.max_context;
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
  if (c.engine == Engine::kSglang) {
    // SGLang's running cap, from the pool it sized (model_runner /
    // scheduler): --max-running-requests, or by default the request pool,
    // int(tokens / context_len x 512) clamped to 2048-4096; either way at
    // most half the tokens in the cache. (cuda_graph_max_bs only bounds
    // graph capture: larger batches run without graphs.)
    const uint64_t half = std::max<uint64_t>(1, r.max_tokens / 2);
    uint64_t running = config.max_num_seqs;
    if (running == 0) {
      const double pool = static_cast<double>(r.max_tokens) /
                          static_cast<double>(std::max<uint64_t>(1, c.max_model_len)) * 512.0;
      running = static_cast<uint64_t>(std::clamp(pool, 2048.0, 4096.0));
    }
    r.config.max_num_seqs = std::min(running, half);
    // Its logits (shown, outside the fraction) are a decode step's of the
    // running batch, which graph capture does not bound.
    const Reserve running_reserve = ModelReserve(m, gpu, r.config);
    r.reserve.logits_rows = running_reserve.logits_rows;
    r.reserve.logits_bytes = running_reserve.logits_bytes;
  }
  r.cluster_max_tokens = CheckedMul(r.max_tokens, r.replicas, "cluster tokens");
  r.cluster_max_requests = CheckedMul(r.max_requests, r.replicas, "cluster requests");
  if (c.engine == Engine::kVllm && !c.enforce_eager && !c.GraphsInBudget() && !r.explicit_budget &&
      r.total_memory_bytes - r.usable_bytes < r.reserve.cuda_graph_bytes) {
    AddLint(r, Severity::kWarning, "graph-headroom",
            fmt::format("CUDA graphs (about {}) are captured after the cache is sized (vLLM before "
                        "0.21) and must fit in the {} left outside --gpu-memory-utilization {}",
                        FormatGiB(r.reserve.cuda_graph_bytes),
                        FormatGiB(r.total_memory_bytes - r.usable_bytes), c.memory_fraction));
  }
  r.engine_log = EngineLogLines(m, r, dtype);
  return r;
}

std::string EngineLabel(const EngineConfig& c) {
  if (c.engine != Engine::kVllm) return std::string(EngineName(c.engine));
  std::string label = "vllm";
  if (c.vllm_version != kVllmCurrent)
    label = fmt::format("vllm {}", VllmVersionName(c.vllm_version));
  if (c.vllm_graph_profiling) {
    label = fmt::format("{} (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS={})", label,
                        *c.vllm_graph_profiling ? 1 : 0);
  }
  return label;
}

uint64_t CapacityResult::RequestBytes(uint64_t tokens) const {
  if (stages.empty()) return 0;
  const KvCost& kv = stages[tightest_stage].kv;
  if (config.engine != Engine::kLlamaCpp) return PagedRequestBytes(kv, tokens, config);
  // A sequence's share of what -np n_parallel sequences of `tokens` allocate:
  // the window cells are shared, so charging each request all of them would
  // count them n_parallel times.
  const uint64_t seqs = config.n_parallel;
  return CeilDiv(SeqsAllocBytes(kv, config, tokens, seqs), seqs);
}

uint64_t CapacityResult::BlocksForRequest(uint64_t tokens) const {
  if (stages.empty() || block_bytes == 0) return 0;
  if (!kv_cache_groups.empty()) {
    // get_max_concurrency_for_kv_cache_config: a request holds blocks in every
    // group, and a block of any group is the same block_bytes, so they add up.
    uint64_t blocks = 0;
    for (const KvCacheGroup& g : kv_cache_groups) {
      blocks = CheckedAdd(blocks, VllmGroupBlocks(g, tokens, config.max_num_batched_tokens),
                          "blocks per request");
    }
    return blocks;
  }
  return CeilDiv(RequestBytes(tokens), block_bytes);
}

bool CapacityResult::FitsAtConcurrency(uint64_t tokens, uint64_t concurrency) const {
  if (stages.empty()) return false;
  try {
    if (config.engine == Engine::kLlamaCpp) {
      // Run as -np concurrency -c tokens*concurrency: the budget (weights and
      // compute buffer already out) must hold everything that allocates.
      return SeqsAllocBytes(stages[tightest_stage].kv, config, tokens, concurrency) <=
             kv_budget_bytes;
    }
    if (num_blocks == 0) return false;
    return CheckedMul(BlocksForRequest(tokens), concurrency) <= num_blocks;
  } catch (const Error&) {
    return false;  // overflowed: certainly more than the cache
  }
}

uint64_t MaxModelLenAtConcurrency(const CapacityResult& r, uint64_t concurrency) {
  if (concurrency == 0) return 0;
  uint64_t lo = 0, hi = r.model_max_context;
  while (lo < hi) {
    uint64_t mid = hi - (hi - lo) / 2;
    if (r.FitsAtConcurrency(mid, concurrency))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

}  // namespace kvplan
