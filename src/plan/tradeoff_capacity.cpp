#include "plan/tradeoff_capacity.h"

#include "util/error.h"
#include "util/units.h"

namespace kvplan {

uint64_t TradeoffContextCap(const ModelSpec& m, const CapacityResult& cap,
                            bool max_model_len_given) {
  if (cap.config.engine == Engine::kLlamaCpp && !max_model_len_given) {
    return m.max_context;
  }
  return cap.max_model_len;
}

TradeoffInput TradeoffInputFor(const ModelSpec& m, const CapacityResult& cap,
                               bool max_model_len_given) {
  TradeoffInput in;
  in.num_blocks = cap.PlannedBlocks();  // vLLM from 0.29: the null block left out
  in.block_size = cap.block_size;
  in.max_context = TradeoffContextCap(m, cap, max_model_len_given);
  in.blocks_for_request = [&cap](uint64_t n) { return cap.BlocksForRequest(n); };
  if (cap.config.engine == Engine::kLlamaCpp) {
    // The same fit as capacity --concurrency: n_parallel sequences share the window cells.
    in.fits = [&cap](uint64_t n, uint64_t b) { return cap.FitsAtConcurrency(n, b); };
  }
  return in;
}

void CheckContextsFit(const std::vector<uint64_t>& contexts, uint64_t max_context) {
  for (uint64_t c : contexts) {
    if (c > max_context) {
      Fail("--contexts: {} is longer than max_model_len {} (raise --max-model-len)", WithCommas(c),
           WithCommas(max_context));
    }
  }
}

}  // namespace kvplan
