// How tensor, pipeline and data parallelism divide a model over GPUs, the
// way vLLM does it (vllm/distributed/utils.py get_pp_indices).
#pragma once

#include <cstdint>
#include <vector>

namespace kvplan {

/// Layers on each pipeline stage: layers / pp each, with the remainder given
/// one each to the stages before the last, from the second-to-last backwards
/// (vLLM: the last stage also runs the norm and lm_head). 61 layers, pp 4 ->
/// 15, 15, 16, 15. Requires 1 <= pp.
std::vector<uint64_t> PipelineStageLayers(uint64_t layers, uint64_t pp);

/// The first layer index of `stage` under PipelineStageLayers.
uint64_t PipelineStageFirstLayer(uint64_t layers, uint64_t pp, uint64_t stage);

}  // namespace kvplan
