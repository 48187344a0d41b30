// Speculative decoding's memory: the draft's KV cache and weights, which the
// engines keep beside the target's on the last pipeline stage. vLLM registers
// a draft's attention layers in the same KV-cache config (so a block holds
// their pages too) and loads the draft inside the memory profile (so its
// weights come out of the budget); TensorRT-LLM sizes target and draft pools
// to the same token count, which is the same arithmetic per token. MTP layers
// (DeepSeek's num_nextn_predict_layers) are the model's last layer again,
// with the MTP module's own projection, norms, embedding and head as the
// checkpoint stores them. The common flow (capacity.cpp) calls it.
#include "plan/capacity_internal.h"
#include "util/checked.h"

namespace kvplan {
namespace {

/// `extra`'s groups appended to `kv` `times` over.
void AddKvCost(KvCost& kv, const KvCost& extra, uint64_t times) {
  for (GroupCost g : extra.groups) {
    g.layers = CheckedMul(g.layers, times, "draft layers");
    g.per_token_bytes = CheckedMul(g.per_token_bytes, times, "draft bytes per token");
    g.fixed_bytes = CheckedMul(g.fixed_bytes, times, "draft state bytes");
    kv.groups.push_back(g);
  }
  kv.per_token_bytes = CheckedAdd(kv.per_token_bytes,
                                  CheckedMul(extra.per_token_bytes, times, "draft bytes per token"),
                                  "bytes per token");
  kv.fixed_bytes = CheckedAdd(kv.fixed_bytes, CheckedMul(extra.fixed_bytes, times, "draft state"),
                              "state bytes");
}

}  // namespace

uint64_t AddSpeculative(const ModelSpec& m, const ModelTensors& tensors, const WeightFormat& format,
                        const CacheDtype& dtype, const EngineConfig& c, const WeightSplit& split,
                        uint64_t attention_tp, KvCost& kv) {
  uint64_t weights = 0;
  if (c.mtp_layers != 0) {
    // One more layer like the last, per MTP layer: its cache and weights.
    const uint64_t last = m.layers - 1;
    AddKvCost(kv, ComputeKvCost(StageModel(m, last, 1), dtype, attention_tp, EngineStateDtypes(c)),
              c.mtp_layers);
    const uint64_t layer = StageWeightBytes(tensors, format, split, last, 1, false, false);
    // The MTP module's own: eh_proj (2h -> h, unsplit), enorm, hnorm and the
    // head's norm (h each, 16-bit), and its embedding and head (vocab-parallel).
    const uint64_t h = m.hidden_size;
    const uint64_t own = CheckedAdd(
        CheckedMul(CheckedMul(2 * h, h, "eh_proj"), 2, "eh_proj bytes"),
        CheckedAdd(CheckedMul(3 * h, 2, "MTP norms"),
                   StageWeightBytes(tensors, format, split, 0, 0, true, true), "MTP head"),
        "MTP weights");
    weights = CheckedMul(CheckedAdd(layer, own, "MTP layer"), c.mtp_layers, "MTP weights");
  }
  if (c.draft_model) {
    const ModelSpec& d = *c.draft_model;
    CheckKvConfig(d, dtype, attention_tp);
    AddKvCost(kv, ComputeKvCost(d, dtype, attention_tp, EngineStateDtypes(c)), 1);
    const ModelTensors dt = BuildModelTensors(d);
    const uint64_t draft =
        StageWeightBytes(dt, ResolvedWeightFormat(d, EngineConfig{}),
                         WeightSplit{split.tp, split.attention_tp, 0}, 0, d.layers, true, true);
    weights = CheckedAdd(weights, draft, "draft weights");
  }
  return weights;
}

}  // namespace kvplan
