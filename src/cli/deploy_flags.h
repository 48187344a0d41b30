// The deployment flags shared by `capacity`, `tradeoff`, `compare` and
// `paging`: the GPU, the engine and the engine's own flags, turned into an
// EngineConfig for ComputeCapacity (plan/capacity.h). Flag names follow the
// engines. `capacity` adds the llama.cpp and multi-node flags on top.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "plan/capacity.h"

namespace kvplan {

struct DeployFlags {
  std::string gpu;
  std::string engine = "vllm";
  std::optional<double> gpu_memory_utilization;    // vLLM
  std::optional<double> mem_fraction_static;       // SGLang
  std::optional<double> free_gpu_memory_fraction;  // TensorRT-LLM
  std::string max_model_len;                       // tokens; "": the model's max context
  std::string max_num_seqs;                        // "": the engine's default
  std::string max_num_batched_tokens;
  uint64_t block_size = 0;
  std::string kv_cache_dtype = "auto";
  uint64_t tp = 1;
  uint64_t pp = 1;
  uint64_t nodes = 1;          // machines: tp x pp (x dp) may span them
  uint64_t gpus_per_node = 0;  // 0: 8
  std::string weight_dtype;
  uint64_t quant_group_size = 128;  // int4 scale group
  std::string kv_cache_memory_bytes;
  std::string max_total_tokens;
  std::string reserve;
  bool enforce_eager = false;
  // Hybrid models' state: vLLM's and SGLang's flags.
  std::string mamba_ssm_dtype;       // vLLM --mamba-ssm-cache-dtype, SGLang --mamba-ssm-dtype
  std::string mamba_cache_dtype;     // vLLM
  std::string max_mamba_cache_size;  // SGLang
  std::optional<double> mamba_full_memory_ratio;  // SGLang
  bool disable_radix_cache = false;               // SGLang
  std::optional<std::string> vllm_version;        // unset: the latest vLLM's rules

  bool operator==(const DeployFlags&) const = default;
};

/// A CLI11 check that a real-valued flag is written in util/units' one
/// number grammar (TryParseReal): CLI11's own conversion also takes hex
/// floats (0x0.8), inf and nan, which no engine does.
CLI::Validator DecimalNumber();

/// Adds --gpu (required when `gpu_required`), --engine and the engine flags.
void AddDeployFlags(CLI::App* sub, DeployFlags& flags, bool gpu_required = true);

/// The EngineConfig the flags describe (token and byte values parsed; throws
/// Error naming the flag on a bad value).
EngineConfig ToEngineConfig(const DeployFlags& flags);

/// ComputeCapacity, failing (exit 2) with the first error lint's message
/// when the configuration cannot run.
CapacityResult CapacityOrFail(const ModelSpec& model, const HardwareSpec& gpu,
                              const EngineConfig& config);

}  // namespace kvplan
