#include "spec/weight_format.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>

#include "util/error.h"

namespace kvplan {

namespace {

WeightFormat Format(std::string name, uint64_t bits, uint64_t group_elems,
                    uint64_t group_scale_bits, uint64_t row_scale_bytes,
                    uint64_t tensor_scale_bytes, uint64_t dense_bytes) {
  WeightFormat f;
  f.name = std::move(name);
  f.bits = bits;
  f.group_elems = group_elems;
  f.group_scale_bits = group_scale_bits;
  f.row_scale_bytes = row_scale_bytes;
  f.tensor_scale_bytes = tensor_scale_bytes;
  f.dense_bytes = dense_bytes;
  return f;
}

}  // namespace

namespace {

// The names a vLLM --quantization method stands for (vLLM's
// QuantizationMethods): the stored layout it loads, or "checkpoint" where the
// layout comes from the checkpoint's own quantization_config.
struct MethodAlias {
  std::string_view method;
  std::string_view layout;
};
constexpr std::array<MethodAlias, 28> kMethods = {{
    {"awq_marlin", "awq"},
    {"gptq_marlin", "gptq"},
    {"marlin", "gptq"},
    {"gptq_bitblas", "gptq"},
    {"bitblas", "gptq"},
    {"moe_wna16", "gptq"},
    {"fbgemm_fp8", "fp8-channel"},
    {"ptpc_fp8", "fp8-channel"},
    {"modelopt", "fp8-static"},
    {"modelopt_fp4", "nvfp4"},
    {"petit_nvfp4", "nvfp4"},
    {"bitsandbytes", "bnb-nf4"},
    {"experts_int8", "experts-int8"},
    {"compressed-tensors", "checkpoint"},
    {"gguf", "checkpoint"},
    {"quark", "checkpoint"},
    {"torchao", "checkpoint"},
    {"hqq", "checkpoint"},
    {"auto-round", "checkpoint"},
    {"inc", "checkpoint"},
    {"fp_quant", "checkpoint"},
    {"deepspeedfp", "checkpoint"},
    {"tpu_int8", "checkpoint"},
    {"ipex", "checkpoint"},
    {"rtn", "checkpoint"},
    {"aqlm", "checkpoint"},
    {"gptq_marlin_24", "checkpoint"},
    {"mxfp4", "mxfp4"},
}};

// The names FindWeightFormat reads itself (aliases after their format).
constexpr std::array<std::string_view, 30> kLayouts = {
    "fp32",      "float32",  "float",         "fp16",     "float16",       "half",
    "bf16",      "bfloat16", "fp8",           "fp8_e4m3", "fp8-static",    "fp8-channel",
    "int8",      "w8a8",     "int4",          "awq",      "gptq",          "w4a16",
    "gptq-int8", "ct-w8a8",  "ct-w8a16",      "ct-w4a16", "ct-w4a16-asym", "nvfp4",
    "mxfp4",     "bnb-nf4",  "bnb-nf4-plain", "bnb-int8", "experts-int8",  "checkpoint"};

WeightFormat Layout(std::string_view name, uint64_t g) {
  WeightFormat f;
  if (name == "fp32" || name == "float32" || name == "float") {
    f = Format("fp32", 32, 0, 0, 0, 0, 4);
  } else if (name == "fp16" || name == "float16" || name == "half") {
    f = Format("fp16", 16, 0, 0, 0, 0, 2);
  } else if (name == "bf16" || name == "bfloat16") {
    f = Format("bf16", 16, 0, 0, 0, 0, 2);
  } else if (name == "fp8" || name == "fp8_e4m3") {
    f = Format("fp8", 8, 0, 0, 0, 4, 2);  // one fp32 scale per tensor
  } else if (name == "fp8-static") {
    // ModelOpt FP8, compressed-tensors fp8 "tensor": fp32 weight_scale and input_scale.
    f = Format("fp8", 8, 0, 0, 0, 8, 2);
  } else if (name == "fp8-channel") {
    // compressed-tensors FP8-dynamic: a 16-bit weight_scale per output channel.
    f = Format("fp8", 8, 0, 0, 2, 0, 2);
  } else if (name == "int8" || name == "w8a8") {
    f = Format("int8", 8, 0, 0, 4, 0, 2);  // an fp32 scale per output channel
  } else if (name == "ct-w8a8") {
    // compressed-tensors int 8-bit per channel, int-quantized (W8A8-INT8): the
    // int8 weight and a weight_scale per output row in the checkpoint's 16-bit
    // dtype (compressed-tensors makes int and fp8 scales in the weight's dtype).
    f = Format("int8", 8, 0, 0, 2, 0, 2);
  } else if (name == "ct-w8a16") {
    // pack-quantized (W8A16): the same bytes packed four to an int32, the
    // 16-bit scale per row, and an int64[2] weight_shape per matrix.
    f = Format("int8", 8, 0, 0, 2, 16, 2);
  } else if (name == "int4" || name == "awq" || name == "w4a16") {
    f = Format("int4", 4, g, 16 + 4, 0, 0, 2);  // fp16 scale + 4-bit zero per group
  } else if (name == "gptq") {
    // AutoGPTQ / GPTQModel: qweight, qzeros (4 bits per group and output),
    // fp16 scales, and an int32 g_idx per input whether or not desc_act.
    f = Format("int4", 4, g, 16 + 4, 0, 0, 2);
    f.col_bits = 32;
  } else if (name == "gptq-int8") {
    f = Format("int8", 8, g, 16 + 8, 0, 0, 2);
    f.col_bits = 32;
  } else if (name == "ct-w4a16" || name == "ct-w4a16-asym") {
    // compressed-tensors pack-quantized: int32-packed weight, a 16-bit scale
    // per group (plus a packed 4-bit zero when asymmetric) and an int64[2]
    // weight_shape per matrix.
    f = Format("int4", 4, g, name == "ct-w4a16" ? 16 : 16 + 4, 0, 16, 2);
  } else if (name == "nvfp4") {
    f = Format("nvfp4", 4, 16, 8, 0, 4, 2);  // fp8 scale per 16, fp32 global scale
  } else if (name == "mxfp4") {
    f = Format("mxfp4", 4, 32, 8, 0, 0, 2);  // e8m0 scale per 32
  } else if (name == "bnb-nf4") {
    // bitsandbytes 4-bit with double quantization: a uint8 absmax per 64
    // weights, an fp32 one per 256 of those, and the 16- and 256-entry fp32
    // quantization maps per matrix.
    f = Format("int4", 4, 64, 8, 0, (16 + 256) * 4, 2);
    f.group2_elems = 64 * 256;
    f.group2_bits = 32;
  } else if (name == "bnb-nf4-plain") {
    f = Format("int4", 4, 64, 32, 0, 16 * 4, 2);  // an fp32 absmax per 64
  } else if (name == "bnb-int8") {
    f = Format("int8", 8, 0, 0, 4, 0, 2);  // LLM.int8(): an fp32 SCB per output row
  } else if (name == "experts-int8") {
    // vLLM's experts_int8: the MoE experts in int8 with an fp32 scale per
    // output row, quantized at load; everything else stays 16-bit.
    f = Format("int8", 8, 0, 0, 4, 0, 2);
    f.parts = {TensorPart::kExperts};
  } else if (name == "checkpoint") {
    f = Format("checkpoint", 16, 0, 0, 0, 0, 2);
  } else {
    return f;  // name stays empty: unknown
  }
  const bool plain = name == f.name || name == "float32" || name == "float" || name == "float16" ||
                     name == "half" || name == "bfloat16" || name == "fp8_e4m3" || name == "w8a8" ||
                     name == "awq" || name == "w4a16";
  if (!plain) f.scheme = std::string(name);
  return f;
}

}  // namespace

std::string KnownWeightFormats() {
  std::vector<std::string_view> names(kLayouts.begin(), kLayouts.end() - 1);  // not "checkpoint"
  for (const MethodAlias& m : kMethods) {
    if (std::find(names.begin(), names.end(), m.method) == names.end()) names.push_back(m.method);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

WeightFormat FindWeightFormat(std::string_view name, uint64_t group_size) {
  if (group_size == 0) group_size = 128;
  std::string_view layout = name;
  for (const MethodAlias& m : kMethods) {
    if (m.method == name) layout = m.layout;
  }
  WeightFormat f = name == "checkpoint" ? WeightFormat{} : Layout(layout, group_size);
  if (f.name.empty()) Fail("unknown weight dtype '{}' (known: {})", name, KnownWeightFormats());
  if (f.name == "checkpoint") f.unmodelled = std::string(name);
  return f;
}

bool SameLayout(const WeightFormat& a, const WeightFormat& b) {
  return a.name == b.name && a.bits == b.bits && a.group_elems == b.group_elems &&
         a.group_scale_bits == b.group_scale_bits && a.row_scale_bytes == b.row_scale_bytes &&
         a.tensor_scale_bytes == b.tensor_scale_bytes && a.dense_bytes == b.dense_bytes &&
         a.block_edge == b.block_edge && a.block_scale_bits == b.block_scale_bits &&
         a.col_bits == b.col_bits && a.group2_elems == b.group2_elems &&
         a.group2_bits == b.group2_bits && a.parts == b.parts;
}

bool WeightFormat::Quantizes(TensorPart part) const {
  return parts.empty() || std::find(parts.begin(), parts.end(), part) != parts.end();
}

WeightFormat CheckpointWeightFormat(const QuantSpec& q) {
  WeightFormat f = FindWeightFormat(q.scheme.empty() ? q.format : q.scheme,
                                    q.group_size != 0 ? q.group_size : 128);
  if (q.block != 0) {
    f.tensor_scale_bytes = 0;  // block scales replace the tensor's one (vLLM weight_scale_inv)
    f.block_edge = q.block;
    f.block_scale_bits = 32;
  }
  for (const std::string& name : q.parts) {
    static const std::array<std::pair<std::string_view, TensorPart>, 5> kParts = {{
        {"attention", TensorPart::kAttention},
        {"mlp", TensorPart::kMlp},
        {"experts", TensorPart::kExperts},
        {"shared_experts", TensorPart::kSharedExperts},
        {"mamba", TensorPart::kMamba},
    }};
    const auto it =
        std::find_if(kParts.begin(), kParts.end(), [&](const auto& p) { return p.first == name; });
    if (it == kParts.end()) Fail("quantization parts: unknown part '{}'", name);
    f.parts.push_back(it->second);
  }
  return f;
}

WeightFormat ModelWeightFormat(const ModelSpec& m, std::string_view override_dtype,
                               uint64_t group_size) {
  if (!override_dtype.empty()) {
    WeightFormat f = FindWeightFormat(override_dtype, group_size);
    if (f.name == "checkpoint") {
      // The engine reads the format from the checkpoint.
      if (m.quantization) return CheckpointWeightFormat(*m.quantization);
      WeightFormat own = FindWeightFormat(m.weight_dtype, group_size);
      own.unmodelled = f.unmodelled;
      return own;
    }
    if (m.quantization && f.name == m.quantization->format) {
      return CheckpointWeightFormat(*m.quantization);
    }
    return f;
  }
  if (m.quantization) return CheckpointWeightFormat(*m.quantization);
  return FindWeightFormat(m.weight_dtype, group_size);
}

std::string WeightFormatLabel(const WeightFormat& f) {
  std::vector<std::string> notes;
  if (!f.scheme.empty()) notes.push_back(f.scheme);
  if (f.block_edge != 0) notes.push_back(fmt::format("{0}x{0} blocks", f.block_edge));
  if ((f.name == "int4" || f.col_bits != 0) && f.group_elems != 128 && f.group2_elems == 0 &&
      f.scheme != "bnb-nf4-plain") {
    notes.push_back(fmt::format("groups of {}", f.group_elems));
  }
  if (!f.parts.empty()) {
    std::string parts;
    for (TensorPart p : f.parts) {
      if (!parts.empty()) parts += ", ";
      parts += TensorPartName(p);
    }
    notes.push_back(parts + " only");  // the rest in 16 bits
  }
  if (notes.empty()) return f.name;
  return fmt::format("{} ({})", f.name, fmt::join(notes, "; "));
}

std::string_view TensorPartName(TensorPart part) {
  static constexpr std::array<std::string_view, 12> kNames = {
      "embedding", "positions",      "lm_head", "final_norm", "attention", "mlp",
      "experts",   "shared_experts", "router",  "mamba",      "norms",     "biases"};
  return kNames[static_cast<size_t>(part)];
}

}  // namespace kvplan
