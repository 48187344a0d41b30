// The key tables of a deployment config's engine.args: each engine's keys
// that kvplan reads (with the EngineArgs field each sets) and the others it
// takes and only names. deploy_config_args.cpp reads by them; a launch
// line's flags (engine_command.cpp) are looked up in them too.
#include "import/deploy_config_internal.h"

namespace kvplan {

const std::vector<ArgKey>& KeysFor(const std::string& engine) {
  static const std::vector<ArgKey> kVllm = {
      {"max_model_len", "max_model_len", ArgType::kTokens},
      {"max_num_seqs", "max_num_seqs", ArgType::kCount},
      {"gpu_memory_utilization", "memory_fraction", ArgType::kFraction},
      {"kv_cache_dtype", "kv_cache_dtype", ArgType::kText},
      {"tensor_parallel_size", "tp", ArgType::kCount},
      {"pipeline_parallel_size", "pp", ArgType::kCount},
      {"data_parallel_size", "dp", ArgType::kCount},
      {"block_size", "block_size", ArgType::kCount},
      {"enable_prefix_caching", "prefix_caching", ArgType::kBool},
      {"max_num_batched_tokens", "max_num_batched_tokens", ArgType::kTokens},
      {"kv_cache_memory_bytes", "kv_cache_memory_bytes", ArgType::kBytes},
      {"num_gpu_blocks_override", "num_gpu_blocks_override", ArgType::kCount},
      {"enable_expert_parallel", "expert_parallel", ArgType::kBool},
      {"disable_hybrid_kv_cache_manager", "disable_hybrid", ArgType::kBool},
      {"mamba_ssm_cache_dtype", "mamba_ssm_dtype", ArgType::kText},
      {"mamba_cache_dtype", "mamba_cache_dtype", ArgType::kText},
      {"enforce_eager", "enforce_eager", ArgType::kBool},
      {"max_cudagraph_capture_size", "cuda_graph_max_bs", ArgType::kCount},
      {"dtype", "weight_dtype", ArgType::kText},
      {"quantization", "quantization", ArgType::kText},
  };
  static const std::vector<ArgKey> kSglang = {
      {"context_length", "max_model_len", ArgType::kTokens},
      {"max_running_requests", "max_num_seqs", ArgType::kCount},
      {"mem_fraction_static", "memory_fraction", ArgType::kFraction},
      {"kv_cache_dtype", "kv_cache_dtype", ArgType::kText},
      {"tp_size", "tp", ArgType::kCount},
      {"pp_size", "pp", ArgType::kCount},
      {"dp_size", "dp", ArgType::kCount},
      {"page_size", "block_size", ArgType::kCount},
      {"disable_radix_cache", "prefix_caching", ArgType::kNotBool},
      {"chunked_prefill_size", "max_num_batched_tokens", ArgType::kTokens},
      {"max_total_tokens", "max_total_tokens", ArgType::kTokens},
      {"mamba_ssm_dtype", "mamba_ssm_dtype", ArgType::kText},
      {"max_mamba_cache_size", "max_mamba_cache_size", ArgType::kCount},
      {"mamba_full_memory_ratio", "mamba_full_memory_ratio", ArgType::kRatio},
      {"disable_cuda_graph", "enforce_eager", ArgType::kBool},
      {"enable_dp_attention", "attention_dp", ArgType::kBool},
      {"enable_ep_moe", "expert_parallel", ArgType::kBool},
      {"ep_size", "ep_size", ArgType::kCount},
      {"cuda_graph_max_bs", "cuda_graph_max_bs", ArgType::kCount},
      {"dtype", "weight_dtype", ArgType::kText},
      {"quantization", "quantization", ArgType::kText},
  };
  static const std::vector<ArgKey> kTrtllm = {
      {"max_seq_len", "max_model_len", ArgType::kTokens},
      {"max_batch_size", "max_num_seqs", ArgType::kCount},
      {"free_gpu_memory_fraction", "memory_fraction", ArgType::kFraction},
      {"kv_cache_dtype", "kv_cache_dtype", ArgType::kText},
      {"tp_size", "tp", ArgType::kCount},
      {"pp_size", "pp", ArgType::kCount},
      {"tokens_per_block", "block_size", ArgType::kCount},
      {"enable_block_reuse", "prefix_caching", ArgType::kBool},
      {"max_num_tokens", "max_num_batched_tokens", ArgType::kTokens},
      {"max_gpu_total_bytes", "max_gpu_total_bytes", ArgType::kBytes},
      {"host_cache_size", "host_cache_size", ArgType::kBytes},
      {"enable_attention_dp", "attention_dp", ArgType::kBool},
      {"moe_expert_parallel_size", "ep_size", ArgType::kCount},
      {"ep_size", "ep_size", ArgType::kCount},
      {"max_tokens", "trtllm_max_tokens", ArgType::kCount},
      {"dtype", "weight_dtype", ArgType::kText},
  };
  static const std::vector<ArgKey> kLlamaCpp = {
      {"ctx_size", "n_ctx", ArgType::kTokens},
      {"parallel", "max_num_seqs", ArgType::kCount},
      {"cache_type_k", "kv_cache_dtype", ArgType::kText},
      {"cache_type_v", "cache_type_v", ArgType::kText},
      {"ubatch_size", "max_num_batched_tokens", ArgType::kTokens},
      {"swa_full", "swa_full", ArgType::kBool},
      {"flash_attn", "flash_attn", ArgType::kText},
      {"kv_unified", "kv_unified", ArgType::kBool},
      {"n_gpu_layers", "n_gpu_layers", ArgType::kText},
      {"gpu_layers", "n_gpu_layers", ArgType::kText},
      {"tensor_split", "tensor_split", ArgType::kText},
      {"no_kv_offload", "no_kv_offload", ArgType::kBool},
  };
  if (engine == "sglang") return kSglang;
  if (engine == "trtllm") return kTrtllm;
  if (engine == "llama.cpp") return kLlamaCpp;
  return kVllm;
}

const OtherKeys& OtherKeysFor(const std::string& engine) {
  static const OtherKeys kVllm = {
      {"cpu_offload_gb", "swap_space", "kv_transfer_config", "enable_lora", "max_loras",
       "max_lora_rank", "limit_mm_per_prompt", "kv_sharing_fast_prefill", "calculate_kv_scales"},
      {"served_model_name",
       "port",
       "host",
       "api_key",
       "trust_remote_code",
       "enable_chunked_prefill",
       "disable_log_requests",
       "enable_log_requests",
       "tokenizer",
       "revision",
       "download_dir",
       "load_format",
       "seed",
       "uvicorn_log_level",
       "enable_auto_tool_choice",
       "tool_call_parser",
       "chat_template",
       "generation_config",
       "disable_log_stats",
       "max_log_len",
       "reasoning_parser",
       "hf_token",
       "distributed_executor_backend",
       "worker_extension_cls",
       "model_impl",
       "tokenizer_mode",
       "allowed_origins"}};
  static const OtherKeys kSglang = {
      {"enable_deepep_moe", "cpu_offload_gb", "enable_torch_compile", "lora_paths",
       "max_loras_per_batch", "hicache_ratio", "enable_hierarchical_cache"},
      {"served_model_name",
       "port",
       "host",
       "api_key",
       "trust_remote_code",
       "tokenizer_path",
       "log_level",
       "enable_metrics",
       "chat_template",
       "random_seed",
       "revision",
       "attention_backend",
       "watchdog_timeout",
       "tool_call_parser",
       "reasoning_parser",
       "log_requests",
       "enable_mixed_chunk",
       "schedule_policy",
       "skip_tokenizer_init",
       "disable_overlap_schedule",
       "enable_cache_report",
       "disable_custom_all_reduce",
       "decode_log_interval",
       "show_time_cost",
       "load_format",
       "download_dir",
       "model_impl"}};
  static const OtherKeys kTrtllm = {
      {},
      {"host", "port", "log_level", "trust_remote_code", "tokenizer", "backend",
       "num_postprocess_workers", "reasoning_parser", "cuda_graph_config", "print_iter_log",
       "disable_overlap_scheduler", "gpus_per_node", "cluster_size"}};
  static const OtherKeys kLlamaCpp = {
      {"split_mode", "main_gpu", "batch_size", "mlock", "no_mmap", "override_tensor", "cpu_moe",
       "n_cpu_moe", "draft_model", "model_draft", "lora", "mmproj"},
      {"host",
       "port",
       "alias",
       "threads",
       "threads_batch",
       "api_key",
       "log_disable",
       "verbose",
       "temp",
       "metrics",
       "jinja",
       "chat_template",
       "n_predict",
       "slots",
       "seed",
       "cont_batching",
       "no_cont_batching",
       "embedding",
       "rerank",
       "no_webui",
       "timeout",
       "slot_save_path",
       "reasoning_format",
       "props",
       "log_file",
       "top_k",
       "top_p",
       "min_p",
       "repeat_penalty"}};
  if (engine == "sglang") return kSglang;
  if (engine == "trtllm") return kTrtllm;
  if (engine == "llama.cpp") return kLlamaCpp;
  return kVllm;
}

}  // namespace kvplan
