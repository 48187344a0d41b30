// Fuzzes the model spec reader (ParseModelYaml: YAML -> validated ModelSpec)
// and then every function plan/ runs on a spec the reader accepted: the KV
// cost for every cache dtype and a few tensor-parallel sizes, the layer map,
// --explain and the weights in the checkpoint's format. A validated spec must never make those
// crash or loop.
#include "fuzz_common.h"
#include "plan/kv.h"
#include "plan/weights.h"
#include "report/explain.h"
#include "spec/cache_dtype.h"
#include "spec/model_reader.h"

using namespace kvplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ModelSpec m;
  try {
    m = ParseModelYaml(fuzz::AsText(data, size), "fuzz.yaml");
  } catch (const Error& e) {
    fuzz::CheckMessage(e);
    return 0;
  }
  fuzz::Require(!m.groups.empty(), "validated spec has no layer group");
  fuzz::Require(m.LayerToGroup().size() == m.layers, "layer map size differs from layers");
  (void)m.AttentionKind();
  for (const CacheDtype& dtype : AllCacheDtypes()) {
    for (uint64_t tp : {1, 2, 8}) {
      try {
        CheckKvConfig(m, dtype, tp);
        KvCost cost = ComputeKvCost(m, dtype, tp);
        fuzz::Require(cost.groups.size() == m.groups.size(), "one cost per layer group");
        uint64_t seq = cost.SequenceBytes(m.max_context);
        (void)cost.TotalBytes(m.max_context, 4);
        if (seq != 0) (void)cost.MaxTokensPerSequence(seq);
        if (tp == 1) (void)ExplainSize(m, dtype, cost, m.max_context, 1, cost);
      } catch (const Error& e) {
        fuzz::CheckMessage(e);
      }
    }
  }
  try {
    const ModelTensors tensors = BuildModelTensors(m);
    const WeightFormat format = ModelWeightFormat(m, "");
    (void)WeightFormatLabel(format);
    for (uint64_t tp : {1, 3, 8}) {
      (void)StageWeightBytes(tensors, format, tp, 0, tensors.layers.size(), true, true);
    }
  } catch (const Error& e) {
    fuzz::CheckMessage(e);
  }
  return 0;
}
