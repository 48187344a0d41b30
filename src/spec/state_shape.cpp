#include "spec/state_shape.h"

#include <fmt/format.h>

#include "util/checked.h"
#include "util/units.h"

namespace kvplan {
namespace {

/// `value / tp`, or an error naming what tp must divide.
uint64_t Split(uint64_t value, uint64_t tp, std::string_view what, const ModelSpec& m) {
  if (tp == 0 || value % tp != 0) {
    Fail("tensor parallel size {} does not divide the {} {} of {}", tp, value, what, m.name);
  }
  return value / tp;
}

}  // namespace

std::string_view StateFormName(StateForm form) {
  switch (form) {
    case StateForm::kGiven:
      return "given";
    case StateForm::kMamba:
      return "mamba";
    case StateForm::kMamba2:
      return "mamba2";
    case StateForm::kGatedDeltaNet:
      return "gated_deltanet";
    case StateForm::kLightning:
      return "lightning";
  }
  return "?";
}

uint64_t StateShape::Bytes() const {
  if (form == StateForm::kGiven) return given_bytes;
  const uint64_t conv = CheckedMul(CheckedMul(conv_channels, conv_window, "state elements"),
                                   conv_bytes, "state bytes");
  return CheckedAdd(conv, CheckedMul(recurrent_elements, element_bytes, "state bytes"),
                    "state bytes");
}

std::string StateShape::Arithmetic() const {
  if (form == StateForm::kGiven) return fmt::format("{} B (state_bytes)", WithCommas(given_bytes));
  const std::string recurrent =
      fmt::format("{} recurrent x {} B", WithCommas(recurrent_elements), element_bytes);
  if (conv_channels == 0) return recurrent;
  if (conv_bytes == element_bytes) {
    return fmt::format("({} x {} conv + {} recurrent) x {} B", WithCommas(conv_channels),
                       conv_window, WithCommas(recurrent_elements), element_bytes);
  }
  return fmt::format("{} x {} conv x {} B + {}", WithCommas(conv_channels), conv_window, conv_bytes,
                     recurrent);
}

uint64_t StateDtypeBytes(const std::string& name, const std::string& what) {
  if (name == "auto") return 0;
  if (name == "float32" || name == "fp32") return 4;
  if (name == "bfloat16" || name == "bf16" || name == "float16" || name == "fp16" ||
      name == "half") {
    return 2;
  }
  Fail("{}: '{}' is not a state dtype (auto, float32, bfloat16, float16)", what, name);
}

StateForm ModelStateForm(const ModelSpec& m) {
  if (m.linear_attention) {
    return m.linear_attention->kind == "lightning" ? StateForm::kLightning
                                                   : StateForm::kGatedDeltaNet;
  }
  if (m.mamba) return m.mamba->version == 2 ? StateForm::kMamba2 : StateForm::kMamba;
  return StateForm::kGiven;
}

StateShape LayerState(const ModelSpec& m, const LayerGroup& g, uint64_t tp, StateDtypes dtypes) {
  StateShape s;
  s.form = g.state_form;
  s.element_bytes = dtypes.recurrent_bytes != 0 ? dtypes.recurrent_bytes
                    : dtypes.recurrent_default_bytes != 0 && !g.state_dtype_given
                        ? dtypes.recurrent_default_bytes
                        : g.state_dtype_bytes;
  s.conv_bytes = dtypes.conv_bytes != 0 ? dtypes.conv_bytes : (m.weight_dtype == "fp32" ? 4 : 2);
  switch (g.state_form) {
    case StateForm::kGiven:
      s.element_bytes = s.conv_bytes = 0;
      s.given_bytes = CeilDiv(g.state_bytes, tp);
      break;
    case StateForm::kMamba: {
      // Mamba-1: conv state d_inner x (d_conv - 1), SSM state d_inner x d_state;
      // both split with d_inner.
      const MambaSpec& mb = *m.mamba;
      const uint64_t inner = Split(CheckedMul(mb.expand, m.hidden_size), tp, "Mamba channels", m);
      s.conv_channels = inner;
      s.conv_window = mb.d_conv - 1;
      s.recurrent_elements = CheckedMul(inner, mb.d_state, "state elements");
      break;
    }
    case StateForm::kMamba2: {
      // Mamba-2: the convolution runs over x, B and C (d_inner + 2 x groups x
      // d_state channels); the SSM keeps head_dim x d_state per head. A single
      // group that tp does not divide is replicated to one per rank (vLLM's
      // extra_groups_for_head_shards); more groups must split evenly.
      const MambaSpec& mb = *m.mamba;
      const uint64_t heads = Split(mb.heads, tp, "Mamba-2 heads", m);
      if (mb.groups % tp != 0 && mb.groups != 1) {
        Fail(
            "tensor parallel size {} does not divide the {} Mamba-2 groups of {} (only a single "
            "group is replicated across ranks)",
            tp, mb.groups, m.name);
      }
      const uint64_t groups = mb.groups % tp == 0 ? mb.groups : tp;
      const uint64_t channels =
          CheckedAdd(CheckedMul(mb.heads, mb.head_dim),
                     CheckedMul(CheckedMul(2, groups), mb.d_state), "state elements");
      s.conv_channels = Split(channels, tp, "Mamba-2 conv channels", m);
      s.conv_window = mb.d_conv - 1;
      s.recurrent_elements =
          CheckedMul(CheckedMul(heads, mb.head_dim), mb.d_state, "state elements");
      break;
    }
    case StateForm::kGatedDeltaNet: {
      // Gated DeltaNet: a causal convolution over q, k and v (2 x key_heads x
      // key_head_dim + value_heads x value_head_dim channels), and per value
      // head a key_head_dim x value_head_dim matrix.
      const LinearAttentionSpec& la = *m.linear_attention;
      Split(la.key_heads, tp, "linear-attention key heads", m);
      const uint64_t vheads = Split(la.value_heads, tp, "linear-attention value heads", m);
      const uint64_t channels =
          CheckedAdd(CheckedMul(CheckedMul(2, la.key_heads), la.key_head_dim),
                     CheckedMul(la.value_heads, la.value_head_dim), "state elements");
      s.conv_channels = Split(channels, tp, "linear-attention conv channels", m);
      s.conv_window = la.conv_kernel - 1;
      s.recurrent_elements =
          CheckedMul(CheckedMul(vheads, la.key_head_dim), la.value_head_dim, "state elements");
      break;
    }
    case StateForm::kLightning: {
      // Lightning attention: per head a key_head_dim x value_head_dim matrix, no convolution.
      const LinearAttentionSpec& la = *m.linear_attention;
      const uint64_t heads = Split(la.value_heads, tp, "linear-attention heads", m);
      s.recurrent_elements =
          CheckedMul(CheckedMul(heads, la.key_head_dim), la.value_head_dim, "state elements");
      break;
    }
  }
  return s;
}

}  // namespace kvplan
