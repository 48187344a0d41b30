#include "plan/parallel.h"

namespace kvplan {

std::vector<uint64_t> PipelineStageLayers(uint64_t layers, uint64_t pp) {
  std::vector<uint64_t> parts(pp, layers / pp);
  // vLLM (get_pp_indices): partitions[-i] += 1 for i in 2 .. remainder + 1,
  // so the last stage, which also runs the final norm and lm_head, gets none.
  uint64_t remainder = layers % pp;
  for (uint64_t i = 2; i < remainder + 2; ++i) parts[pp - i] += 1;
  return parts;
}

uint64_t PipelineStageFirstLayer(uint64_t layers, uint64_t pp, uint64_t stage) {
  std::vector<uint64_t> parts = PipelineStageLayers(layers, pp);
  uint64_t first = 0;
  for (uint64_t s = 0; s < stage && s < pp; ++s) first += parts[s];
  return first;
}

}  // namespace kvplan
