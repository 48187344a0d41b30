// The engine configuration a deployment config describes: its engine.args
// mapped onto kvplan's EngineConfig, the GPUs it asks for bounded.
#include <fmt/format.h>

#include "plan/check_internal.h"
#include "plan/weights.h"
#include "spec/state_shape.h"
#include "util/units.h"

namespace kvplan {

bool DefaultPrefixCaching(Engine e) {
  return e != Engine::kLlamaCpp;
}

EngineConfig ToEngineConfig(const DeployConfig& d) {
  EngineConfig c;
  c.engine = ParseEngine(d.engine);
  if (d.vllm_version) c.vllm_version = *d.vllm_version;
  c.vllm_graph_profiling = d.vllm_graph_profiling;
  c.allow_long_max_model_len = d.vllm_allow_long_max_model_len;
  const EngineArgs& a = d.args;
  c.memory_fraction = a.memory_fraction.value_or(0);
  c.max_model_len = a.max_model_len.value_or(0);
  c.max_num_seqs = a.max_num_seqs.value_or(0);
  c.max_num_batched_tokens = a.max_num_batched_tokens.value_or(0);
  c.block_size = a.block_size.value_or(0);
  c.kv_cache_dtype = a.kv_cache_dtype.value_or("auto");
  // vLLM: --quantization is the weights' format, --dtype the model's (the
  // activations, and the weights where nothing quantizes them).
  const auto given = [](const std::optional<std::string>& v) { return v && *v != "auto"; };
  if (given(a.weight_dtype)) {
    // A float dtype named outright is the model's dtype, which an auto cache
    // takes (--dtype float32: an fp32 cache; only "auto" serves an fp32
    // checkpoint in 16 bits), and the weights' unless the checkpoint is
    // quantized (DeepSeek-V3's fp8 weights stay fp8 under --dtype bfloat16).
    const std::string act = FindWeightFormat(*a.weight_dtype, 0).name;
    if (act == "fp32" || act == "fp16" || act == "bf16") {
      c.activation_dtype = act;
    } else {
      c.weight_dtype = *a.weight_dtype;
    }
  }
  if (given(a.quantization)) {
    c.weight_dtype = *a.quantization;
    c.engine_quantization = true;
  }
  c.tp = a.tp.value_or(1);
  c.pp = a.pp.value_or(1);
  c.dp = a.dp.value_or(1);
  // The layout before the GPUs are counted: SGLang's DP attention groups are
  // inside tp (no more GPUs), and llama.cpp's -ts names one GPU a share.
  ApplyMoeLayout(c, a.attention_dp.value_or(false), a.expert_parallel.value_or(false), a.ep_size);
  if (c.engine == Engine::kLlamaCpp && a.tensor_split) {
    c.tensor_split = ParseTensorSplit(*a.tensor_split, "tensor_split");
    if (!a.pp) c.pp = c.tensor_split.size();  // llama.cpp splits over every GPU it sees
  }
  // Each of tp, pp and dp is bounded where it is read; their product is the
  // GPUs the config asks for, bounded as hardware.count is (each under 2^16,
  // so the product cannot wrap).
  if (c.tp * c.pp * c.dp > kMaxRanks) {
    const char* last = a.dp ? "dp" : a.pp ? "pp" : "tp";
    const SourcePos at = a.PosOf(last, d.pos);
    // A config read from no file is the --vllm-args command line.
    const std::string where = at.file.empty() && d.file.empty() ? "--vllm-args: " : at.Prefix();
    Fail("{}{}: tp x pp x dp = {} GPUs is over the limit of {}", where, a.NameOf(last),
         WithCommas(c.tp * c.pp * c.dp), WithCommas(kMaxRanks));
  }
  c.nodes = 1;
  c.gpus_per_node = d.gpu_count != 0 ? d.gpu_count : c.tp * c.pp * c.dp;
  c.kv_cache_memory_bytes = a.kv_cache_memory_bytes.value_or(0);
  c.max_total_tokens = a.max_total_tokens.value_or(0);
  c.max_gpu_total_bytes = a.max_gpu_total_bytes.value_or(0);
  c.host_cache_size = a.host_cache_size.value_or(0);
  c.trtllm_max_tokens = a.trtllm_max_tokens.value_or(0);
  c.num_gpu_blocks_override = a.num_gpu_blocks_override.value_or(0);
  c.mtp_layers = d.speculative_mtp_layers;
  c.draft_model = d.speculative_draft;
  if (a.speculative) c.num_speculative_tokens = a.speculative->num_tokens;
  c.disable_hybrid_kv_cache_manager = a.disable_hybrid.value_or(false);
  c.max_model_len_auto = a.max_model_len_auto;
  c.enforce_eager = a.enforce_eager.value_or(false);
  c.cuda_graph_max_bs = a.cuda_graph_max_bs.value_or(0);
  c.cuda_graph_sizes = a.cuda_graph_sizes;
  c.enable_prefix_caching = a.prefix_caching.value_or(DefaultPrefixCaching(c.engine));
  // Hybrid models' state (the readers checked the names).
  c.state_ssm_bytes = StateDtypeBytes(a.mamba_ssm_dtype.value_or("auto"), "mamba_ssm_dtype");
  c.state_conv_bytes = StateDtypeBytes(a.mamba_cache_dtype.value_or("auto"), "mamba_cache_dtype");
  c.max_state_slots = a.max_mamba_cache_size.value_or(0);
  c.state_memory_ratio = a.mamba_full_memory_ratio.value_or(0);
  c.disable_radix_cache = c.engine == Engine::kSglang && a.prefix_caching == false;
  if (c.engine == Engine::kLlamaCpp) {
    c.n_parallel = a.max_num_seqs.value_or(1);
    c.n_ctx = a.n_ctx.value_or(0);
    c.n_ctx_from_model = a.n_ctx == uint64_t{0};  // ctx_size: 0, llama.cpp's "from the model"
    c.n_ubatch = a.max_num_batched_tokens.value_or(0);
    c.swa_full = a.swa_full.value_or(false);
    c.flash_attn = a.flash_attn.value_or("auto");
    c.kv_unified = a.kv_unified.value_or(false);
    c.no_kv_offload = a.no_kv_offload.value_or(false);
    if (a.n_gpu_layers) c.n_gpu_layers = ParseGpuLayers(*a.n_gpu_layers, "n_gpu_layers");
    c.max_model_len = 0;
    c.max_num_seqs = 0;
    c.max_num_batched_tokens = 0;
  }
  return c;
}

}  // namespace kvplan
