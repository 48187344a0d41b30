// Capacity's common flow, the same for every engine: resolve the engine's
// defaults, split each pipeline stage's GPU memory into weights, reserve and
// KV budget, pick the tightest stage, and lint what cannot start. The count
// that follows is the engine's: whole blocks for the paged engines
// (capacity_paged.cpp), n_ctx cells for llama.cpp (capacity_llamacpp.cpp);
// vLLM's hybrid-model groups are in capacity_vllm.cpp. The queries on a
// finished CapacityResult live here too.
#include "plan/capacity.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "plan/capacity_internal.h"
#include "plan/engines_log.h"
#include "plan/parallel.h"
#include "util/checked.h"
#include "util/units.h"

namespace kvplan {

void AddLint(CapacityResult& r, Severity s, std::string code, std::string message) {
  r.lints.push_back({s, std::move(code), std::move(message)});
}

int64_t Headroom(uint64_t have, uint64_t weights, uint64_t reserve) {
  __extension__ typedef __int128 Int128;
  const Int128 h = static_cast<Int128>(have) - weights - reserve;
  if (h > INT64_MAX || h < INT64_MIN) {
    Fail("overflow: KV headroom = {} - {} weights - {} reserve does not fit in 64 bits", have,
         weights, reserve);
  }
  return static_cast<int64_t>(h);
}

bool Windowed(const GroupCost& g) {
  return g.kind == LayerKind::kSliding || g.kind == LayerKind::kChunked;
}

uint64_t KeyBytesPerToken(const GroupCost& g, const CacheDtype& dtype) {
  if (g.kind == LayerKind::kMla) return g.per_token_bytes;
  return CheckedMul(g.kv_heads * dtype.VectorBytes(g.head_dim), g.layers);
}

StateDtypes EngineStateDtypes(const EngineConfig& c) {
  switch (c.engine) {
    case Engine::kLlamaCpp:
      // llama_memory_recurrent: R and S tensors in GGML_TYPE_F32, whatever -ctk says.
      return {4, 4, 0};
    case Engine::kSglang:
      // mamba_utils.py: the conv state in bf16 (CONV_DTYPE), the SSM state in
      // --mamba-ssm-dtype, float32 by default.
      return {2, c.state_ssm_bytes != 0 ? c.state_ssm_bytes : 4, 0};
    case Engine::kVllm:
      // MambaStateDtypeCalculator: the conv in --mamba-cache-dtype, the SSM
      // state in --mamba-ssm-cache-dtype; "auto" is the model's (its config's
      // mamba_ssm_dtype first), then the conv's.
      return {c.state_conv_bytes, c.state_ssm_bytes, c.state_conv_bytes};
    case Engine::kTrtllm:
      break;  // the model's
  }
  return {};
}

/// The part of `model` that one pipeline stage holds: the same groups with
/// their layer counts restricted to [first, first + n).
ModelSpec StageModel(const ModelSpec& m, uint64_t first, uint64_t n) {
  ModelSpec s = m;
  std::vector<size_t> group_of = m.LayerToGroup();
  for (LayerGroup& g : s.groups) g.layers = 0;
  for (uint64_t i = first; i < first + n && i < m.layers; ++i) s.groups[group_of[i]].layers++;
  // A state group beside the attention (Falcon-H1) counts its own layers in the stage.
  for (size_t gi = 0; gi < m.groups.size(); ++gi) {
    if (!m.groups[gi].parallel) continue;
    for (uint64_t i : m.GroupLayers(gi)) s.groups[gi].layers += i >= first && i < first + n;
  }
  s.layers = n;
  return s;
}

namespace {

/// The figures that need no sizing: the resolved config, its lints, the
/// parallel layout and the memory the engine sees.
void StartResult(CapacityResult& r, const ModelSpec& m, const HardwareSpec& gpu,
                 const EngineConfig& c) {
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
}

/// vLLM pages a hybrid model by KV-cache group, each with its own blocks,
/// not with one block spanning every layer: records the groups and the
/// (possibly raised) block size in `r` and `c`. False when vLLM cannot unify
/// the page sizes and refuses to start (the error lint is added).
bool ApplyVllmLayout(CapacityResult& r, const ModelSpec& m, const CacheDtype& dtype,
                     EngineConfig& c) {
  VllmLayout layout = VllmKvCacheGroups(m, ComputeKvCost(m, dtype, c.tp, EngineStateDtypes(c)), c);
  if (!layout.error.empty()) {
    AddLint(r, Severity::kError, "vllm-page-size", layout.error);
    return false;
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
  return true;
}

/// The budget before weights: a fraction of total memory (vLLM, SGLang), or
/// all of it (TRT-LLM applies its fraction after loading; llama.cpp none).
uint64_t UsableBytes(uint64_t total_memory_bytes, const EngineConfig& c) {
  const double total = static_cast<double>(total_memory_bytes);
  switch (c.engine) {
    case Engine::kVllm:
    case Engine::kSglang:
      return static_cast<uint64_t>(total * c.memory_fraction);
    case Engine::kTrtllm:
    case Engine::kLlamaCpp:
      return total_memory_bytes;
  }
  return 0;
}

/// What every pipeline stage is sized from.
struct StageInputs {
  const ModelSpec& model;
  const ModelTensors& tensors;
  const WeightFormat& format;
  const CacheDtype& dtype;
  const EngineConfig& config;     // resolved
  uint64_t checkpoint_bytes = 0;  // the checkpoint's exact bytes when they apply (else 0)
  uint64_t arch_bytes = 0;        // the whole model counted from the architecture (tp 1)
  uint64_t asked_seqs = 0;        // max_num_seqs as the deployment gave it (0: none given)
};

/// The reserve one stage keeps back. Only the last stage samples: earlier
/// stages reserve the forward pass where vLLM takes the larger phase, and
/// drop the logits TRT-LLM adds.
uint64_t StageReserve(const Reserve& rs, const EngineConfig& c, bool last) {
  uint64_t reserve = rs.total_bytes;
  if (!last && !rs.overridden && (c.engine == Engine::kVllm || c.engine == Engine::kTrtllm)) {
    reserve = c.engine == Engine::kVllm
                  ? reserve - std::max(rs.activation_bytes, rs.logits_bytes) + rs.activation_bytes
                  : reserve - rs.logits_bytes;
  }
  return reserve;
}

/// One stage's weights, cache cost, KV budget and blocks on one of its GPUs.
/// TRT-LLM: appends the memory free after loading to `trt_free`.
StageCapacity SizeStage(const CapacityResult& r, const StageInputs& in, uint64_t s, uint64_t first,
                        uint64_t layers, std::vector<uint64_t>& trt_free) {
  const EngineConfig& c = in.config;
  StageCapacity st;
  st.stage = s;
  st.first_layer = first;
  st.layers = layers;
  const bool last = s + 1 == c.pp;
  const uint64_t attention_tp = std::max<uint64_t>(1, c.tp / std::max<uint64_t>(1, c.attention_dp));
  const WeightSplit split{c.tp, c.attention_dp > 1 ? attention_tp : 0, c.expert_parallel};
  st.weights_bytes =
      StageWeightBytes(in.tensors, in.format, split, st.first_layer, st.layers,
                       s == 0 && st.first_layer == 0, last && !LlamaCppOutputOnCpu(in.model, c));
  if (in.checkpoint_bytes != 0) {
    st.weights_bytes = ScaleToCheckpoint(st.weights_bytes, in.arch_bytes, in.checkpoint_bytes);
  }
  ModelSpec sm = StageModel(in.model, st.first_layer, st.layers);
  // Attention's ranks hold the heads; the engine keeps state in its own dtypes.
  st.kv = ComputeKvCost(sm, in.dtype, attention_tp, EngineStateDtypes(c));
  if (last && (c.mtp_layers != 0 || c.draft_model)) {
    st.weights_bytes = CheckedAdd(
        st.weights_bytes,
        AddSpeculative(in.model, in.tensors, in.format, in.dtype, c, split, attention_tp, st.kv),
        "weight bytes");
  }
  st.bytes_per_token = st.kv.per_token_bytes;
  if (r.kv_cache_groups.empty()) {
    st.block_bytes = CheckedMul(st.bytes_per_token, c.block_size, "block bytes");
  } else {
    // get_kv_cache_config_from_groups: group_size tensors, each shared by one
    // layer of every group, so a block is one page in each of them.
    st.group_size = StageGroupSize(r.kv_cache_groups, st.first_layer, st.layers);
    st.block_bytes = CheckedMul(r.page_bytes, st.group_size, "block bytes");
  }
  // An attention-free model (state and MLP-only layers) keeps no tokens:
  // its cache is one state slot per request (vLLM's MambaSpec page,
  // SGLang's and TRT-LLM's state pools), so its "block" is one sequence's states.
  const bool attention_free = !in.model.HasAttention();
  if (attention_free && st.bytes_per_token == 0) st.block_bytes = st.kv.fixed_bytes;
  const uint64_t reserve = StageReserve(r.reserve, c, last);
  int64_t headroom = 0;
  uint64_t budget = 0;
  if (c.engine == Engine::kTrtllm) {
    const int64_t free_after = Headroom(r.total_memory_bytes, st.weights_bytes, reserve);
    headroom = free_after > 0
                   ? static_cast<int64_t>(static_cast<double>(free_after) * c.memory_fraction)
                   : free_after;
    trt_free.push_back(free_after > 0 ? static_cast<uint64_t>(free_after) : 0);
  } else {
    headroom = Headroom(r.usable_bytes, st.weights_bytes, reserve);
  }
  budget = headroom > 0 ? static_cast<uint64_t>(headroom) : 0;
  // SGLang carves its state pool out of what memory leaves first
  // (handle_max_mamba_cache); the tokens, and --max-total-tokens, get the rest.
  if (SeparateStatePool(st.kv, c)) {
    st.state_pool = true;
    st.state_slots = SglangStateSlots(budget, st.kv.fixed_bytes, c, in.asked_seqs);
    const uint64_t pool = CheckedMul(st.state_slots, st.kv.fixed_bytes, "state pool bytes");
    budget = pool < budget ? budget - pool : 0;
  }
  // TRT-LLM's max_gpu_total_bytes, when set, is the pool's size, above
  // free_gpu_memory_fraction x free too (KvCacheCreator, test_resource_manager.py).
  if (c.engine == Engine::kTrtllm && c.max_gpu_total_bytes != 0) budget = c.max_gpu_total_bytes;
  if (c.kv_cache_memory_bytes != 0) budget = c.kv_cache_memory_bytes;
  // SGLang's --max-total-tokens: at most what memory allows
  // (ModelRunner keeps the smaller of the two and warns).
  if (c.max_total_tokens != 0) {
    budget = std::min(budget, CheckedMul(c.max_total_tokens, st.bytes_per_token, "KV budget"));
  }
  // TRT-LLM's max_tokens: the smaller of it and memory, for one attention
  // window (with several it caps the windows instead: TrtllmClampWindows).
  if (c.engine == Engine::kTrtllm && c.trtllm_max_tokens != 0 &&
      TrtllmWindows(st.kv, c.max_model_len).size() <= 1) {
    budget = std::min(budget, CheckedMul(c.trtllm_max_tokens, st.bytes_per_token, "KV budget"));
  }
  st.headroom_bytes = headroom;
  st.kv_budget_bytes = budget;
  st.num_blocks = st.block_bytes != 0 ? budget / st.block_bytes : 0;
  // vLLM --num-gpu-blocks-override replaces the count memory gives
  // (kv_cache_utils.py, get_kv_cache_config_from_groups).
  if (c.engine == Engine::kVllm && c.num_gpu_blocks_override != 0)
    st.num_blocks = c.num_gpu_blocks_override;
  return st;
}

/// Sizes every pipeline stage into r.stages and picks the tightest (fewest
/// blocks; on a tie the heaviest weights). Returns its blocks.
uint64_t SizeStages(CapacityResult& r, const StageInputs& in, std::vector<uint64_t>& trt_free) {
  const EngineConfig& c = in.config;
  uint64_t first = 0;
  const std::vector<uint64_t> stage_layers = c.engine == Engine::kLlamaCpp
                                                 ? LlamaCppStageLayers(in.model.layers, c, first)
                                                 : PipelineStageLayers(in.model.layers, c.pp);
  r.host_layers = first;
  uint64_t min_blocks = UINT64_MAX;
  for (uint64_t s = 0; s < c.pp; ++s) {
    StageCapacity st = SizeStage(r, in, s, first, stage_layers[s], trt_free);
    first += st.layers;
    if (st.num_blocks < min_blocks ||
        (st.num_blocks == min_blocks && st.weights_bytes > r.weights_bytes)) {
      min_blocks = st.num_blocks;
      r.tightest_stage = s;
      r.weights_bytes = st.weights_bytes;
    }
    r.stages.push_back(std::move(st));
  }
  return min_blocks;
}

/// An explicit budget (vLLM --kv-cache-memory-bytes, SGLang
/// --max-total-tokens) bypasses the estimate: says when it is more than
/// memory allows.
void LintExplicitBudget(CapacityResult& r, const EngineConfig& c) {
  const StageCapacity& t = r.stages[r.tightest_stage];
  uint64_t room = t.headroom_bytes > 0 ? static_cast<uint64_t>(t.headroom_bytes) : 0;
  // SGLang's state pool comes out of memory before the tokens.
  const uint64_t pool = t.state_slots * t.kv.fixed_bytes;  // checked when the stage was sized
  room = pool < room ? room - pool : 0;
  if (c.max_total_tokens != 0) {
    // SGLang keeps the smaller (above); say so when that was memory.
    const uint64_t asked = CheckedMul(c.max_total_tokens, t.bytes_per_token, "KV budget");
    if (asked > room) {
      AddLint(r, Severity::kWarning, "budget-over-memory",
              fmt::format("--max-total-tokens {} is more than the {} tokens memory allows; SGLang "
                          "keeps the smaller",
                          c.max_total_tokens, t.bytes_per_token ? room / t.bytes_per_token : 0));
    }
    return;
  }
  // vLLM allocates --kv-cache-memory-bytes as given, without profiling
  // and whatever --gpu-memory-utilization says: beyond what the GPU has
  // once the weights are in it, it cannot start; beyond that less the
  // modelled reserve, it most likely cannot.
  // Every pipeline stage allocates the same budget: the stage with the
  // least room decides (not the tightest in blocks, the one with the most
  // layers). Other engines (llama.cpp sizes its cache by -c) keep the
  // warning.
  const auto by = [](auto field) {
    return [field](const StageCapacity& a, const StageCapacity& b) { return a.*field < b.*field; };
  };
  const StageCapacity& heaviest =
      *std::max_element(r.stages.begin(), r.stages.end(), by(&StageCapacity::weights_bytes));
  const int64_t physical = Headroom(r.total_memory_bytes, heaviest.weights_bytes, 0);
  const int64_t with_reserve =
      std::min_element(r.stages.begin(), r.stages.end(), by(&StageCapacity::headroom_bytes))
          ->headroom_bytes +
      (c.engine == Engine::kVllm ? static_cast<int64_t>(r.total_memory_bytes - r.usable_bytes) : 0);
  const bool over_gpu = c.engine == Engine::kVllm &&
                        (physical <= 0 || t.kv_budget_bytes > static_cast<uint64_t>(physical));
  const bool over_reserve =
      with_reserve <= 0 || t.kv_budget_bytes > static_cast<uint64_t>(with_reserve);
  if (over_gpu || over_reserve) {
    const uint64_t left = with_reserve > 0 ? static_cast<uint64_t>(with_reserve) : 0;
    AddLint(r, over_gpu ? Severity::kError : Severity::kWarning, "budget-over-memory",
            over_gpu ? fmt::format("the given KV budget {} does not fit: the GPU has {} left "
                                   "after the {} of weights, so the engine fails to allocate it",
                                   FormatBoth(t.kv_budget_bytes),
                                   FormatBoth(physical > 0 ? static_cast<uint64_t>(physical) : 0),
                                   FormatBoth(heaviest.weights_bytes))
                     : fmt::format("the given KV budget {} is more than the {} left after weights "
                                   "and the modelled reserve",
                                   FormatBoth(t.kv_budget_bytes), FormatBoth(left)));
  }
}

/// Nothing is left for the cache on the tightest stage: the error says
/// whether the weights alone are too big or the reserve tips it over.
void LintNoKvMemory(CapacityResult& r, const ModelSpec& m, const EngineConfig& c) {
  const StageCapacity& t = r.stages[r.tightest_stage];
  const bool weights_alone =
      t.weights_bytes > (c.engine == Engine::kTrtllm ? r.total_memory_bytes : r.usable_bytes);
  AddLint(
      r, Severity::kError, weights_alone ? "weights-fit" : "no-kv-memory",
      weights_alone
          ? fmt::format("{} does not fit: its weights take {} per GPU but {} is usable; "
                        "use more GPUs (-tp/-pp) or quantized weights (--weight-dtype)",
                        m.name, FormatBoth(t.weights_bytes),
                        c.engine == Engine::kVllm || c.engine == Engine::kSglang
                            ? fmt::format("{} x {} = {}", FormatBoth(r.total_memory_bytes),
                                          c.memory_fraction, FormatBoth(r.usable_bytes))
                            : FormatBoth(r.total_memory_bytes))
          : fmt::format("no memory is left for the KV cache: weights {} + reserve {} exceed the "
                        "usable {} per GPU",
                        FormatBoth(t.weights_bytes), FormatBoth(r.reserve.total_bytes),
                        FormatBoth(r.usable_bytes)));
}

/// vLLM before 0.21 captures its CUDA graphs after the cache is sized: they
/// must fit in what --gpu-memory-utilization leaves out.
void LintGraphHeadroom(CapacityResult& r, const EngineConfig& c) {
  if (c.engine == Engine::kVllm && !c.enforce_eager && !c.GraphsInBudget() && !r.explicit_budget &&
      r.total_memory_bytes - r.usable_bytes < r.reserve.cuda_graph_bytes) {
    AddLint(r, Severity::kWarning, "graph-headroom",
            fmt::format("CUDA graphs (about {}) are captured after the cache is sized (vLLM before "
                        "0.21) and must fit in the {} left outside --gpu-memory-utilization {}",
                        FormatGiB(r.reserve.cuda_graph_bytes),
                        FormatGiB(r.total_memory_bytes - r.usable_bytes), c.memory_fraction));
  }
}

}  // namespace

CapacityResult ComputeCapacity(const ModelSpec& m, const HardwareSpec& gpu,
                               const EngineConfig& config) {
  if (config.engine == Engine::kVllm && config.max_model_len_auto)
    return AutoFitMaxModelLen(m, gpu, config);
  if (config.engine == Engine::kVllm && config.disable_hybrid_kv_cache_manager)
    return WithoutHybridManager(m, gpu, config);
  CapacityResult r;
  EngineConfig c = ResolveEngineConfig(m, gpu, config);
  StartResult(r, m, gpu, c);
  if (r.HasError()) return r;
  const WeightFormat format = ResolvedWeightFormat(m, c);  // known valid: LintConfig resolved it
  r.weight_dtype = format.name;
  r.weight_format = WeightFormatLabel(format);

  const CacheDtype& dtype = FindCacheDtype(ResolvedCacheDtype(m, c));
  r.kv_cache_dtype = dtype.name;
  const ModelTensors tensors = BuildModelTensors(m);
  r.reserve = ModelReserve(m, gpu, c);
  if (c.engine == Engine::kVllm && !ApplyVllmLayout(r, m, dtype, c)) return r;
  if ((c.mtp_layers != 0 || c.draft_model) && !r.kv_cache_groups.empty()) {
    AddLint(r, Severity::kWarning, "speculative-hybrid",
            "speculative decoding with a hybrid model: the draft's weights are counted, but its "
            "layers are not placed in vLLM's KV-cache groups (the cache figures leave them out)");
  }
  r.usable_bytes = UsableBytes(r.total_memory_bytes, c);

  std::vector<uint64_t> trt_free;  // TRT-LLM: memory free after loading, per stage
  r.weights_from = WeightBytesSource(m, tensors, format);
  const bool exact = UsesCheckpointBytes(m, format);
  if (!format.unmodelled.empty()) {
    r.lints.push_back({Severity::kWarning, "quantization-not-modelled",
                       fmt::format("--quantization {} takes its format from the checkpoint, which "
                                   "kvplan does not size: the weights are {}",
                                   format.unmodelled,
                                   exact ? "the checkpoint's own bytes"
                                         : "counted in the model's dtype " + m.weight_dtype)});
  }
  const uint64_t min_blocks =
      SizeStages(r,
                 {m, tensors, format, dtype, c, exact ? m.checkpoint_bytes : 0,
                  exact ? ModelWeightBytes(tensors, format) : 0, config.max_num_seqs},
                 trt_free);
  r.explicit_budget = c.kv_cache_memory_bytes != 0 || c.max_total_tokens != 0;
  r.graphs_subtracted = !r.reserve.overridden && !r.explicit_budget &&
                        r.reserve.cuda_graph_bytes != 0 &&
                        (c.engine == Engine::kTrtllm || c.GraphsInBudget());
  const StageCapacity& t = r.stages[r.tightest_stage];
  if (c.engine == Engine::kTrtllm) r.usable_bytes = trt_free[r.tightest_stage];
  if (r.explicit_budget) LintExplicitBudget(r, c);
  r.kv_budget_bytes = t.kv_budget_bytes;
  r.bytes_per_token = t.bytes_per_token;
  r.block_bytes = t.block_bytes;
  r.group_size = t.group_size;
  r.num_blocks = min_blocks;
  // SGLang's state pools: a request needs a slot on every stage that has one,
  // so the stage with the fewest slots caps it (and is the one reported).
  const StageCapacity* pool = nullptr;
  for (const StageCapacity& st : r.stages) {
    if (st.state_pool && (pool == nullptr || st.state_slots < pool->state_slots)) pool = &st;
  }
  if (pool != nullptr) {
    r.state_pool = true;
    r.state_slots = pool->state_slots;
    r.state_slot_bytes = pool->kv.fixed_bytes;
    // MambaPool allocates slots + 1 (slot 0 pads) of each layer's conv and
    // recurrent state.
    uint64_t conv = 0;
    for (const GroupCost& g : pool->kv.groups) {
      conv = CheckedAdd(conv, CheckedMul(g.conv_bytes_layer, g.layers), "state pool bytes");
    }
    r.state_conv_bytes = CheckedMul(conv, r.state_slots + 1, "state pool bytes");
    r.state_ssm_bytes =
        CheckedMul(pool->kv.fixed_bytes - conv, r.state_slots + 1, "state pool bytes");
  }
  // TRT-LLM's secondary pool: host memory that offloaded blocks move to
  // (KvCacheConfig.host_cache_size); it adds no GPU blocks.
  if (c.engine == Engine::kTrtllm) {
    r.host_bytes = c.host_cache_size;
    ClampTrtllmWindows(r, t, c);
  }

  // An explicit vLLM budget skips the estimate; SGLang's token count is
  // capped by memory (above), so weights that do not fit still stop it.
  if (c.kv_cache_memory_bytes == 0 && t.headroom_bytes <= 0) {
    LintNoKvMemory(r, m, c);
    return r;
  }

  if (c.engine == Engine::kLlamaCpp) {
    CountLlamaCppCells(r, t, c, dtype);
    // -ngl below the layers, -nkvo: what stays in host memory.
    const uint64_t host_kv_layers = c.no_kv_offload ? m.layers : r.host_layers;
    if (host_kv_layers != 0) {
      r.host_kv_bytes = LlamaCppAllocBytes(
          ComputeKvCost(StageModel(m, 0, host_kv_layers), dtype, c.tp, EngineStateDtypes(c)), c);
    }
    if (r.host_layers != 0 || LlamaCppOutputOnCpu(m, c)) {
      r.host_weights_bytes = StageWeightBytes(tensors, format, c.tp, 0, r.host_layers,
                                              r.host_layers != 0, LlamaCppOutputOnCpu(m, c));
    }
  } else {
    CountPagedBlocks(r, t, m, c, dtype);
  }
  if (c.engine == Engine::kSglang) SetSglangRunningCap(r, m, gpu, config.max_num_seqs, c);
  // Data-parallel attention: each of a replica's attention groups holds its own requests.
  r.attention_groups = std::max<uint64_t>(1, c.attention_dp);
  r.cluster_max_tokens = CheckedMul(CheckedMul(r.max_tokens, r.attention_groups, "cluster tokens"),
                                    r.replicas, "cluster tokens");
  r.cluster_max_requests =
      CheckedMul(CheckedMul(r.max_requests, r.attention_groups, "cluster requests"), r.replicas,
                 "cluster requests");
  LintGraphHeadroom(r, c);
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

}  // namespace kvplan
