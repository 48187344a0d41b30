#include "spec/params_estimate.h"

#include "util/checked.h"

namespace kvplan {
namespace {

uint64_t Mul(std::initializer_list<uint64_t> xs) {
  uint64_t r = 1;
  for (uint64_t x : xs) r = CheckedMul(r, x, "parameter count");
  return r;
}

uint64_t AttentionParams(const ModelSpec& s) {
  uint64_t h = s.hidden_size, H = s.query_heads;
  if (s.mla) {
    const MlaSpec& m = *s.mla;
    uint64_t qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    uint64_t q = m.q_lora_rank ? Mul({h, m.q_lora_rank}) + m.q_lora_rank + Mul({m.q_lora_rank, H, qk})
                               : Mul({h, H, qk});
    uint64_t kv = Mul({h, m.kv_lora_rank + m.qk_rope_head_dim}) + m.kv_lora_rank +
                  Mul({m.kv_lora_rank, H, m.qk_nope_head_dim + m.v_head_dim});
    return q + kv + Mul({H, m.v_head_dim, h});
  }
  uint64_t kv = s.kv_heads;
  uint64_t p = Mul({h, H, s.head_dim}) + Mul({h, kv, s.head_dim}) + Mul({h, kv, s.v_head_dim}) +
               Mul({H, s.v_head_dim, h});
  if (s.attention_bias) p += H * s.head_dim + kv * s.head_dim + kv * s.v_head_dim;
  return p;
}

uint64_t MambaParams(const ModelSpec& s) {
  const MambaSpec& m = *s.mamba;
  uint64_t h = s.hidden_size, d = Mul({m.expand, h});
  return Mul({h, 2, d}) + Mul({d, m.d_conv}) + d + Mul({d, m.dt_rank + 2 * m.d_state}) +
         Mul({m.dt_rank, d}) + d + Mul({d, m.d_state}) + d + Mul({d, h});
}

}  // namespace

uint64_t EstimateParams(const ModelSpec& s) {
  uint64_t h = s.hidden_size;
  uint64_t total = Mul({s.vocab_size, h});
  if (!s.tie_embeddings) total = CheckedAdd(total, Mul({s.vocab_size, h}));
  if (s.norm == "layernorm" && s.architecture == "GPT2LMHeadModel") {
    total = CheckedAdd(total, Mul({s.max_context, h}));  // learned positions
  }
  uint64_t norm = s.norm == "layernorm" ? 2 * h : h;
  total = CheckedAdd(total, norm);
  uint64_t mats = s.mlp == "gated" ? 3 : 2;
  std::vector<size_t> group_of = s.LayerToGroup();
  for (uint64_t i = 0; i < s.layers; ++i) {
    bool state = !s.groups.empty() && s.groups[group_of[i]].kind == LayerKind::kState;
    uint64_t mixer = state && s.mamba ? MambaParams(s) : AttentionParams(s);
    uint64_t mlp = Mul({mats, h, s.intermediate_size});
    if (s.moe) {
      const MoeSpec& m = *s.moe;
      if (i >= m.dense_layers && i % m.period == m.offset) {
        mlp = Mul({m.experts + m.shared_experts, 3, h, m.intermediate_size}) + Mul({h, m.experts});
      }
    }
    total = CheckedAdd(total, CheckedAdd(mixer, CheckedAdd(mlp, 2 * norm)));
  }
  return total;
}

std::string ParamsFormula(const ModelSpec& s) {
  std::string f = s.tie_embeddings ? "tied embeddings" : "embeddings + lm_head";
  f += s.mla ? ", MLA attention" : ", q/k/v/o projections";
  if (s.mamba) f += ", Mamba mixers";
  f += s.moe ? ", dense and expert MLPs" : ", MLP";
  f += ", norms; biases beyond q/k/v ignored";
  return f;
}

}  // namespace kvplan
