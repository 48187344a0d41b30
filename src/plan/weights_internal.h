// The pieces weights.cpp and weights_mixers.cpp share: building one tensor,
// and the mixers of attention-free layers. Nothing outside src/plan/weights*.cpp
// includes it; the public API is plan/weights.h.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "plan/weights.h"
#include "spec/model_spec.h"

namespace kvplan {

/// A weight matrix of rows x cols (a linear layer), `copies` times.
WeightTensor Linear(TensorPart part, std::string_view name, uint64_t rows, uint64_t cols,
                    TpSplit split, uint64_t copies = 1);

/// A vector of `length` parameters (norms, biases, per-head scalars).
WeightTensor Vector(TensorPart part, std::string_view name, uint64_t length, TpSplit split,
                    uint64_t copies = 1);

/// Mamba (vLLM's MambaMixer): in/x/dt projections, conv, A and D, out_proj.
void AddMamba(const ModelSpec& m, std::vector<WeightTensor>& out);

/// Mamba-2 (vLLM's MambaMixer2).
void AddMamba2(const ModelSpec& m, std::vector<WeightTensor>& out);

/// Gated DeltaNet or lightning attention, as the model's linear_attention block says.
void AddLinearAttention(const ModelSpec& m, std::vector<WeightTensor>& out);

}  // namespace kvplan
