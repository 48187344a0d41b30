// The mixers of attention-free layers, tensor by tensor: Mamba (Jamba),
// Mamba-2 (Nemotron-H, granite-4.0-h, Falcon-H1) and linear attention (Gated
// DeltaNet in Qwen3-Next and Qwen3.5, lightning attention in MiniMax-M1).
#include "plan/weights_internal.h"
#include "util/checked.h"

namespace kvplan {

// Mamba-2 (vLLM's MambaMixer2): one in_proj to z, x, B, C and dt; a conv over
// x, B and C; per-head dt bias, A and D; a gated norm; out_proj.
void AddMamba2(const ModelSpec& m, std::vector<WeightTensor>& out) {
  const MambaSpec& s = *m.mamba;
  const uint64_t h = m.hidden_size;
  const uint64_t inner = s.heads * s.head_dim;
  const uint64_t conv = inner + 2 * s.groups * s.d_state;
  out.push_back(Linear(TensorPart::kMamba, "in_proj", inner + conv + s.heads, h, TpSplit::kColumn));
  out.push_back(Vector(TensorPart::kMamba, "conv1d.weight", conv * s.d_conv, TpSplit::kColumn));
  out.push_back(Vector(TensorPart::kMamba, "conv1d.bias", conv, TpSplit::kColumn));
  out.push_back(Vector(TensorPart::kMamba, "dt_bias, A_log, D", 3 * s.heads, TpSplit::kColumn));
  out.push_back(Vector(TensorPart::kNorm, "norm", inner, TpSplit::kColumn));
  out.push_back(Linear(TensorPart::kMamba, "out_proj", h, inner, TpSplit::kRow));
}

// Linear attention. Gated DeltaNet (Qwen3-Next): in_proj to q, k, v and the
// gate z, to beta and a; a conv over q, k and v; per-head dt bias and A; a
// norm per value head's width; out_proj. Lightning (MiniMax): q, k, v and an
// output gate, a norm, out_proj.
void AddLinearAttention(const ModelSpec& m, std::vector<WeightTensor>& out) {
  const LinearAttentionSpec& la = *m.linear_attention;
  const uint64_t h = m.hidden_size;
  const uint64_t key = la.key_heads * la.key_head_dim, value = la.value_heads * la.value_head_dim;
  if (la.kind == "lightning") {
    out.push_back(Linear(TensorPart::kMamba, "qkv_proj", 2 * key + value, h, TpSplit::kColumn));
    out.push_back(Linear(TensorPart::kMamba, "output_gate", value, h, TpSplit::kColumn));
    out.push_back(Vector(TensorPart::kNorm, "norm", value, TpSplit::kColumn));
    out.push_back(Linear(TensorPart::kMamba, "out_proj", h, value, TpSplit::kRow));
    return;
  }
  out.push_back(
      Linear(TensorPart::kMamba, "in_proj_qkvz", 2 * key + 2 * value, h, TpSplit::kColumn));
  out.push_back(Linear(TensorPart::kMamba, "in_proj_ba", 2 * la.value_heads, h, TpSplit::kColumn));
  out.push_back(Vector(TensorPart::kMamba, "conv1d.weight", (2 * key + value) * la.conv_kernel,
                       TpSplit::kColumn));
  out.push_back(Vector(TensorPart::kMamba, "dt_bias, A_log", 2 * la.value_heads, TpSplit::kColumn));
  out.push_back(Vector(TensorPart::kNorm, "norm", la.value_head_dim, TpSplit::kReplicated));
  out.push_back(Linear(TensorPart::kMamba, "out_proj", h, value, TpSplit::kRow));
}

void AddMamba(const ModelSpec& m, std::vector<WeightTensor>& out) {
  const MambaSpec& s = *m.mamba;
  const uint64_t h = m.hidden_size;
  const uint64_t inner = s.expand * h;
  const uint64_t dt_rank = s.dt_rank != 0 ? s.dt_rank : CeilDiv(h, 16);  // Mamba's "auto"
  // vLLM's MambaMixer: in/x/dt projections are column-parallel over d_inner,
  // out_proj row-parallel; conv, A and D are split with d_inner.
  WeightTensor in_proj = Linear(TensorPart::kMamba, "in_proj", 2 * inner, h, TpSplit::kColumn);
  in_proj.fused = 2;  // x and z
  out.push_back(in_proj);
  out.push_back(Vector(TensorPart::kMamba, "conv1d.weight", inner * s.d_conv, TpSplit::kColumn));
  out.push_back(Vector(TensorPart::kMamba, "conv1d.bias", inner, TpSplit::kColumn));
  out.push_back(
      Linear(TensorPart::kMamba, "x_proj", dt_rank + 2 * s.d_state, inner, TpSplit::kRow));
  out.push_back(Linear(TensorPart::kMamba, "dt_proj", inner, dt_rank, TpSplit::kColumn));
  out.push_back(Vector(TensorPart::kMamba, "dt_proj.bias", inner, TpSplit::kColumn));
  out.push_back(Vector(TensorPart::kMamba, "A_log", inner * s.d_state, TpSplit::kColumn));
  out.push_back(Vector(TensorPart::kMamba, "D", inner, TpSplit::kColumn));
  out.push_back(Linear(TensorPart::kMamba, "out_proj", h, inner, TpSplit::kRow));
  // Jamba's inner layernorms on dt, B and C.
  out.push_back(Vector(TensorPart::kNorm, "dt_layernorm", dt_rank, TpSplit::kReplicated));
  out.push_back(Vector(TensorPart::kNorm, "b_layernorm", s.d_state, TpSplit::kReplicated));
  out.push_back(Vector(TensorPart::kNorm, "c_layernorm", s.d_state, TpSplit::kReplicated));
}

}  // namespace kvplan
