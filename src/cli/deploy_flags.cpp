#include "cli/deploy_flags.h"

#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "spec/state_shape.h"
#include "util/error.h"
#include "util/units.h"

namespace kvplan {

CLI::Validator DecimalNumber() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (TryParseReal(text)) return "";
        return "'" + text +
               "' is not a number (decimal digits, an optional '.' and exponent: "
               "0.9, 1e-3)";
      },
      "NUMBER");
}

void AddDeployFlags(CLI::App* sub, DeployFlags& f, bool gpu_required) {
  CLI::Option* gpu = sub->add_option(
      "--gpu", f.gpu, "Accelerator: catalog name (kvplan gpus) or a hardware/profile YAML");
  if (gpu_required) gpu->required();
  sub->add_option("--engine", f.engine, "Serving engine: vllm, sglang, trtllm, llama.cpp")
      ->capture_default_str();
  sub->add_option(
         "--gpu-memory-utilization", f.gpu_memory_utilization,
         "vLLM: fraction of total GPU memory for weights + reserve + KV (default 0.92; 0.9 "
         "before vLLM 0.21)")
      ->check(DecimalNumber());
  sub->add_option("--mem-fraction-static", f.mem_fraction_static,
                  "SGLang: fraction for weights + KV pool (default from GPU memory, SGLang's "
                  "heuristic)")
      ->check(DecimalNumber());
  sub->add_option("--free-gpu-memory-fraction", f.free_gpu_memory_fraction,
                  "TensorRT-LLM: fraction of the memory free after loading (default 0.9)")
      ->check(DecimalNumber());
  sub->add_option("--max-model-len", f.max_model_len,
                  "Tokens per request (default: the model's max context; 4k = 4000, 4K = 4096; "
                  "vLLM: auto or -1 fits it to the cache)");
  sub->add_option("--max-num-seqs", f.max_num_seqs,
                  "Scheduler's request limit, sequences per step (default: the engine's)");
  sub->add_option("--max-num-batched-tokens", f.max_num_batched_tokens,
                  "Tokens per forward pass: sizes the activation reserve (SGLang: "
                  "--chunked-prefill-size; default: the engine's)");
  sub->add_option("--block-size", f.block_size,
                  "Tokens per KV block (default: vLLM 16, TRT-LLM 32, SGLang 1, llama.cpp cell "
                  "padding 256)")
      ->check(CLI::Range(uint64_t{1}, kMaxBlockTokens));
  sub->add_option("--kv-cache-dtype", f.kv_cache_dtype,
                  "auto, fp16, bf16, fp8, fp8_e5m2, int8, q8_0, ...")
      ->capture_default_str();
  sub->add_option("--tp,--tensor-parallel-size", f.tp, "Tensor-parallel ranks (also -tp)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, kMaxRanks));
  sub->add_option("--pp,--pipeline-parallel-size", f.pp, "Pipeline stages (also -pp)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, kMaxRanks));
  sub->add_option("--nodes", f.nodes, "Machines (tp x pp may span them)")
      ->check(CLI::Range(uint64_t{1}, kMaxRanks))
      ->capture_default_str();
  sub->add_option("--gpus-per-node", f.gpus_per_node, "GPUs per machine (default 8)")
      ->check(CLI::Range(uint64_t{1}, kMaxRanks));
  sub->add_option("--weight-dtype", f.weight_dtype,
                  "Override the weights: fp16, bf16, fp8, int8, int4, nvfp4, mxfp4 (default: as "
                  "published, e.g. DeepSeek-V3 fp8 in 128x128 blocks)");
  sub->add_option("--quant-group-size", f.quant_group_size,
                  "int4 scale group size (an int4 checkpoint keeps its own)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  sub->add_option("--kv-cache-memory-bytes", f.kv_cache_memory_bytes,
                  "Explicit KV budget per GPU (vLLM kv_cache_memory_bytes), e.g. 3.81GiB: bypasses "
                  "the estimate");
  sub->add_option("--max-total-tokens", f.max_total_tokens,
                  "SGLang: explicit KV pool size in tokens");
  sub->add_option("--reserve", f.reserve,
                  "Activation/overhead reserve per GPU (overrides the model), e.g. 2GiB");
  sub->add_flag("--enforce-eager", f.enforce_eager, "No CUDA graphs (no graph memory reserved)");
  sub->add_option("--mamba-ssm-dtype,--mamba-ssm-cache-dtype", f.mamba_ssm_dtype,
                  "Hybrid models: the recurrent state's dtype, auto, float32, bfloat16 (SGLang "
                  "--mamba-ssm-dtype, default float32; vLLM --mamba-ssm-cache-dtype, default "
                  "the model's)");
  sub->add_option("--mamba-cache-dtype", f.mamba_cache_dtype,
                  "vLLM, hybrid models: the conv state's dtype (and the recurrent state's when "
                  "neither it nor the model names one)");
  sub->add_option("--max-mamba-cache-size", f.max_mamba_cache_size,
                  "SGLang, hybrid models: state slots in its state pool (default: sized from "
                  "memory by --mamba-full-memory-ratio)");
  sub->add_option("--mamba-full-memory-ratio", f.mamba_full_memory_ratio,
                  "SGLang, hybrid models: state memory / token memory (default 0.9)")
      ->check(DecimalNumber());
  sub->add_flag("--disable-radix-cache", f.disable_radix_cache,
                "SGLang: no prefix cache (a hybrid model's request holds one state slot, and "
                "--max-num-seqs sizes the state pool)");
  sub->add_option("--vllm-version", f.vllm_version,
                  "The vLLM release to imitate (default: latest). Before 0.21 the default "
                  "--gpu-memory-utilization is 0.9 and CUDA graphs are not subtracted from the "
                  "cache; e.g. 0.20.1");
}

namespace {

// The hybrid-state flags, each refused for an engine that has no such flag.
void StateFlags(const DeployFlags& f, EngineConfig& c) {
  const auto only = [&](bool given, const char* flag, std::initializer_list<Engine> engines) {
    if (!given || std::find(engines.begin(), engines.end(), c.engine) != engines.end()) return;
    std::vector<std::string> names;
    for (Engine e : engines) names.emplace_back(EngineName(e));
    Fail("{} is {}'s flag, not {}'s", flag, fmt::join(names, "'s and "), EngineName(c.engine));
  };
  only(!f.mamba_ssm_dtype.empty(), "--mamba-ssm-dtype", {Engine::kSglang, Engine::kVllm});
  only(!f.mamba_cache_dtype.empty(), "--mamba-cache-dtype", {Engine::kVllm});
  only(!f.max_mamba_cache_size.empty(), "--max-mamba-cache-size", {Engine::kSglang});
  only(f.mamba_full_memory_ratio.has_value(), "--mamba-full-memory-ratio", {Engine::kSglang});
  only(f.disable_radix_cache, "--disable-radix-cache", {Engine::kSglang});
  if (!f.mamba_ssm_dtype.empty())
    c.state_ssm_bytes = StateDtypeBytes(f.mamba_ssm_dtype, "--mamba-ssm-dtype");
  if (!f.mamba_cache_dtype.empty())
    c.state_conv_bytes = StateDtypeBytes(f.mamba_cache_dtype, "--mamba-cache-dtype");
  if (!f.max_mamba_cache_size.empty()) {
    c.max_state_slots = ParseTokens(f.max_mamba_cache_size, "--max-mamba-cache-size");
    if (c.max_state_slots == 0) Fail("--max-mamba-cache-size: must be at least 1");
  }
  if (f.mamba_full_memory_ratio) {
    if (!(*f.mamba_full_memory_ratio > 0) || *f.mamba_full_memory_ratio > 1e6) {
      Fail("--mamba-full-memory-ratio must be a positive ratio, got {}",
           *f.mamba_full_memory_ratio);
    }
    c.state_memory_ratio = *f.mamba_full_memory_ratio;
  }
  c.disable_radix_cache = f.disable_radix_cache;
}

}  // namespace

EngineConfig ToEngineConfig(const DeployFlags& f) {
  EngineConfig c;
  c.engine = ParseEngine(f.engine);
  // Each engine's fraction flag means something different: refuse a mismatch.
  struct FractionFlag {
    const std::optional<double>& value;
    Engine engine;
    const char* flag;
  };
  for (const FractionFlag& ff :
       {FractionFlag{f.gpu_memory_utilization, Engine::kVllm, "--gpu-memory-utilization"},
        FractionFlag{f.mem_fraction_static, Engine::kSglang, "--mem-fraction-static"},
        FractionFlag{f.free_gpu_memory_fraction, Engine::kTrtllm, "--free-gpu-memory-fraction"}}) {
    if (!ff.value) continue;
    if (ff.engine != c.engine) {
      Fail("{} is {}'s flag, not {}'s (use {} or --engine {})", ff.flag, EngineName(ff.engine),
           EngineName(c.engine), MemoryFractionFlag(c.engine), EngineName(ff.engine));
    }
    if (!(*ff.value > 0 && *ff.value <= 1))
      Fail("{} must be in (0, 1], got {}", ff.flag, *ff.value);
    c.memory_fraction = *ff.value;
  }
  if (f.max_model_len == "auto" || f.max_model_len == "-1") {
    if (c.engine != Engine::kVllm)
      Fail("--max-model-len {}: the auto-fit is vLLM's (give a length)", f.max_model_len);
    c.max_model_len_auto = true;
  } else if (!f.max_model_len.empty()) {
    c.max_model_len = ParseContextTokens(f.max_model_len, "--max-model-len");
  }
  // An explicit 0 is an error, not the engine's default.
  const auto at_least_one = [](const std::string& v, const char* flag) {
    const uint64_t n = ParseTokens(v, flag);
    if (n == 0) Fail("{}: must be at least 1", flag);
    return n;
  };
  if (!f.max_num_seqs.empty()) {
    c.max_num_seqs = at_least_one(f.max_num_seqs, "--max-num-seqs");
    // llama.cpp has no such limit: it serves the -np sequences it is given.
    if (c.engine == Engine::kLlamaCpp) {
      Fail(
          "--max-num-seqs is not llama.cpp's: it serves the -np/--parallel sequences it is "
          "given (kvplan capacity -np N)");
    }
  }
  if (!f.max_num_batched_tokens.empty()) {
    c.max_num_batched_tokens = at_least_one(f.max_num_batched_tokens, "--max-num-batched-tokens");
  }
  c.block_size = f.block_size;
  c.kv_cache_dtype = f.kv_cache_dtype;
  if (c.kv_cache_dtype != "auto") FindCacheDtype(c.kv_cache_dtype);
  c.weight_dtype = f.weight_dtype;
  c.quant_group_size = f.quant_group_size;
  if (!c.weight_dtype.empty()) FindWeightFormat(c.weight_dtype, c.quant_group_size);
  c.tp = f.tp;
  c.pp = f.pp;
  c.nodes = f.nodes;
  c.gpus_per_node = f.gpus_per_node;
  // Each flag is bounded by its range; the GPUs they add up to are bounded
  // too (each under 2^16, so no product wraps).
  if (c.tp * c.pp > kMaxRanks) {
    Fail("-tp {} x -pp {} = {} GPUs is over the limit of {}", c.tp, c.pp, WithCommas(c.tp * c.pp),
         WithCommas(kMaxRanks));
  }
  const uint64_t per_node = c.gpus_per_node != 0 ? c.gpus_per_node : 8;
  if (c.nodes * per_node > kMaxRanks) {
    Fail("--nodes {} x --gpus-per-node {} = {} GPUs is over the limit of {}", c.nodes, per_node,
         WithCommas(c.nodes * per_node), WithCommas(kMaxRanks));
  }
  if (!f.kv_cache_memory_bytes.empty()) {
    c.kv_cache_memory_bytes = ParseBytes(f.kv_cache_memory_bytes, "--kv-cache-memory-bytes");
    if (c.kv_cache_memory_bytes == 0) Fail("--kv-cache-memory-bytes: must be more than 0");
  }
  if (!f.max_total_tokens.empty()) {
    c.max_total_tokens = at_least_one(f.max_total_tokens, "--max-total-tokens");
    if (c.engine != Engine::kSglang) {
      Fail("--max-total-tokens is SGLang's flag (use --kv-cache-memory-bytes, or --engine sglang)");
    }
  }
  if (!f.reserve.empty()) c.reserve_bytes = ParseBytes(f.reserve, "--reserve");
  StateFlags(f, c);
  c.enforce_eager = f.enforce_eager;
  if (f.vllm_version) {
    if (c.engine != Engine::kVllm) {
      Fail("--vllm-version is for --engine vllm, not {}", EngineName(c.engine));
    }
    c.vllm_version = ParseVllmVersion(*f.vllm_version, "--vllm-version");
  }
  return c;
}

CapacityResult CapacityOrFail(const ModelSpec& model, const HardwareSpec& gpu,
                              const EngineConfig& config) {
  CapacityResult r = ComputeCapacity(model, gpu, config);
  for (const Lint& l : r.lints) {
    if (l.severity == Severity::kError) Fail("{}", l.message);
  }
  return r;
}

}  // namespace kvplan
