// The private helpers that the capacity files share: what one request holds
// in a paged cache (capacity_paged.cpp), llama.cpp's cells
// (capacity_llamacpp.cpp), vLLM's KV-cache groups for hybrid models
// (capacity_vllm.cpp), and the small pieces of the common flow
// (capacity.cpp) that the others use. Nothing outside src/plan/capacity*.cpp
// includes it; the public API is plan/capacity.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/capacity.h"
#include "plan/kv.h"
#include "plan/weights.h"
#include "spec/cache_dtype.h"
#include "spec/model_spec.h"

namespace kvplan {

// --- common (capacity.cpp) ---

/// Appends one lint to the result.
void AddLint(CapacityResult& r, Severity s, std::string code, std::string message);

/// have - weights - reserve, signed (negative: they do not fit). Computed in
/// 128 bits: casting each term to int64_t turned memory over 2^63 bytes into
/// a negative number and reported "usable 0 B".
int64_t Headroom(uint64_t have, uint64_t weights, uint64_t reserve);

/// A sliding-window or chunked layer group: it holds at most its window.
bool Windowed(const GroupCost& g);

/// Bytes of the K half of one token across the group's layers (all of it
/// for MLA, whose one latent vector serves as both).
uint64_t KeyBytesPerToken(const GroupCost& g, const CacheDtype& dtype);

// --- paged engines: vLLM, SGLang, TRT-LLM (capacity_paged.cpp) ---

/// Bytes that one request of `n` tokens holds: the fixed state plus each
/// group's tokens rounded to whole blocks and capped at its window.
uint64_t PagedRequestBytes(const KvCost& kv, uint64_t n, const EngineConfig& c);

/// Fills blocks, tokens, requests, the largest max_model_len and SGLang's K
/// and V pools from the tightest stage `t`, for the paged engines.
void CountPagedBlocks(CapacityResult& r, const StageCapacity& t, const ModelSpec& m,
                      const EngineConfig& c, const CacheDtype& dtype);

// --- llama.cpp (capacity_llamacpp.cpp) ---

/// llama.cpp with `seqs` sequences of `tokens` each (-np seqs -c tokens*seqs):
/// the bytes it allocates, each sequence's fixed state included.
uint64_t SeqsAllocBytes(const KvCost& kv, const EngineConfig& c, uint64_t tokens, uint64_t seqs);

/// The layers llama.cpp puts on each of the c.pp GPUs, and in `first` the
/// first of them (-ngl N leaves the layers before n_layer - N on the CPU):
/// layer il goes to the GPU whose cumulative -ts share first exceeds
/// (il - first) / min(N, n_layer + 1), in float as llama-model.cpp
/// load_tensors computes it (equal shares without -ts). Throws Error when
/// -ts has not one share per GPU or leaves a GPU without a layer.
std::vector<uint64_t> LlamaCppStageLayers(uint64_t n_layer, const EngineConfig& c, uint64_t& first);

/// llama.cpp with -ngl at most the layer count: the output layer (and its
/// weights) stays on the CPU; -ngl n_layer + 1 or more offloads it too.
bool LlamaCppOutputOnCpu(const ModelSpec& m, const EngineConfig& c);

/// What llama.cpp allocates in host memory for the KV of `kv`'s layers.
uint64_t LlamaCppAllocBytes(const KvCost& kv, const EngineConfig& c);

/// Fills cells, K and V buffers, the fit and the largest context from the
/// tightest stage `t`: llama.cpp allocates n_ctx cells whatever the budget.
void CountLlamaCppCells(CapacityResult& r, const StageCapacity& t, const EngineConfig& c,
                        const CacheDtype& dtype);

// --- speculative decoding (capacity_speculative.cpp) ---

/// The model's layers [first, first + n) as a model of their own (capacity.cpp).
ModelSpec StageModel(const ModelSpec& m, uint64_t first, uint64_t n);

/// Speculative decoding on the last stage: appends the MTP layers' (c.mtp_layers)
/// or the draft model's (c.draft_model) cache to `kv` and returns their
/// weights' bytes on one GPU.
uint64_t AddSpeculative(const ModelSpec& m, const ModelTensors& tensors, const WeightFormat& format,
                        const CacheDtype& dtype, const EngineConfig& c, const WeightSplit& split,
                        uint64_t attention_tp, KvCost& kv);

// --- SGLang (capacity_sglang.cpp) ---

/// SGLang's state slots (max_mamba_cache_size) for a hybrid model whose
/// states take `per_request` bytes, out of the `budget` left after weights:
/// --max-mamba-cache-size as given; with --disable-radix-cache and
/// --max-running-requests given (`asked_seqs`), one per running request;
/// else the slots that
/// mamba_full_memory_ratio / (1 + ratio) of the budget holds. Under DP
/// attention a given count is shared by the attention groups.
uint64_t SglangStateSlots(uint64_t budget, uint64_t per_request, const EngineConfig& c,
                          uint64_t asked_seqs);

/// SGLang's running cap, from the pools it sized (init_memory):
/// --max-running-requests (`asked`), or by default int(tokens / context_len
/// x 512) clamped to 2048-4096; at most half the tokens in the cache, and
/// with a state pool at most its slots / 3 (/ 1 with the radix cache off).
/// (cuda_graph_max_bs only bounds graph capture: larger batches run without
/// graphs.)
void SetSglangRunningCap(CapacityResult& r, const ModelSpec& m, const HardwareSpec& gpu,
                         uint64_t asked, const EngineConfig& c);

// --- TensorRT-LLM's variable sliding windows (capacity_trtllm.cpp) ---

/// The layers of each attention window, ascending, their bytes per token
/// summed: sliding and chunked layers at min(window, max_seq_len), the
/// others at max_seq_len.
std::vector<TrtllmWindow> TrtllmWindows(const KvCost& kv, uint64_t max_seq_len);

/// adjust_window_sizes_for_vswa: the windows unchanged when one sequence at
/// every window fits in `pool_bytes`, else shrunk in ascending order to what
/// the pool (and max_tokens, 0: none) holds, windows that end equal merged.
std::vector<TrtllmWindow> TrtllmClampWindows(const std::vector<TrtllmWindow>& windows,
                                             uint64_t pool_bytes, uint64_t max_tokens);

/// TensorRT-LLM with several attention windows: fills r.trtllm_windows from
/// the tightest stage `t`, and warns where the windows are shrunk.
void ClampTrtllmWindows(CapacityResult& r, const StageCapacity& t, const EngineConfig& c);

// --- vLLM's KV-cache groups for hybrid models (capacity_vllm.cpp) ---

/// vLLM's KV-cache layout for a model whose layers are of more than one kind.
struct VllmLayout {
  std::vector<KvCacheGroup> groups;  // empty: one group spans every layer (the simple case)
  uint64_t block_size = 0;           // attention tokens per block, after the Mamba raise
  uint64_t page_bytes = 0;           // one layer's page, unified over every group
  uint64_t state_page_bytes = 0;     // one Mamba layer's state before padding (0: none)
  std::string error;                 // vLLM cannot unify the page sizes: it refuses to start
};

/// Groups the layers the way vLLM does (vllm/v1/core/kv_cache_utils.py,
/// get_kv_cache_groups); see capacity_vllm.cpp.
VllmLayout VllmKvCacheGroups(const ModelSpec& m, const KvCost& kv, const EngineConfig& c);

/// Layers per KV-cache group on the stage [first, first + n): the most that
/// any group has there (vLLM pads the others up to it).
uint64_t StageGroupSize(const std::vector<KvCacheGroup>& groups, uint64_t first, uint64_t n);

/// vLLM's auto-fit (--max-model-len -1): ComputeCapacity at the model's
/// max_context, or at the longest request the cache holds.
CapacityResult AutoFitMaxModelLen(const ModelSpec& m, const HardwareSpec& gpu,
                                  const EngineConfig& config);

/// vLLM --disable-hybrid-kv-cache-manager (unify_hybrid_kv_cache_specs):
/// beside full-attention layers, sliding and chunked layers keep every token
/// as full ones do; ComputeCapacity of that model. Without full layers, or
/// with state layers, vLLM cannot unify the specs: an error lint.
CapacityResult WithoutHybridManager(const ModelSpec& m, const HardwareSpec& gpu,
                                    const EngineConfig& config);

/// Blocks one request of `n` tokens holds in one vLLM KV-cache group
/// (kv_cache_interface.py, max_memory_usage_bytes / page_size_bytes).
uint64_t VllmGroupBlocks(const KvCacheGroup& g, uint64_t n, uint64_t batched);

}  // namespace kvplan
