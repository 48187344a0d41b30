// One latency question (a model on a GPU at a context, batch and prompt)
// and whether its step can be resident at all: weights + KV against the
// GPU's memory, and the batches the decode table walks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/latency.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"

namespace kvplan {

struct LatencySetup {
  ModelSpec model;
  HardwareSpec hw;
  ModelCost cost;
  std::string kv_dtype;
  uint64_t context = 0, batch = 0, prompt = 0;
};

/// Weights + KV on one rank at `batch` sequences: what must be resident for
/// the step to run at all (activations and the engine's reserve come on top,
/// so fitting here is necessary, not sufficient; kvplan capacity has the rest).
uint64_t ResidentBytes(const LatencySetup& s, uint64_t batch);

/// Every weight byte on one rank (dense, routed experts, lookup tables).
uint64_t WeightBytes(const LatencySetup& s);

/// False when weights + KV at `batch` exceed the GPU's memory (true when the
/// spec gives no memory size: nothing to test against).
bool Fits(const LatencySetup& s, uint64_t batch);

/// The batches of the decode table: powers of two up to `limit` (0: twice
/// the compute-bound batch, or 256, and at least the setup's batch), with
/// the setup's batch among them.
std::vector<uint64_t> TableBatches(const LatencySetup& s, uint64_t limit);

}  // namespace kvplan
