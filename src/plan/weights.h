// Weights: parameter counts computed from a model's architecture, and the
// bytes they take per GPU in a given weight format, split the way vLLM splits
// them over tensor-parallel ranks and pipeline stages.
//
// A model is described as a list of tensors (one row per matrix or vector
// kind, per layer), each saying how tensor parallelism splits it and whether
// quantization applies to it (linear layers only: embeddings, norms, routers,
// convolutions and biases stay in 16-bit). docs/capacity.md lists the rules.
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
  std::string name;             // fp32, fp16, bf16, fp8, int8, int4, nvfp4, mxfp4
  uint64_t bits = 16;           // bits per element before scales
  uint64_t group_elems = 0;     // elements per scale group along the input dim (0: none)
  uint64_t group_scale_bits = 0;  // bits of scale (+ zero point) per group
  uint64_t row_scale_bytes = 0;   // bytes of scale per output row (int8 per channel)
  uint64_t tensor_scale_bytes = 0;  // bytes per matrix (fp8 per-tensor scale)
  uint64_t dense_bytes = 2;     // bytes per element of tensors that are never quantized
  uint64_t block_edge = 0;      // 2-D blocks: one scale per block_edge x block_edge (0: none)
  uint64_t block_scale_bits = 0;
  std::vector<TensorPart> parts;  // the linear parts it quantizes; empty: every one
                                  // (the others take dense_bytes)

  /// True when linear layers of `part` are stored in this format.
  bool Quantizes(TensorPart part) const;

  /// True for every format but the floats (fp32, fp16, bf16).
  bool Quantized() const { return name != "fp32" && name != "fp16" && name != "bf16"; }
};

/// The format for `name` (model dtype names: fp32, fp16, bf16, fp8, int8,
/// int4, nvfp4, mxfp4; also w8a8 = int8, awq/gptq = int4). int4 keeps an fp16
/// scale and a 4-bit zero point per `group_size` inputs (GPTQ/AWQ); int8 an
/// fp32 scale per output channel; fp8 one scale per tensor; nvfp4 an fp8
/// scale per 16 elements; mxfp4 an e8m0 scale per 32. Throws Error when unknown.
WeightFormat FindWeightFormat(std::string_view name, uint64_t group_size = 128);

/// The published checkpoint's format (the model's `quantization:` block):
/// fp8 with 128 x 128 blocks keeps one fp32 scale per block (DeepSeek's
/// weight_block_size); `parts` limits it to those linear layers (gpt-oss:
/// MXFP4 experts, 16-bit attention).
WeightFormat CheckpointWeightFormat(const QuantSpec& quantization);

/// The weights' format: `override_dtype` when given (the checkpoint's own
/// format when it names the same type, as an engine reads the checkpoint's
/// blocks and parts), else the checkpoint's quantization, else the model's
/// weight_dtype. Throws Error for an unknown name.
WeightFormat ModelWeightFormat(const ModelSpec& model, std::string_view override_dtype,
                               uint64_t group_size = 128);

/// "fp8", "fp8 (128x128 blocks)", "mxfp4 (experts only)".
std::string WeightFormatLabel(const WeightFormat& format);

/// "embedding", "attention", ... for tables.
std::string_view TensorPartName(TensorPart part);

/// How tensor parallelism divides a tensor over tp ranks.
enum class TpSplit {
  kColumn,      // output rows split (q/k/v/gate/up, in_proj): ceil(rows / tp) rows each
  kRow,         // input columns split (o/down/out_proj): ceil(cols / tp) columns each
  kKvHeads,     // k/v rows: KvHeadsPerRank(kv_heads, tp) heads each (replicated when tp > kv_heads)
  kVocab,       // embedding / lm_head rows: vocab padded to 64, then / tp (vLLM VocabParallelEmbedding)
  kReplicated,  // every rank holds all of it (norms, router, MLA down-projections)
};

/// One weight tensor kind of one layer (or of the whole model), `copies` times.
struct WeightTensor {
  TensorPart part = TensorPart::kAttention;
  std::string_view name;   // e.g. "q_proj", "down_proj" (a literal; `part` says whose)
  uint64_t rows = 0;       // output features (1 for vectors)
  uint64_t cols = 0;       // input features (length for vectors)
  uint64_t copies = 1;     // e.g. routed experts
  bool linear = false;     // a matmul weight: quantized with the weight format
  TpSplit split = TpSplit::kReplicated;
  uint64_t kv_heads = 0;   // kKvHeads: the model's KV heads (rows = kv_heads * head_dim)
  uint64_t fused = 1;      // matrices stacked along rows, each split alike (gate + up: 2)

  uint64_t Params() const { return rows * cols * copies; }
};

/// The model as tensors: model-level ones (embedding, positions, lm_head,
/// final norm) and one list per layer.
struct ModelTensors {
  std::vector<WeightTensor> model;               // embedding, lm_head, final norm
  std::vector<std::vector<WeightTensor>> layers;  // layers[i]: every tensor of layer i
  bool from_architecture = false;  // false: only `params` known; spread evenly over layers
};

/// Tensors of `model` from its architecture fields (vocab_size,
/// intermediate_size, tie_embeddings, mlp, attention_bias, norm, moe, mla,
/// mamba). When vocab_size or intermediate_size (dense models) is missing,
/// falls back to `params` spread evenly over layers (from_architecture false).
ModelTensors BuildModelTensors(const ModelSpec& model);

/// Parameters counted from the architecture: sum of every tensor.
uint64_t CountParams(const ModelTensors& tensors);

/// Parameters by part (whole model), in TensorPart order, zero parts omitted.
std::vector<std::pair<TensorPart, uint64_t>> ParamsByPart(const ModelTensors& tensors);

/// Bytes one tensor takes on one of `tp` ranks in `format`.
uint64_t TensorBytes(const WeightTensor& t, const WeightFormat& format, uint64_t tp);

/// Weight bytes of one GPU of one pipeline stage: layers [first, first+n),
/// plus the embedding on the first stage and lm_head + final norm on the last
/// (a tied lm_head lives with the embedding on a single stage, and is a
/// second copy on the last stage when pp > 1, as vLLM loads it).
uint64_t StageWeightBytes(const ModelTensors& tensors, const WeightFormat& format, uint64_t tp,
                          uint64_t first_layer, uint64_t layers, bool first_stage,
                          bool last_stage);

/// Where `format`'s 2-D blocks do not tile a tensor-parallel slice, as vLLM
/// requires of block-quantized fp8 (validate_fp8_block_shape; the MoE
/// experts' per-rank width alike): a message naming the first such tensor,
/// or "" when every split tensor's slice is a whole number of blocks.
std::string BlockTilingError(const ModelTensors& tensors, const WeightFormat& format, uint64_t tp);

/// Weight bytes of the whole model on one GPU (tp = 1, pp = 1).
uint64_t ModelWeightBytes(const ModelTensors& tensors, const WeightFormat& format);

/// Bytes of `params` parameters in `format` without the architecture
/// (params * bits / 8, plus group scales): the quick estimate.
uint64_t WeightBytesFromParams(uint64_t params, const WeightFormat& format);

}  // namespace kvplan
