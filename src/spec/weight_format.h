// Weight formats: how a checkpoint stores its linear layers (bits per
// element, scale groups, blocks, which parts are quantized). The bytes a
// model's tensors take in a format are computed in plan/weights.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spec/model_spec.h"

namespace kvplan {

enum class TensorPart {
  kEmbedding,
  kPositions,
  kLmHead,
  kFinalNorm,
  kAttention,
  kMlp,
  kExperts,
  kSharedExperts,
  kRouter,
  kMamba,
  kNorm,
  kBias,
};

/// How a weight format stores a linear layer's matrix.
struct WeightFormat {
  std::string name;                 // fp32, fp16, bf16, fp8, int8, int4, nvfp4, mxfp4
  uint64_t bits = 16;               // bits per element before scales
  uint64_t group_elems = 0;         // elements per scale group along the input dim (0: none)
  uint64_t group_scale_bits = 0;    // bits of scale (+ zero point) per group
  uint64_t row_scale_bytes = 0;     // bytes of scale per output row (int8 per channel)
  uint64_t tensor_scale_bytes = 0;  // bytes per matrix (fp8 per-tensor scale)
  uint64_t dense_bytes = 2;         // bytes per element of tensors that are never quantized
  uint64_t block_edge = 0;          // 2-D blocks: one scale per block_edge x block_edge (0: none)
  uint64_t block_scale_bits = 0;
  uint64_t col_bits = 0;          // bits per input feature per matrix (GPTQ's int32 g_idx)
  uint64_t group2_elems = 0;      // a second scale level: one per group2_elems inputs (0: none)
  uint64_t group2_bits = 0;       // (bitsandbytes' nested absmax)
  std::string scheme;             // the stored layout when it is not the plain one of `name`:
                                  // gptq, ct-w4a16, fp8-channel, bnb-nf4, ... ("": plain)
  std::string unmodelled;         // set: the engine's --quantization method, which takes its
                                  // format from the checkpoint and kvplan does not size; the
                                  // format is then the model's own dtype
  std::vector<TensorPart> parts;  // the linear parts it quantizes; empty: every one
                                  // (the others take dense_bytes)

  /// True when linear layers of `part` are stored in this format.
  bool Quantizes(TensorPart part) const;

  /// True for every format but the floats (fp32, fp16, bf16).
  bool Quantized() const { return name != "fp32" && name != "fp16" && name != "bf16"; }
};

/// The format for `name`: a model dtype (fp32, fp16, bf16, fp8, int8, int4,
/// nvfp4, mxfp4; also w8a8 = int8, w4a16 = int4), a stored layout (awq,
/// gptq, gptq-int8, ct-w8a8, ct-w8a16, ct-w4a16, ct-w4a16-asym, fp8-static, fp8-channel,
/// bnb-nf4, bnb-nf4-plain, bnb-int8, experts-int8) or a vLLM --quantization
/// method (awq_marlin, gptq_marlin, marlin, modelopt, modelopt_fp4,
/// bitsandbytes, experts_int8, ...; those that read the format from the
/// checkpoint, such as compressed-tensors and gguf, give name "checkpoint").
/// int4 keeps an fp16 scale and a 4-bit zero point per `group_size` inputs
/// (AWQ; GPTQ adds an int32 g_idx per input); int8 an fp32 scale per output
/// channel; fp8 one scale per tensor; nvfp4 an fp8 scale per 16 elements;
/// mxfp4 an e8m0 scale per 32. Throws Error listing every accepted name when
/// unknown.
WeightFormat FindWeightFormat(std::string_view name, uint64_t group_size = 128);

/// The published checkpoint's format (the model's `quantization:` block):
/// fp8 with 128 x 128 blocks keeps one fp32 scale per block (DeepSeek's
/// weight_block_size); `parts` limits it to those linear layers (gpt-oss:
/// MXFP4 experts, 16-bit attention).
WeightFormat CheckpointWeightFormat(const QuantSpec& quantization);

/// Every name FindWeightFormat accepts, comma-separated, for messages.
std::string KnownWeightFormats();

/// True for two formats that store a model in the same bytes.
bool SameLayout(const WeightFormat& a, const WeightFormat& b);

/// The weights' format: `override_dtype` when given (the checkpoint's own
/// format when it names the same type, as an engine reads the checkpoint's
/// blocks and parts), else the checkpoint's quantization, else the model's
/// weight_dtype. A method that reads the format from the checkpoint
/// (compressed-tensors, gguf, ...) is the checkpoint's quantization, or the
/// model's dtype with `unmodelled` set when kvplan has none. Throws Error for
/// an unknown name.
WeightFormat ModelWeightFormat(const ModelSpec& model, std::string_view override_dtype,
                               uint64_t group_size = 128);

/// "fp8", "fp8 (128x128 blocks)", "mxfp4 (experts only)".
std::string WeightFormatLabel(const WeightFormat& format);

/// "embedding", "attention", ... for tables.
std::string_view TensorPartName(TensorPart part);

}  // namespace kvplan
