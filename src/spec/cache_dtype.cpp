#include "spec/cache_dtype.h"

#include <fmt/format.h>

#include "util/error.h"

namespace kvplan {

const std::vector<CacheDtype>& AllCacheDtypes() {
  static const std::vector<CacheDtype> kDtypes = {
      {"fp32", 1, 4, 0, "IEEE float32", "4 bytes per element"},
      {"fp16", 1, 2, 0, "IEEE float16", "2 bytes per element"},
      {"bf16", 1, 2, 0, "bfloat16", "2 bytes per element"},
      {"fp8_e4m3", 1, 1, 0, "fp8 e4m3, per-tensor scale (held outside the cache)",
       "vLLM/TensorRT-LLM fp8 KV cache: 1 byte per element, scales per layer"},
      {"fp8_e5m2", 1, 1, 0, "fp8 e5m2, no scale", "vLLM fp8_e5m2: 1 byte per element"},
      {"int8", 1, 1, 0, "int8, per-tensor scale (held outside the cache)",
       "TensorRT-LLM int8 KV cache: 1 byte per element"},
      {"int8_pth", 1, 1, 4, "int8 with one fp32 scale per token and head",
       "1 byte per element + 4 bytes per head vector (per-token-head scale)"},
      {"fp8_pth", 1, 1, 4, "fp8 e4m3 with one fp32 scale per token and head",
       "1 byte per element + 4 bytes per head vector (per-token-head scale)"},
      {"q8_0", 32, 34, 0, "ggml q8_0: 32 int8 + fp16 scale",
       "ggml-common.h block_q8_0: 34 bytes per 32 elements"},
      {"q4_0", 32, 18, 0, "ggml q4_0: 32 x 4 bit + fp16 scale",
       "ggml-common.h block_q4_0: 18 bytes per 32 elements"},
      {"q4_1", 32, 20, 0, "ggml q4_1: 32 x 4 bit + fp16 scale and min",
       "ggml-common.h block_q4_1: 20 bytes per 32 elements"},
      {"iq4_nl", 32, 18, 0, "ggml iq4_nl: 32 x 4 bit non-linear + fp16 scale",
       "ggml-common.h block_iq4_nl: 18 bytes per 32 elements"},
      {"q5_0", 32, 22, 0, "ggml q5_0: 32 x 5 bit + fp16 scale",
       "ggml-common.h block_q5_0: 22 bytes per 32 elements"},
      {"q5_1", 32, 24, 0, "ggml q5_1: 32 x 5 bit + fp16 scale and min",
       "ggml-common.h block_q5_1: 24 bytes per 32 elements"},
      {"nvfp4", 16, 9, 0, "NVFP4: 16 x fp4 e2m1 + one fp8 e4m3 scale per 16",
       "d/2 + d/16 bytes per head vector (one 1-byte scale per 16 elements)"},
      {"fp8_ds_mla", 1, 1, 80, "DeepSeek fp8 MLA: 512 fp8 latent + 4 fp32 scales + 64 bf16 rope",
       "vLLM fp8_ds_mla: 656 bytes per token and layer (MLA with kv_lora_rank 512, rope 64 only)"},
  };
  return kDtypes;
}

const CacheDtype& FindCacheDtype(std::string_view name) {
  struct Alias {
    std::string_view alias, name;
  };
  static constexpr Alias kAliases[] = {
      {"float32", "fp32"},  {"float", "fp32"},    {"f32", "fp32"},
      {"float16", "fp16"},  {"half", "fp16"},     {"f16", "fp16"},
      {"bfloat16", "bf16"}, {"fp8", "fp8_e4m3"},  {"fp8_e4m3fn", "fp8_e4m3"},
      {"e4m3", "fp8_e4m3"}, {"e5m2", "fp8_e5m2"}, {"fp8_inc", "fp8_e4m3"},
      {"fp4", "nvfp4"},     {"q8", "q8_0"},       {"q4", "q4_0"},
  };
  std::string_view canonical = name;
  for (const Alias& a : kAliases) {
    if (a.alias == name) canonical = a.name;
  }
  for (const CacheDtype& d : AllCacheDtypes()) {
    if (d.name == canonical) return d;
  }
  std::string names;
  for (const CacheDtype& d : AllCacheDtypes()) names += (names.empty() ? "" : ", ") + d.name;
  Fail("unknown cache dtype '{}' (known: {})", name, names);
}

void ValidateHeadDim(const CacheDtype& dtype, uint64_t d, std::string_view what) {
  if (d % dtype.block_elems != 0) {
    Fail("{} {} is not a multiple of {}: {} stores {}-element blocks", what, d, dtype.block_elems,
         dtype.name, dtype.block_elems);
  }
}

std::string_view AutoCacheDtype(std::string_view weight_dtype) {
  // Engines serve fp32 checkpoints in 16 bits (vLLM: float32 -> float16 by
  // default), and quantized weights run bf16 activations, so the cache is 2 bytes.
  if (weight_dtype == "fp32" || weight_dtype == "fp16") return "fp16";
  return "bf16";
}

}  // namespace kvplan
