#include "plan/engines.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "util/error.h"
#include "util/suggest.h"
#include "util/units.h"

namespace kvplan {

std::string_view MemoryFractionFlag(Engine engine) {
  switch (engine) {
    case Engine::kVllm:
      return "--gpu-memory-utilization";
    case Engine::kSglang:
      return "--mem-fraction-static";
    case Engine::kTrtllm:
      return "--free-gpu-memory-fraction";
    case Engine::kLlamaCpp:
      return "";
  }
  return "";
}

uint64_t DefaultBlockSize(Engine engine) {
  switch (engine) {
    case Engine::kVllm:
      return 16;  // vllm/config/cache.py block_size
    case Engine::kSglang:
      return 1;  // server_args page_size
    case Engine::kTrtllm:
      return 32;  // KvCacheConfig tokens_per_block
    case Engine::kLlamaCpp:
      return 256;  // n_ctx padded to 256 cells (llama-context.cpp)
  }
  return 16;
}

double DefaultMemoryFraction(Engine engine, const HardwareSpec& gpu, uint64_t tp,
                             uint64_t vllm_version) {
  switch (engine) {
    case Engine::kVllm:
      // vllm/config/cache.py gpu_memory_utilization (0.92 with graph profiling).
      return vllm_version >= kVllmGraphProfiling ? 0.92 : 0.9;
    case Engine::kTrtllm:
      return 0.9;
    case Engine::kLlamaCpp:
      return 1.0;
    case Engine::kSglang:
      break;
  }
  // SGLang server_args.py _handle_gpu_memory_settings: reserve (MiB)
  //   512 + max(chunked_prefill_size, 2048) * 1.5 + cuda_graph_max_bs * 2
  //   + tp * pp / 8 * 1024, at least 10 GiB on GPUs over 60 GiB;
  // mem_fraction_static = round((gpu_mem - reserve) / gpu_mem, 3).
  const double mib = static_cast<double>(gpu.TotalMemoryBytes()) / static_cast<double>(kMiB);
  double chunk = 0, graph_bs = 0;
  if (mib < 20 * 1024) {
    chunk = 2048, graph_bs = 8;
  } else if (mib < 35 * 1024) {
    chunk = 2048, graph_bs = tp < 4 ? 24 : 80;
  } else if (mib < 60 * 1024) {
    chunk = 4096, graph_bs = tp < 4 ? 32 : 160;
  } else if (mib < 160 * 1024) {
    chunk = 8192, graph_bs = tp < 4 ? 256 : 512;
  } else {
    chunk = 16384, graph_bs = 512;
  }
  double reserve =
      512 + std::max(chunk, 2048.0) * 1.5 + graph_bs * 2 + static_cast<double>(tp) / 8 * 1024;
  if (mib > 60 * 1024) reserve = std::max(reserve, 10.0 * 1024);
  return std::round((mib - reserve) / mib * 1000) / 1000;
}

std::vector<std::string> EngineCacheDtypes(Engine engine) {
  switch (engine) {
    case Engine::kVllm:
      return {"auto", "fp16", "bf16", "fp32", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_ds_mla"};
    case Engine::kSglang:
      return {"auto", "fp16", "bf16", "fp32", "fp8_e4m3", "fp8_e5m2", "nvfp4"};
    case Engine::kTrtllm:
      return {"auto", "fp16", "bf16", "fp32", "fp8", "int8", "nvfp4"};
    case Engine::kLlamaCpp:
      return {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"};
  }
  return {};
}

std::string CacheDtypeUnsupported(Engine engine, const ModelSpec& model, const CacheDtype& dtype) {
  const std::string& n = dtype.name;
  const bool plain16 = n == "fp16" || n == "bf16" || n == "fp32";
  const bool mla = model.mla.has_value();
  switch (engine) {
    case Engine::kVllm:
      if (plain16 || n == "fp8_e4m3" || n == "fp8_e5m2") return "";
      if (n == "fp8_ds_mla") {
        return mla ? "" : "vLLM's fp8_ds_mla cache is only for DeepSeek MLA models";
      }
      if (dtype.IsBlock() && n != "nvfp4") {
        return fmt::format("vLLM has no {} KV cache (ggml block types are llama.cpp's); use fp8",
                           n);
      }
      return fmt::format(
          "vLLM has no {} KV cache (choices: auto, fp8, fp8_e4m3, fp8_e5m2, fp8_ds_mla)", n);
    case Engine::kSglang:
      if (plain16 || n == "fp8_e4m3" || n == "fp8_e5m2" || n == "nvfp4") return "";
      return fmt::format("SGLang has no {} KV cache (choices: auto, fp8_e4m3, fp8_e5m2, fp4_e2m1)",
                         n);
    case Engine::kTrtllm:
      if (plain16 || n == "fp8_e4m3" || n == "int8" || n == "nvfp4") return "";
      return fmt::format("TensorRT-LLM has no {} KV cache (choices: auto, fp8, int8, nvfp4)", n);
    case Engine::kLlamaCpp:
      if (plain16) return "";
      if (dtype.IsBlock() && n != "nvfp4") return "";
      return fmt::format(
          "llama.cpp has no {} KV cache (cache types: f32, f16, bf16, q8_0, q4_0, "
          "q4_1, iq4_nl, q5_0, q5_1)",
          n);
  }
  return "";
}

}  // namespace kvplan
