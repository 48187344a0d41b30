// The per-sequence state of one attention-free layer (Mamba, Mamba-2, Gated
// DeltaNet, lightning attention), from the model's shapes: a short
// convolution's window of past inputs plus a recurrent matrix per head. Its
// size is fixed per sequence: it never grows with context.
#pragma once

#include <cstdint>
#include <string>

#include "spec/model_spec.h"

namespace kvplan {

/// Bytes per state element an engine keeps whatever the model says (0: the
/// model's): llama.cpp holds both parts in f32, SGLang the conv in bf16 and
/// the recurrent state in --mamba-ssm-dtype (float32).
/// `recurrent_default_bytes` applies only where the model names no
/// state_dtype (vLLM's --mamba-cache-dtype, which a model's own
/// mamba_ssm_dtype outranks).
struct StateDtypes {
  uint64_t conv_bytes = 0;
  uint64_t recurrent_bytes = 0;
  uint64_t recurrent_default_bytes = 0;
};

/// Bytes per element of a state dtype as the engines spell it (float32,
/// bfloat16, float16, or kvplan's fp32, bf16, fp16); 0 for "auto". Throws
/// Error naming `what` and the choices for anything else.
uint64_t StateDtypeBytes(const std::string& name, const std::string& what);

/// One layer's state on one tensor-parallel rank.
struct StateShape {
  StateForm form = StateForm::kGiven;
  uint64_t conv_channels = 0;       // channels the convolution keeps (0: no conv state)
  uint64_t conv_window = 0;         // past inputs kept per channel: kernel - 1
  uint64_t recurrent_elements = 0;  // the SSM / linear-attention state
  uint64_t conv_bytes = 0;          // bytes per conv element: the model's 16-bit dtype
  uint64_t element_bytes = 0;       // bytes per recurrent element: state_dtype (0 for kGiven)
  uint64_t given_bytes = 0;         // kGiven: the written state_bytes on this rank

  uint64_t ConvElements() const { return conv_channels * conv_window; }
  /// Bytes of the layer's state (checked; kGiven: given_bytes).
  uint64_t Bytes() const;
  /// The arithmetic, e.g. "8,192 x 3 conv x 2 B + 524,288 recurrent x 4 B".
  std::string Arithmetic() const;
};

/// The state form a model's state groups have: from its linear_attention
/// block, else its mamba block's version, else kGiven.
StateForm ModelStateForm(const ModelSpec& m);

/// The state of one layer of state group `g` on one of `tp` ranks: the
/// convolution window in the model's dtype, the recurrent state in the
/// group's state_dtype, unless `dtypes` says otherwise. Throws Error naming the dimension
/// when tp does not divide it.
StateShape LayerState(const ModelSpec& m, const LayerGroup& g, uint64_t tp,
                      StateDtypes dtypes = {});

}  // namespace kvplan
