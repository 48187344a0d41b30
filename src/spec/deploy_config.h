// DeployConfig: one deployment as a team runs it (model, GPUs, engine and
// its flags under the engine's own names, an optional workload) plus the
// requirements `kvplan check` gates on. Schema: docs/deploy-config.md.
//
// The reader is strict: unknown keys are errors with a did-you-mean, and
// every error names file:line:col, because a typo in a CI gate must fail the
// pipeline rather than silently check something else.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spec/model_spec.h"
#include "util/error.h"

namespace kvplan {

/// The engine flags kvplan models, engine-neutral. Unset fields take the
/// engine's default. `names` maps each field set to the key the user wrote
/// (e.g. max_model_len -> "context_length" for SGLang) and `pos` to where.
/// Speculative decoding in vLLM's words (import/speculative_config.cpp maps
/// SGLang's and TensorRT-LLM's settings onto them).
struct SpeculativeArgs {
  std::string method;  // mtp, deepseek_mtp, eagle, eagle3, draft_model, ngram, ...
  std::string model;   // the draft model ("": none, or the model's own MTP layers)
  uint64_t num_tokens = 0;
  // MTP layers the engine runs when it names a count (TensorRT-LLM's
  // vanilla MTP: num_nextn_predict_layers); 0: all the model has.
  uint64_t mtp_layers = 0;

  /// The methods that serve the model's own MTP layers: mtp, deepseek_mtp
  /// and the other *_mtp names vLLM rewrites to mtp.
  bool Mtp() const {
    return method == "mtp" ||
           (method.size() > 4 && method.compare(method.size() - 4, 4, "_mtp") == 0);
  }
};

struct EngineArgs {
  std::optional<uint64_t> max_model_len;      // vLLM max_model_len, SGLang context_length,
                                              // TRT-LLM max_seq_len, llama.cpp ctx_size/parallel
  std::optional<uint64_t> max_num_seqs;       // max_running_requests, max_batch_size, parallel
  std::optional<double> memory_fraction;      // gpu_memory_utilization, mem_fraction_static,
                                              // free_gpu_memory_fraction
  std::optional<std::string> kv_cache_dtype;  // cache_type_k for llama.cpp
  std::optional<uint64_t> tp, pp, dp;
  std::optional<uint64_t> block_size;               // block_size, page_size, tokens_per_block
  std::optional<bool> prefix_caching;               // enable_prefix_caching, !disable_radix_cache,
                                                    // enable_block_reuse
  std::optional<uint64_t> max_num_batched_tokens;   // chunked_prefill_size, max_num_tokens, ubatch
  std::optional<uint64_t> kv_cache_memory_bytes;    // vLLM explicit budget
  std::optional<uint64_t> max_total_tokens;         // SGLang
  std::optional<uint64_t> max_gpu_total_bytes;      // TRT-LLM
  std::optional<uint64_t> host_cache_size;          // TRT-LLM secondary (host) pool
  std::optional<uint64_t> trtllm_max_tokens;        // TRT-LLM kv_cache_config.max_tokens
  std::optional<uint64_t> num_gpu_blocks_override;  // vLLM
  bool max_model_len_auto = false;                  // vLLM --max-model-len -1 / auto
  std::optional<bool> enforce_eager;                // enforce_eager, disable_cuda_graph
  std::optional<uint64_t> cuda_graph_max_bs;        // vLLM max_cudagraph_capture_size (or the
                                                    // largest cudagraph_capture_sizes), SGLang
                                                    // cuda_graph_max_bs
  std::vector<uint64_t> cuda_graph_sizes;           // vLLM cudagraph_capture_sizes as listed
  std::optional<std::string> weight_dtype;          // dtype (vLLM: of the model and activations)
  std::optional<std::string> quantization;          // vLLM/SGLang quantization: of the weights
  std::optional<uint64_t> n_ctx;                    // llama.cpp ctx_size (all sequences)
  std::optional<bool> swa_full;                     // llama.cpp
  std::optional<std::string> flash_attn;            // llama.cpp -fa: on, off or auto
  std::optional<bool> kv_unified;                   // llama.cpp --kv-unified
  std::optional<std::string> n_gpu_layers;          // llama.cpp -ngl (a count, all or -1)
  std::optional<std::string> tensor_split;          // llama.cpp -ts (shares, "10,6")
  std::optional<bool> no_kv_offload;                // llama.cpp -nkvo
  std::optional<bool> attention_dp;     // SGLang enable_dp_attention, TRT-LLM enable_attention_dp
  std::optional<bool> expert_parallel;  // vLLM enable_expert_parallel, SGLang enable_ep_moe
  std::optional<uint64_t> ep_size;      // SGLang ep_size, TRT-LLM moe_expert_parallel_size
  std::optional<bool> disable_hybrid;   // vLLM disable_hybrid_kv_cache_manager
  std::optional<std::string> mamba_ssm_dtype;  // vLLM mamba_ssm_cache_dtype, SGLang mamba_ssm_dtype
  std::optional<std::string> mamba_cache_dtype;   // vLLM mamba_cache_dtype (the conv state)
  std::optional<uint64_t> max_mamba_cache_size;   // SGLang: state slots
  std::optional<double> mamba_full_memory_ratio;  // SGLang: state / token memory
  std::optional<SpeculativeArgs> speculative;     // vLLM speculative_config

  std::map<std::string, std::string> names;  // field -> the engine's own key
  std::map<std::string, SourcePos> pos;      // field -> where it was set

  /// The engine's name for `field` (as written), or `field`.
  std::string NameOf(const std::string& field) const {
    auto it = names.find(field);
    return it == names.end() ? field : it->second;
  }
  /// Where `field` was set, or `fallback`.
  SourcePos PosOf(const std::string& field, const SourcePos& fallback) const {
    auto it = pos.find(field);
    return it == pos.end() ? fallback : it->second;
  }
};

/// One class of requests in a workload mix.
struct RequestClass {
  uint64_t tokens = 0;  // prompt + generated tokens a request holds at its longest
  double share = 0;     // fraction of requests (shares sum to 1)
};

struct Workload {
  std::vector<RequestClass> requests;
  uint64_t shared_prefix_tokens = 0;  // every request starts with the same prefix
  SourcePos pos;
};

struct LatencyRequirement {
  uint64_t batch = 0;
  uint64_t context_tokens = 0;
  std::optional<double> max_tpot_ms;
  std::optional<double> max_ttft_ms;
  SourcePos tpot_pos, ttft_pos, pos;
};

/// TTFT and TPOT at a percentile under a load (kvplan fleet's model).
struct ServingRequirement {
  double rate = 0;     // requests/s over the whole deployment (Poisson), or
  uint64_t users = 0;  // concurrent users, each with one request in flight
  uint64_t prompt = 0, output = 0;
  double percentile = 0.9;
  std::optional<double> max_ttft_ms, max_tpot_ms;
  SourcePos pos, ttft_pos, tpot_pos;
};

struct Requirements {
  std::optional<uint64_t> min_concurrency;  // requests of max_model_len at once
  std::optional<uint64_t> min_tokens_in_cache;
  std::optional<double> min_headroom_percent;        // spare KV at min_concurrency
  std::optional<uint64_t> min_workload_concurrency;  // requests of the workload mix at once
  std::optional<LatencyRequirement> latency;
  std::optional<ServingRequirement> serving;
  std::map<std::string, SourcePos> pos;  // requirement key -> its line
};

struct DeployConfig {
  std::string file;   // where it was read ("" for a command line)
  std::string name;   // `name:` or the file's stem
  std::string model;  // catalog name, HF repo id, or a path (resolved against the file's folder)
  std::string model_revision = "main";  // the engine's --revision (vLLM, SGLang): the Hub revision
  std::string gpu;                      // catalog name or a spec/profile path (resolved likewise)
  uint64_t gpu_count = 0;               // 0: exactly tp * pp * dp
  std::string engine = "vllm";
  // Speculative decoding resolved against the model (cli/check): the MTP
  // layers served, or the draft model loaded.
  uint64_t speculative_mtp_layers = 0;
  std::shared_ptr<const ModelSpec> speculative_draft;
  std::optional<uint64_t> vllm_version;  // engine.version (vLLM only); unset: the latest
  // VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0|1 before a vLLM command line
  // or in engine.env; unset: the version's default.
  std::optional<bool> vllm_graph_profiling;
  // VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (command line or engine.env): vLLM then
  // takes a max_model_len beyond the model's max_position_embeddings.
  bool vllm_allow_long_max_model_len = false;
  EngineArgs args;
  std::optional<Workload> workload;
  Requirements requirements;
  std::vector<std::string> notes;  // e.g. flags ignored from a command line
  // Flags the engine takes that change the memory left for the cache in
  // ways kvplan does not model (`check --strict` fails on them).
  std::vector<std::string> unmodelled;
  bool strict = false;  // check --strict: an unmodelled flag is a failure
  SourcePos pos, model_pos, gpu_pos, count_pos, engine_pos;
};
}  // namespace kvplan
