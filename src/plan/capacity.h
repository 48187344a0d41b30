// Capacity: how many KV-cache tokens (and concurrent requests) one deployment
// holds, computed the way each serving engine sizes its cache
// (/work/shared/engines.md, docs/capacity.md):
//
//   vLLM      kv = total * gpu_memory_utilization - weights - reserve
//   SGLang    kv = total * mem_fraction_static   - weights - reserve
//   TRT-LLM   kv = (total - weights - reserve) * free_gpu_memory_fraction
//   llama.cpp kv = n_ctx cells up front; the budget only decides whether it fits
//
// then rounds the budget down to whole blocks (vLLM 16 tokens, TRT-LLM 32,
// SGLang 1, llama.cpp cells padded to 256). Every figure is per GPU unless
// the name says `cluster_`; with pipeline parallelism the tightest stage
// decides the blocks. An explicit budget (kv_cache_memory_bytes, SGLang's
// max_total_tokens) bypasses the estimate so the arithmetic can be checked
// exactly against an engine's log.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan/engines.h"
#include "plan/kv.h"
#include "plan/weights.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"

namespace kvplan {

/// A deployment: the engine and its flags. Zero means "the engine's default"
/// (resolved by ResolveEngineConfig and reported back in CapacityResult).
struct EngineConfig {
  Engine engine = Engine::kVllm;

  /// vLLM --gpu-memory-utilization (default 0.92; 0.9 before 0.21), SGLang --mem-fraction-static
  /// (default from GPU memory, see engines.cpp), TRT-LLM
  /// --free-gpu-memory-fraction (default 0.9). Ignored by llama.cpp. 0: default.
  double memory_fraction = 0;

  uint64_t max_model_len = 0;           // tokens per request; 0: the model's max_context
                                        // (llama.cpp: n_ctx / n_parallel)
  bool max_model_len_auto = false;      // vLLM --max-model-len -1 (or auto): the model's
                                        // max_context, or the longest the cache holds
  uint64_t max_num_seqs = 0;            // 0: engine default (vLLM 256 or 1024, TRT-LLM 2048;
                                        // SGLang: its request pool, set once the cache is sized)
  uint64_t max_num_batched_tokens = 0;  // tokens in one forward pass; 0: engine default
  uint64_t block_size = 0;              // tokens per block; 0: vLLM 16, TRT-LLM 32, SGLang 1,
                                        // llama.cpp 256 (cell padding)
  std::string kv_cache_dtype = "auto";  // a CacheDtype name; "auto" = from the weights
  std::string weight_dtype;             // "": the model's; else fp16|bf16|fp8|int8|int4|...
  bool engine_quantization = false;     // weight_dtype is the engine's --quantization, which
                                        // must match a quantized checkpoint's (not a what-if)
  // The model (activation) dtype where a deployment names it (vLLM/SGLang
  // --dtype float16|bfloat16|float32, also beside --quantization): what an
  // "auto" cache is. "": from the weight dtype (AutoCacheDtype).
  std::string activation_dtype;
  uint64_t quant_group_size = 128;  // int4/int8 per-group scale granularity

  uint64_t tp = 1;  // tensor parallel ranks
  uint64_t pp = 1;  // pipeline stages
  uint64_t dp = 1;  // data-parallel replicas
  // Data-parallel attention inside the tp group (SGLang --enable-dp-attention
  // --dp D, TensorRT-LLM enable_attention_dp: D = tp): D groups of tp / D
  // ranks each run attention on their own requests, so each GPU's cache
  // holds requests no other GPU of the group holds. 1: off. Adds no GPUs.
  uint64_t attention_dp = 1;
  // Expert parallelism (vLLM --enable-expert-parallel: tp x dp ranks;
  // SGLang --ep-size, TensorRT-LLM moe_expert_parallel_size): the routed
  // experts dealt whole over this many ranks. 0: split over tp like any linear.
  uint64_t expert_parallel = 0;
  uint64_t nodes = 1;          // machines
  uint64_t gpus_per_node = 0;  // 0: tp * pp * dp / nodes (exactly enough)

  uint64_t kv_cache_memory_bytes = 0;    // explicit KV budget per GPU (vLLM); 0: estimate
  uint64_t max_total_tokens = 0;         // SGLang --max-total-tokens; 0: from memory
  uint64_t max_gpu_total_bytes = 0;      // TRT-LLM: the KV pool's bytes when set; 0: estimate
  uint64_t host_cache_size = 0;          // TRT-LLM: a secondary KV pool in host memory, bytes
  uint64_t num_gpu_blocks_override = 0;  // vLLM --num-gpu-blocks-override; 0: from memory
  // Speculative decoding (vLLM --speculative-config): the draft's cache and
  // weights beside the target's on the last stage. mtp_layers: the model's
  // own MTP layers served (method mtp); draft_model: a separate draft.
  uint64_t mtp_layers = 0;
  std::shared_ptr<const ModelSpec> draft_model;
  uint64_t num_speculative_tokens = 0;           // tokens proposed a step (recorded)
  bool disable_hybrid_kv_cache_manager = false;  // vLLM: sliding layers cached as full ones
  uint64_t trtllm_max_tokens = 0;                // TRT-LLM kv_cache_config.max_tokens; 0: none
  // Mamba and linear-attention state (hybrid models). The dtypes are bytes
  // per element, 0: the engine's default (EngineStateDtypes): vLLM
  // --mamba-ssm-cache-dtype / SGLang --mamba-ssm-dtype for the recurrent
  // state, vLLM --mamba-cache-dtype for the conv (and the recurrent state
  // when neither the flag nor the model names one).
  uint64_t state_ssm_bytes = 0;
  uint64_t state_conv_bytes = 0;
  // SGLang keeps states in a pool of their own beside the token pool:
  // --max-mamba-cache-size slots (0: sized from memory), or
  // --mamba-full-memory-ratio of state to token memory (0: 0.9).
  uint64_t max_state_slots = 0;
  double state_memory_ratio = 0;
  bool disable_radix_cache = false;       // SGLang --disable-radix-cache: a request holds one slot
  std::optional<uint64_t> reserve_bytes;  // --reserve: activation/overhead bytes per GPU

  bool enforce_eager = false;      // no CUDA graphs (vLLM --enforce-eager,
                                   // SGLang --disable-cuda-graph)
  uint64_t cuda_graph_max_bs = 0;  // largest captured batch; 0: engine default
  // vLLM's listed capture sizes (--cudagraph-capture-sizes): it captures up
  // to the largest that is not above max_num_batched_tokens. Empty: none listed.
  std::vector<uint64_t> cuda_graph_sizes;
  // Set by ResolveEngineConfig where a given cuda_graph_max_bs is not the
  // largest listed size vLLM keeps: vLLM's startup error, in its words.
  std::string cuda_graph_error;
  uint64_t vllm_version = kVllmCurrent;  // ParseVllmVersion: which vLLM's budget rules
  // VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS where set (0.17.1 and later
  // read it); unset: on from 0.21.
  std::optional<bool> vllm_graph_profiling;
  // VLLM_ALLOW_LONG_MAX_MODEL_LEN=1: a max_model_len beyond the model's
  // max_context is a warning, not vLLM's startup error.
  bool allow_long_max_model_len = false;
  bool enable_prefix_caching = false;  // recorded for the paging planner

  // llama.cpp. n_ctx unset: max_model_len * n_parallel when max_model_len is
  // given, else 4096 (llama-server's default); n_ctx_from_model: the model's.
  uint64_t n_ctx = 0;                    // total cells for all sequences; 0: see above
  bool n_ctx_from_model = false;         // -c 0: the model's max_context (llama.cpp's n_ctx_train)
  uint64_t n_parallel = 0;               // -np/--parallel sequences; 0: 1
  uint64_t n_ubatch = 0;                 // physical batch; 0: 512
  uint64_t n_batch = 0;                  // logical batch; 0: 2048
  bool swa_full = false;                 // --swa-full: full-size cache for sliding-window layers
  std::string flash_attn = "auto";       // -fa on|off|auto: a quantized V cache needs it on
  bool kv_unified = false;               // --kv-unified: one cache for all sequences, not one each
  std::vector<double> tensor_split;      // -ts: each GPU's share of the layers; empty: equal
  std::optional<uint64_t> n_gpu_layers;  // -ngl: layers on the GPUs (the last ones); unset: all
  bool no_kv_offload = false;            // -nkvo: the KV cache in host memory

  /// vLLM from 0.21 with graphs on: its CUDA-graph estimate comes out of
  /// the cache budget (before, graphs were captured after the cache was sized).
  bool GraphsInBudget() const {
    return engine == Engine::kVllm && !enforce_eager &&
           vllm_graph_profiling.value_or(vllm_version >= kVllmGraphProfiling);
  }
};

/// The engine as the text views name it: "vllm", or "vllm 0.20" where an
/// older vLLM's rules were asked for.
std::string EngineLabel(const EngineConfig& c);

enum class Severity { kWarning, kError };

/// A finding about a configuration: errors make it impossible, warnings
/// are worth a look. `code` is stable for tests and JSON.
struct Lint {
  Severity severity = Severity::kWarning;
  std::string code;     // e.g. "tp-heads", "window-over-context", "dtype-engine"
  std::string message;  // one line, says why
};

/// The memory kept back from the KV cache (per GPU), term by term
/// (docs/capacity.md says where each term comes from).
struct Reserve {
  uint64_t activation_bytes = 0;  // peak of one forward pass over the batched tokens
  uint64_t logits_bytes = 0;      // fp32 logits + sampler buffers for the sampled rows
  uint64_t logits_rows = 0;       // the rows logits_bytes counts
  uint64_t non_torch_bytes = 0;   // CUDA context, cuBLAS/NCCL workspaces
  uint64_t cuda_graph_bytes = 0;  // captured graphs' private pools
  uint64_t rope_cache_bytes = 0;  // rotary cos/sin table: max_context x rotary dim x 2 B
  uint64_t total_bytes = 0;       // what is subtracted
  bool overridden = false;        // --reserve given: total_bytes is the user's
};

/// One of vLLM's KV-cache groups for a hybrid model (layers of more than one
/// kind: full + sliding, attention + Mamba). vLLM gives every group its own
/// block table and pads the groups to one layer count, so that a block of any
/// group is the same bytes: `group_size` layers x one page
/// (vllm/v1/core/kv_cache_utils.py, _get_kv_cache_groups_uniform_page_size).
struct KvCacheGroup {
  LayerKind kind = LayerKind::kFull;
  uint64_t window = 0;           // sliding window or chunk in tokens; 0 for other kinds
  uint64_t block_size = 0;       // tokens per block (state: max_model_len, one block a request)
  std::vector<uint64_t> layers;  // the model's layer indices in the group (padding not listed)
  size_t type = 0;               // which layer spec: the groups of one spec are adjacent
};

/// TensorRT-LLM: the layers that attend over one window (tokens), and one
/// token's bytes across them.
struct TrtllmWindow {
  uint64_t window = 0;
  uint64_t layers = 0;
  uint64_t token_bytes = 0;
};

/// One pipeline stage (all of the model when pp = 1), on one GPU of it.
struct StageCapacity {
  uint64_t stage = 0;
  uint64_t first_layer = 0;  // [first_layer, first_layer + layers)
  uint64_t layers = 0;
  uint64_t weights_bytes = 0;    // per GPU of the stage
  uint64_t kv_budget_bytes = 0;  // per GPU, after weights and reserve (0 when negative)
  int64_t headroom_bytes = 0;    // budget before clamping at 0 (negative: weights don't fit)
  uint64_t bytes_per_token = 0;  // per GPU of the stage, every caching layer, before window caps
  uint64_t block_bytes = 0;      // one block (block_size tokens) across the stage's layers;
                                 // vLLM hybrid: one page in each of group_size layers
  uint64_t group_size = 0;       // vLLM hybrid: layers per KV-cache group on this stage,
                                 // padding included; 0 otherwise
  uint64_t num_blocks = 0;
  bool state_pool = false;   // SGLang hybrid: the states have a pool of their own
  uint64_t state_slots = 0;  // ...of this many slots
  KvCost kv;                 // the stage's per-request cost on one GPU
};

struct CapacityResult {
  EngineConfig config;         // with every default resolved
  std::string engine_name;     // "vllm", "sglang", "trtllm", "llama.cpp"
  std::string kv_cache_dtype;  // resolved CacheDtype name
  std::string weight_dtype;    // resolved
  std::string weight_format;   // its label: "fp8 (128x128 blocks)" (WeightFormatLabel)
  std::string weights_from;    // "exact: model.safetensors.index.json total_size" or
                               // "counted from the architecture" (WeightBytesSource)

  // Parallel layout.
  uint64_t gpus_per_replica = 1;  // tp * pp
  uint64_t replicas = 1;          // dp
  uint64_t attention_groups = 1;  // data-parallel attention groups in a replica (attention_dp):
                                  // each GPU's cache serves its own requests
  uint64_t gpus = 1;              // tp * pp * dp
  uint64_t gpus_available = 1;    // nodes * gpus_per_node

  // Per GPU, on the tightest stage.
  uint64_t total_memory_bytes = 0;  // what the engine sees as total
  uint64_t usable_bytes = 0;        // total * fraction (vLLM, SGLang); free * fraction (TRT-LLM)
  uint64_t weights_bytes = 0;
  Reserve reserve;
  uint64_t kv_budget_bytes = 0;    // the KV pool's bytes (explicit or estimated)
  bool explicit_budget = false;    // from kv_cache_memory_bytes / max_total_tokens
  bool graphs_subtracted = false;  // reserve.cuda_graph_bytes came out of the budget
  uint64_t block_size = 0;         // tokens per block (vLLM raises it for Mamba hybrids)
  uint64_t block_bytes = 0;        // one block across every caching layer of the stage
                                   // (vLLM hybrid: page_bytes x group_size)
  uint64_t num_blocks = 0;
  uint64_t bytes_per_token = 0;  // every caching layer of the stage, before window caps
  uint64_t max_tokens = 0;       // tokens the cache holds (the engine's "KV cache size";
                                 // vLLM hybrid: num_blocks / groups x block_size)
  uint64_t kv_used_bytes = 0;    // num_blocks * block_bytes (what is really allocated)
  uint64_t host_bytes = 0;       // TRT-LLM: the secondary pool in host memory (host_cache_size)
  // TRT-LLM with more than one attention window: each window and its layers
  // after adjust_window_sizes_for_vswa (shrunk when one sequence does not fit).
  std::vector<TrtllmWindow> trtllm_windows;

  // Requests of max_model_len tokens.
  uint64_t max_model_len = 0;
  uint64_t request_bytes = 0;          // one max_model_len request, window caps applied
  uint64_t blocks_per_request = 0;     // cdiv(request_bytes, block_bytes); vLLM hybrid: the
                                       // blocks of every KV-cache group summed
  double max_concurrency = 0;          // num_blocks / blocks_per_request (vLLM's "X.XXx")
  uint64_t max_requests = 0;           // whole requests: floor(max_concurrency)
  bool fits = false;                   // at least one max_model_len request fits
  uint64_t largest_max_model_len = 0;  // longest single request the cache holds (vLLM's
                                       // estimate); llama.cpp: per sequence at n_parallel
  uint64_t model_max_context = 0;      // the model's max_context: searches stop there

  // vLLM with a hybrid model: its KV-cache groups (whole model; a stage holds
  // the layers in its range). Empty when one block spans every caching layer:
  // single-kind models, and every other engine.
  std::vector<KvCacheGroup> kv_cache_groups;
  uint64_t page_bytes = 0;         // vLLM hybrid: one layer's page, the same in every group
  uint64_t group_size = 0;         // vLLM hybrid: layers per group on the tightest stage
  uint64_t state_page_bytes = 0;   // vLLM hybrid with Mamba: one layer's state before padding
  bool block_size_raised = false;  // vLLM raised block_size so a page holds a Mamba state

  // SGLang with a hybrid model: its separate state pool (MambaPool). Without
  // one (other engines) the states share the token budget.
  bool state_pool = false;
  uint64_t state_slots = 0;          // max_mamba_cache_size: sequences' states (fewest of any
                                     // stage; may be 0, which SGLang refuses)
  uint64_t state_slot_bytes = 0;     // one slot: a sequence's states on that stage
  uint64_t state_conv_bytes = 0;     // the pool's conv states (slots + 1, a padding slot)
  uint64_t state_ssm_bytes = 0;      // the pool's recurrent states (slots + 1)
  uint64_t state_running_ratio = 0;  // slots per running request SGLang plans for

  std::vector<StageCapacity> stages;  // pp entries, stage order
  size_t tightest_stage = 0;

  // Cluster totals: every replica's cache together.
  uint64_t cluster_max_tokens = 0;    // max_tokens * dp
  uint64_t cluster_max_requests = 0;  // max_requests * dp
  uint64_t cluster_memory_bytes = 0;  // total_memory_bytes * gpus

  // SGLang: K and V pool bytes per GPU; llama.cpp: K and V buffers.
  uint64_t k_bytes = 0;
  uint64_t v_bytes = 0;
  uint64_t host_layers = 0;         // llama.cpp: layers -ngl leaves on the CPU (the first ones)
  uint64_t host_kv_bytes = 0;       // llama.cpp: KV in host memory (CPU layers', or all: -nkvo)
  uint64_t host_weights_bytes = 0;  // llama.cpp: the CPU layers' weights
  uint64_t cells = 0;               // llama.cpp: n_ctx cells allocated (padded)
  uint64_t swa_cells = 0;           // llama.cpp: sliding layers' cells (= cells with --swa-full)

  std::vector<Lint> lints;              // warnings and errors, in order found
  std::vector<std::string> engine_log;  // the engine's own startup lines, predicted

  /// True when some lint is an error.
  bool HasError() const;
  /// The blocks requests can hold: vLLM's block pool keeps block 0 back as
  /// its null block (vllm/v1/core/block_pool.py), every other engine none.
  uint64_t UsableBlocks() const;
  /// The blocks the engine plans requests against: vLLM from 0.29 leaves out
  /// the null block in its startup check and estimate; before, every block.
  uint64_t PlannedBlocks() const;
  /// The scheduler's limit on requests running at once: config.max_num_seqs
  /// (vLLM max_num_seqs, SGLang max_running_requests, TRT-LLM
  /// max_batch_size). None for llama.cpp, whose -np sequences are what the
  /// memory question is asked about.
  std::optional<uint64_t> RunningCap() const;
  /// Of `requests` that fit in memory, how many the scheduler runs at once:
  /// at most RunningCap().
  uint64_t RunningAtOnce(uint64_t requests) const;
  /// Bytes (on the tightest stage) that one request of `tokens` tokens holds,
  /// window caps and the engine's sliding-window extra block included.
  /// llama.cpp: one sequence's share of what n_parallel sequences of `tokens`
  /// allocate, since its window cells are shared by all of them.
  uint64_t RequestBytes(uint64_t tokens) const;
  /// cdiv(RequestBytes(tokens), block_bytes).
  uint64_t BlocksForRequest(uint64_t tokens) const;
  /// Whether `concurrency` requests of `tokens` tokens fit at once: whole
  /// blocks (concurrency x BlocksForRequest <= num_blocks), or for llama.cpp
  /// whether -np concurrency -c tokens*concurrency allocates within the
  /// budget (window cells grow with the sequences, not per request). False
  /// when the arithmetic would overflow.
  bool FitsAtConcurrency(uint64_t tokens, uint64_t concurrency) const;
};

/// Data-parallel attention and expert parallelism, each engine's way, on a
/// config whose tp and dp are set: SGLang's dp with DP attention counts
/// attention groups inside tp (dp becomes 1: no more GPUs); TensorRT-LLM's
/// enable_attention_dp gives every tp rank its own requests; expert
/// parallelism deals the experts over tp x dp ranks (vLLM) or tp (SGLang's
/// --enable-ep-moe), or over `ep_size` ranks when given. Other engines'
/// DP attention is left alone.
void ApplyMoeLayout(EngineConfig& c, bool dp_attention, bool expert_parallel,
                    std::optional<uint64_t> ep_size);

/// Fills every zero/default field of `config` with the engine's default for
/// this model and GPU (e.g. vLLM max_num_batched_tokens 8192 on >= 70 GiB GPUs).
EngineConfig ResolveEngineConfig(const ModelSpec& model, const HardwareSpec& gpu,
                                 const EngineConfig& config);

/// The weight format the engine runs: --weight-dtype (or a deployment's
/// quantization), else the checkpoint's quantization, else a float dtype the
/// deployment names, else the model's (fp32 checkpoints run in bf16 on vLLM,
/// SGLang and TRT-LLM). Throws Error for an unknown name.
WeightFormat ResolvedWeightFormat(const ModelSpec& model, const EngineConfig& config);

/// The cache dtype name: --kv-cache-dtype, or for "auto" the activations'
/// 16-bit type: a float dtype the deployment names, float weights' type, or
/// the model's for quantized weights (llama.cpp: fp16, its -ctk default).
std::string ResolvedCacheDtype(const ModelSpec& model, const EngineConfig& config);

/// Configuration problems (tp not dividing heads, tp*pp over the GPUs, a cache
/// dtype the engine lacks, a window over the context...). Never throws.
std::vector<Lint> LintConfig(const ModelSpec& model, const HardwareSpec& gpu,
                             const EngineConfig& resolved);

/// The modelled activation/overhead reserve per GPU for this engine, model
/// and batched-token budget (docs/capacity.md), or the override.
Reserve ModelReserve(const ModelSpec& model, const HardwareSpec& gpu, const EngineConfig& resolved);

/// The bytes per state element the engine keeps for Mamba and linear-attention
/// layers where it overrides the model's: llama.cpp f32 for both parts,
/// SGLang a bf16 conv and its --mamba-ssm-dtype (fp32) for the recurrent
/// state; vLLM and TRT-LLM the model's unless --mamba-cache-dtype or
/// --mamba-ssm-cache-dtype says otherwise.
StateDtypes EngineStateDtypes(const EngineConfig& config);

/// True when the engine keeps the states of this cost's requests in a pool
/// of their own (SGLang, a model with both state and token-keeping layers):
/// a request's blocks then hold only its tokens.
bool SeparateStatePool(const KvCost& kv, const EngineConfig& config);

/// The full capacity picture. Never throws for configuration problems: they
/// are reported as error lints (and the figures that depend on them are 0);
/// throws Error only on arithmetic overflow.
CapacityResult ComputeCapacity(const ModelSpec& model, const HardwareSpec& gpu,
                               const EngineConfig& config);

/// True when `lint` stops the engine at startup: an error lint, or a
/// max_model_len request that does not fit the cache under vLLM and
/// llama.cpp (vLLM raises its ValueError, llama.cpp fails to allocate);
/// SGLang and TensorRT-LLM start and serve shorter requests.
bool StopsEngineAtStartup(const Lint& lint, Engine engine);

/// True when some lint of `capacity` stops its engine at startup.
bool EngineRefusesToStart(const CapacityResult& capacity);

/// The longest max_model_len (at most the model's max_context) at which
/// `concurrency` requests fit at once (0 when not even one token each fits):
/// a binary search over CapacityResult::FitsAtConcurrency.
uint64_t MaxModelLenAtConcurrency(const CapacityResult& capacity, uint64_t concurrency);

}  // namespace kvplan
