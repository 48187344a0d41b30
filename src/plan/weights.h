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
#include "spec/weight_format.h"

namespace kvplan {

/// How tensor parallelism divides a tensor over tp ranks.
enum class TpSplit {
  kColumn,   // output rows split (q/k/v/gate/up, in_proj): ceil(rows / tp) rows each
  kRow,      // input columns split (o/down/out_proj): ceil(cols / tp) columns each
  kKvHeads,  // k/v rows: KvHeadsPerRank(kv_heads, tp) heads each (replicated when tp > kv_heads)
  kVocab,  // embedding / lm_head rows: vocab padded to 64, then / tp (vLLM VocabParallelEmbedding)
  kReplicated,  // every rank holds all of it (norms, router, MLA down-projections)
};

/// One weight tensor kind of one layer (or of the whole model), `copies` times.
struct WeightTensor {
  TensorPart part = TensorPart::kAttention;
  std::string_view name;  // e.g. "q_proj", "down_proj" (a literal; `part` says whose)
  uint64_t rows = 0;      // output features (1 for vectors)
  uint64_t cols = 0;      // input features (length for vectors)
  uint64_t copies = 1;    // e.g. routed experts
  bool linear = false;    // a matmul weight: quantized with the weight format
  TpSplit split = TpSplit::kReplicated;
  uint64_t kv_heads = 0;  // kKvHeads: the model's KV heads (rows = kv_heads * head_dim)
  uint64_t fused = 1;     // matrices stacked along rows, each split alike (gate + up: 2)

  uint64_t Params() const { return rows * cols * copies; }
};

/// The model as tensors: model-level ones (embedding, positions, lm_head,
/// final norm) and one list per layer.
struct ModelTensors {
  std::vector<WeightTensor> model;                // embedding, lm_head, final norm
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

/// How one GPU's share of the weights is cut: every tensor over `tp` ranks,
/// except attention under data-parallel attention (SGLang
/// --enable-dp-attention, TensorRT-LLM enable_attention_dp: `attention_tp`
/// ranks, fewer than tp) and the routed experts under expert parallelism
/// (`expert_ranks` ranks each holding whole experts, none split).
struct WeightSplit {
  uint64_t tp = 1;
  uint64_t attention_tp = 0;  // 0: tp
  uint64_t expert_ranks = 0;  // 0: experts split over tp like any linear
};

/// Bytes one tensor takes on one of `tp` ranks in `format`.
uint64_t TensorBytes(const WeightTensor& t, const WeightFormat& format, uint64_t tp);

/// Bytes one tensor takes on one GPU under `split`.
uint64_t TensorBytes(const WeightTensor& t, const WeightFormat& format, const WeightSplit& split);

/// Weight bytes of one GPU of one pipeline stage: layers [first, first+n),
/// plus the embedding on the first stage and lm_head + final norm on the last
/// (a tied lm_head lives with the embedding on a single stage, and is a
/// second copy on the last stage when pp > 1, as vLLM loads it).
uint64_t StageWeightBytes(const ModelTensors& tensors, const WeightFormat& format, uint64_t tp,
                          uint64_t first_layer, uint64_t layers, bool first_stage, bool last_stage);

/// The same under `split` (data-parallel attention, expert parallelism).
uint64_t StageWeightBytes(const ModelTensors& tensors, const WeightFormat& format,
                          const WeightSplit& split, uint64_t first_layer, uint64_t layers,
                          bool first_stage, bool last_stage);

/// Where `format`'s 2-D blocks do not tile a tensor-parallel slice, as vLLM
/// requires of block-quantized fp8 (validate_fp8_block_shape; the MoE
/// experts' per-rank width alike): a message naming the first such tensor,
/// or "" when every split tensor's slice is a whole number of blocks.
std::string BlockTilingError(const ModelTensors& tensors, const WeightFormat& format, uint64_t tp);

/// Weight bytes of the whole model on one GPU (tp = 1, pp = 1).
uint64_t ModelWeightBytes(const ModelTensors& tensors, const WeightFormat& format);

/// True when the model carries its checkpoint's exact bytes
/// (checkpoint_bytes) and `format` stores the weights as the checkpoint does:
/// the checkpoint's own format, or an engine method kvplan does not size
/// (format.unmodelled). An override that changes the format (--weight-dtype,
/// --quantization of another method, fp32 run in bf16) is counted from the
/// architecture instead.
bool UsesCheckpointBytes(const ModelSpec& model, const WeightFormat& format);

/// `bytes` (one GPU's share counted from the architecture) scaled by
/// checkpoint_bytes / arch_total, rounded to the nearest byte: the exact
/// total spread over GPUs and stages the way the architecture spreads it.
uint64_t ScaleToCheckpoint(uint64_t bytes, uint64_t arch_total, uint64_t checkpoint_bytes);

/// Where the weight bytes come from, for reports: "exact: <checkpoint_bytes_from>",
/// "counted from the architecture" or "estimated from the parameter count".
std::string WeightBytesSource(const ModelSpec& model, const ModelTensors& tensors,
                              const WeightFormat& format);

/// Bytes of `params` parameters in `format` without the architecture
/// (params * bits / 8, plus group scales): the quick estimate.
uint64_t WeightBytesFromParams(uint64_t params, const WeightFormat& format);

}  // namespace kvplan
