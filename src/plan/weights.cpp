#include "plan/weights.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>

#include "plan/kv.h"
#include "plan/weights_internal.h"
#include "util/checked.h"
#include "util/error.h"

namespace kvplan {

WeightTensor Linear(TensorPart part, std::string_view name, uint64_t rows, uint64_t cols,
                    TpSplit split, uint64_t copies) {
  WeightTensor t;
  t.part = part;
  t.name = name;
  t.rows = rows;
  t.cols = cols;
  t.copies = copies;
  t.linear = true;
  t.split = split;
  return t;
}

WeightTensor Vector(TensorPart part, std::string_view name, uint64_t length, TpSplit split,
                    uint64_t copies) {
  WeightTensor t;
  t.part = part;
  t.name = name;
  t.rows = 1;
  t.cols = length;
  t.copies = copies;
  t.split = split;
  return t;
}

namespace {

// vLLM pads the vocabulary of VocabParallelEmbedding / ParallelLMHead to a
// multiple of 64 (DEFAULT_VOCAB_PADDING_SIZE) before splitting it over ranks.
constexpr uint64_t kVocabPadding = 64;

uint64_t NormParams(const ModelSpec& m, uint64_t width) {
  return m.norm == "layernorm" ? 2 * width : width;  // layernorm has a bias
}

bool ArchStarts(const ModelSpec& m, std::string_view prefix) {
  return m.architecture.rfind(prefix, 0) == 0;
}

// GPT-2 style models learn absolute position embeddings (wpe); the others
// in the catalog use rotary or no positions.
bool LearnedPositions(const ModelSpec& m) {
  return ArchStarts(m, "GPT2");
}

// Qwen2 (dense and MoE) and GLM (ChatGLM's add_qkv_bias too) put biases on
// q/k/v only; gpt-oss and GPT-2 on o_proj too.
bool OutputProjectionBias(const ModelSpec& m) {
  return m.attention_bias && !ArchStarts(m, "Qwen2") && !ArchStarts(m, "Glm") &&
         !ArchStarts(m, "ChatGLM");
}

// A plain (2-matrix) MLP in a model with biases carries them (GPT-2);
// gpt-oss experts carry biases too. Other MoE models with attention biases
// (Qwen2-MoE, GLM-4.5) have none on their experts.
bool MlpBias(const ModelSpec& m) {
  return m.attention_bias && (m.mlp == "plain" || ArchStarts(m, "GptOss"));
}

// Per-head RMS norms on q and k (Qwen3, Gemma 3 and 4, GLM-4.5's use_qk_norm).
bool QkNorm(const ModelSpec& m) {
  return ArchStarts(m, "Qwen3") || ArchStarts(m, "Gemma3") || ArchStarts(m, "Gemma4") ||
         ArchStarts(m, "Glm4Moe");
}

// Gemma 2/3/4 norm before and after both the attention and the MLP; Gemma 4's
// MoE layers three more, around the experts' branch beside the dense MLP
// (post_feedforward_layernorm_1, pre/post_feedforward_layernorm_2).
uint64_t NormsPerLayer(const ModelSpec& m, bool moe_layer) {
  if (ArchStarts(m, "Gemma4")) return moe_layer ? 7 : 4;
  return ArchStarts(m, "Gemma2") || ArchStarts(m, "Gemma3") ? 4 : 2;
}

void AddAttention(const ModelSpec& m, const LayerGroup& g, std::vector<WeightTensor>& out) {
  const uint64_t h = m.hidden_size;
  if (g.kind == LayerKind::kMla && m.mla) {
    const MlaSpec& a = *m.mla;
    const uint64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    if (a.q_lora_rank != 0) {
      // Down-projections are ReplicatedLinear in vLLM's DeepseekV2 attention.
      out.push_back(
          Linear(TensorPart::kAttention, "q_a_proj", a.q_lora_rank, h, TpSplit::kReplicated));
      out.push_back(
          Vector(TensorPart::kNorm, "q_a_layernorm", a.q_lora_rank, TpSplit::kReplicated));
      out.push_back(Linear(TensorPart::kAttention, "q_b_proj", m.query_heads * qk, a.q_lora_rank,
                           TpSplit::kColumn));
    } else {
      out.push_back(
          Linear(TensorPart::kAttention, "q_proj", m.query_heads * qk, h, TpSplit::kColumn));
    }
    out.push_back(Linear(TensorPart::kAttention, "kv_a_proj_with_mqa",
                         a.kv_lora_rank + a.qk_rope_head_dim, h, TpSplit::kReplicated));
    out.push_back(
        Vector(TensorPart::kNorm, "kv_a_layernorm", a.kv_lora_rank, TpSplit::kReplicated));
    out.push_back(Linear(TensorPart::kAttention, "kv_b_proj",
                         m.query_heads * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank,
                         TpSplit::kColumn));
    out.push_back(
        Linear(TensorPart::kAttention, "o_proj", h, m.query_heads * a.v_head_dim, TpSplit::kRow));
    if (a.index_head_dim != 0) {
      // DeepSeek-V3.2's lightning indexer (vLLM's Indexer, replicated on
      // every rank): its queries from the compressed q, one key, a
      // LayerNorm on the key and a weight per indexer head.
      const uint64_t q_in = a.q_lora_rank != 0 ? a.q_lora_rank : h;
      out.push_back(Linear(TensorPart::kAttention, "indexer.wq_b", a.index_heads * a.index_head_dim,
                           q_in, TpSplit::kReplicated));
      out.push_back(
          Linear(TensorPart::kAttention, "indexer.wk", a.index_head_dim, h, TpSplit::kReplicated));
      out.push_back(
          Vector(TensorPart::kNorm, "indexer.k_norm", 2 * a.index_head_dim, TpSplit::kReplicated));
      out.push_back(Linear(TensorPart::kAttention, "indexer.weights_proj", a.index_heads, h,
                           TpSplit::kReplicated));
    }
    return;
  }
  const uint64_t kv = g.kv_heads != 0 ? g.kv_heads : m.kv_heads;
  const uint64_t d = g.head_dim != 0 ? g.head_dim : m.head_dim;
  const uint64_t vd = g.v_head_dim != 0 ? g.v_head_dim : (m.v_head_dim != 0 ? m.v_head_dim : d);
  out.push_back(Linear(TensorPart::kAttention, "q_proj", m.query_heads * d, h, TpSplit::kColumn));
  WeightTensor k = Linear(TensorPart::kAttention, "k_proj", kv * d, h, TpSplit::kKvHeads);
  k.kv_heads = kv;
  out.push_back(k);
  if (!g.k_eq_v) {  // Gemma 4's attention_k_eq_v: the values come from k_proj
    WeightTensor v = Linear(TensorPart::kAttention, "v_proj", kv * vd, h, TpSplit::kKvHeads);
    v.kv_heads = kv;
    out.push_back(v);
  }
  out.push_back(Linear(TensorPart::kAttention, "o_proj", h, m.query_heads * vd, TpSplit::kRow));
  if (QkNorm(m))
    out.push_back(Vector(TensorPart::kNorm, "q_norm+k_norm", 2 * d, TpSplit::kReplicated));
  // gpt-oss: one learned attention-sink logit per query head.
  if (ArchStarts(m, "GptOss")) {
    out.push_back(Vector(TensorPart::kAttention, "sinks", m.query_heads, TpSplit::kColumn));
  }
  if (m.attention_bias) {
    out.push_back(Vector(TensorPart::kBias, "q_proj.bias", m.query_heads * d, TpSplit::kColumn));
    WeightTensor kb = Vector(TensorPart::kBias, "k_proj.bias", kv * d, TpSplit::kKvHeads);
    kb.kv_heads = kv;
    out.push_back(kb);
    if (!g.k_eq_v) {
      WeightTensor vb = Vector(TensorPart::kBias, "v_proj.bias", kv * vd, TpSplit::kKvHeads);
      vb.kv_heads = kv;
      out.push_back(vb);
    }
    if (OutputProjectionBias(m)) {
      out.push_back(Vector(TensorPart::kBias, "o_proj.bias", h, TpSplit::kReplicated));
    }
  }
}

void AddMlp(const ModelSpec& m, TensorPart part, uint64_t width, uint64_t copies,
            std::vector<WeightTensor>& out) {
  const uint64_t h = m.hidden_size;
  const uint64_t up_rows = m.mlp == "gated" ? 2 * width : width;  // gate + up, or up
  WeightTensor gate_up = Linear(part, "gate_up_proj", up_rows, h, TpSplit::kColumn, copies);
  gate_up.fused = m.mlp == "gated" ? 2 : 1;
  out.push_back(gate_up);
  out.push_back(Linear(part, "down_proj", h, width, TpSplit::kRow, copies));
  if (MlpBias(m)) {
    out.push_back(
        Vector(TensorPart::kBias, "gate_up_proj.bias", up_rows, TpSplit::kColumn, copies));
    out.push_back(Vector(TensorPart::kBias, "down_proj.bias", h, TpSplit::kReplicated, copies));
  }
}

bool IsMoeLayer(const ModelSpec& m, uint64_t i) {
  if (!m.moe) return false;
  const MoeSpec& e = *m.moe;
  return i >= e.dense_layers && e.period != 0 && i % e.period == e.offset;
}

uint64_t Bits(const WeightTensor& t, const WeightFormat& f, uint64_t rows, uint64_t cols) {
  const uint64_t elems = CheckedMul(rows, cols, "weight elements");
  if (!t.linear || !f.Quantizes(t.part)) return CheckedMul(elems, f.dense_bytes * 8, "weight bits");
  uint64_t bits = CheckedMul(elems, f.bits, "weight bits");
  if (f.group_elems != 0) {
    bits = CheckedAdd(bits, CheckedMul(CheckedMul(rows, CeilDiv(cols, f.group_elems)),
                                       f.group_scale_bits, "weight scale bits"));
  }
  if (f.block_edge != 0) {
    bits = CheckedAdd(
        bits, CheckedMul(CheckedMul(CeilDiv(rows, f.block_edge), CeilDiv(cols, f.block_edge)),
                         f.block_scale_bits, "weight scale bits"));
  }
  if (f.group2_elems != 0) {
    bits = CheckedAdd(bits, CheckedMul(CheckedMul(rows, CeilDiv(cols, f.group2_elems)),
                                       f.group2_bits, "weight scale bits"));
  }
  // A checkpoint stores fused matrices (gate + up) apart, each with its own
  // g_idx and, in the named layouts, its own per-matrix scales and shape.
  bits = CheckedAdd(bits, CheckedMul(CheckedMul(cols, f.col_bits), t.fused, "weight index bits"));
  bits = CheckedAdd(bits, CheckedMul(rows, f.row_scale_bytes * 8, "weight scale bits"));
  const uint64_t matrices = f.scheme.empty() ? 1 : t.fused;
  return CheckedAdd(bits, CheckedMul(f.tensor_scale_bytes * 8, matrices), "weight bits");
}

}  // namespace

ModelTensors BuildModelTensors(const ModelSpec& m) {
  ModelTensors t;
  t.layers.resize(m.layers);
  if (!m.HasWeightShapes()) {
    // Without the architecture, spread the published count evenly over layers.
    uint64_t per_layer = m.layers != 0 ? m.params / m.layers : 0;
    for (uint64_t i = 0; i < m.layers; ++i) {
      uint64_t n = per_layer + (i == 0 ? m.params - per_layer * m.layers : 0);
      t.layers[i].push_back(Linear(TensorPart::kAttention, "layer", 1, n, TpSplit::kRow));
    }
    return t;
  }
  t.from_architecture = true;
  const uint64_t h = m.hidden_size;
  WeightTensor emb = Vector(TensorPart::kEmbedding, "embed_tokens", 0, TpSplit::kVocab);
  emb.rows = m.vocab_size;
  emb.cols = h;
  t.model.push_back(emb);
  if (LearnedPositions(m)) {
    WeightTensor pos = Vector(TensorPart::kPositions, "embed_positions", 0, TpSplit::kReplicated);
    pos.rows = m.max_context;
    pos.cols = h;
    t.model.push_back(pos);
  }
  if (!m.tie_embeddings) {
    WeightTensor head = emb;
    head.part = TensorPart::kLmHead;
    head.name = "lm_head";
    t.model.push_back(head);
  }
  t.model.push_back(Vector(TensorPart::kFinalNorm, "norm", NormParams(m, h), TpSplit::kReplicated));

  const std::vector<size_t> group_of = m.LayerToGroup();
  const auto add_state_mixer = [&](std::vector<WeightTensor>& L) {
    if (m.linear_attention) {
      AddLinearAttention(m, L);
    } else if (m.mamba) {
      m.mamba->version == 2 ? AddMamba2(m, L) : AddMamba(m, L);
    }
  };
  for (uint64_t i = 0; i < m.layers; ++i) {
    std::vector<WeightTensor>& L = t.layers[i];
    L.reserve(16);
    const LayerGroup& g = m.groups[group_of[i]];
    // Mixer: attention, or the state mixer of a hybrid's attention-free
    // layers; MLP-only layers (kNone) have none. A parallel state group's
    // mixer sits beside the attention (Falcon-H1).
    if (g.kind == LayerKind::kState) {
      add_state_mixer(L);
    } else if (g.kind != LayerKind::kNone) {
      AddAttention(m, g, L);
    }
    for (const LayerGroup& p : m.groups) {
      if (p.parallel && ((p.every == 0 && p.at.empty()) || p.Selects(i))) add_state_mixer(L);
    }
    // One-block layers (Nemotron-H): a mixer layer has one norm and no MLP.
    if (!m.mixer_mlp && g.kind != LayerKind::kNone) {
      L.push_back(Vector(TensorPart::kNorm, "norm", NormParams(m, h), TpSplit::kReplicated));
      continue;
    }
    // Norms before the mixer and the MLP (Gemma: after them too).
    L.push_back(Vector(TensorPart::kNorm, "layernorms",
                       NormsPerLayer(m, IsMoeLayer(m, i)) * NormParams(m, h),
                       TpSplit::kReplicated));
    if (IsMoeLayer(m, i)) {
      const MoeSpec& e = *m.moe;
      L.push_back(Linear(TensorPart::kRouter, "router", e.experts, h, TpSplit::kReplicated));
      L.back().linear = false;  // routers stay in 16-bit in quantized checkpoints
      // gpt-oss: router bias; DeepSeek-V3 and GLM-4.5: the routing score
      // correction bias.
      if (MlpBias(m) || ArchStarts(m, "DeepseekV3") || ArchStarts(m, "Glm4Moe")) {
        L.push_back(Vector(TensorPart::kBias, "router.bias", e.experts, TpSplit::kReplicated));
      }
      // Gemma 4: the router's input scale and a scale per expert.
      if (ArchStarts(m, "Gemma4")) {
        L.push_back(Vector(TensorPart::kRouter, "router.scale+per_expert_scale", h + e.experts,
                           TpSplit::kReplicated));
      }
      AddMlp(m, TensorPart::kExperts, e.intermediate_size, e.experts, L);
      if (e.shared_experts != 0) {
        AddMlp(m, TensorPart::kSharedExperts, e.intermediate_size * e.shared_experts, 1, L);
      }
    } else {
      AddMlp(m, TensorPart::kMlp, m.intermediate_size, 1, L);
    }
  }
  return t;
}

uint64_t CountParams(const ModelTensors& t) {
  uint64_t n = 0;
  for (const WeightTensor& w : t.model) n = CheckedAdd(n, w.Params(), "parameters");
  for (const auto& layer : t.layers) {
    for (const WeightTensor& w : layer) n = CheckedAdd(n, w.Params(), "parameters");
  }
  return n;
}

std::vector<std::pair<TensorPart, uint64_t>> ParamsByPart(const ModelTensors& t) {
  std::array<uint64_t, 12> sums{};
  for (const WeightTensor& w : t.model) sums[static_cast<size_t>(w.part)] += w.Params();
  for (const auto& layer : t.layers) {
    for (const WeightTensor& w : layer) sums[static_cast<size_t>(w.part)] += w.Params();
  }
  std::vector<std::pair<TensorPart, uint64_t>> out;
  for (size_t i = 0; i < sums.size(); ++i) {
    if (sums[i] != 0) out.emplace_back(static_cast<TensorPart>(i), sums[i]);
  }
  return out;
}

uint64_t TensorBytes(const WeightTensor& t, const WeightFormat& f, uint64_t tp) {
  uint64_t rows = t.rows, cols = t.cols;
  switch (t.split) {
    case TpSplit::kColumn:
      rows = CeilDiv(rows, tp);
      break;
    case TpSplit::kRow:
      cols = CeilDiv(cols, tp);
      break;
    case TpSplit::kKvHeads:
      // A k/v matrix splits its rows by head; a k/v bias (one row) its length.
      if (t.rows == 1 && !t.linear) {
        cols = t.cols / t.kv_heads * KvHeadsPerRank(t.kv_heads, tp);
      } else {
        rows = t.rows / t.kv_heads * KvHeadsPerRank(t.kv_heads, tp);
      }
      break;
    case TpSplit::kVocab:
      rows = CeilDiv(RoundUp(rows, kVocabPadding), tp);
      break;
    case TpSplit::kReplicated:
      break;
  }
  const uint64_t bits = Bits(t, f, rows, cols);
  return CheckedMul(CeilDiv(bits, 8), t.copies, "weight bytes");
}

uint64_t TensorBytes(const WeightTensor& t, const WeightFormat& f, const WeightSplit& split) {
  // Routed experts (and their biases, one per expert) under expert
  // parallelism: whole experts dealt over the ranks, the largest share.
  const bool expert =
      t.part == TensorPart::kExperts || (t.part == TensorPart::kBias && t.copies > 1);
  if (expert && split.expert_ranks != 0) {
    WeightTensor whole = t;
    whole.copies = CeilDiv(t.copies, split.expert_ranks);
    return TensorBytes(whole, f, 1);
  }
  if (t.part == TensorPart::kAttention && split.attention_tp != 0)
    return TensorBytes(t, f, split.attention_tp);
  return TensorBytes(t, f, split.tp);
}

uint64_t StageWeightBytes(const ModelTensors& t, const WeightFormat& f, uint64_t tp,
                          uint64_t first_layer, uint64_t layers, bool first_stage,
                          bool last_stage) {
  return StageWeightBytes(t, f, WeightSplit{tp, 0, 0}, first_layer, layers, first_stage,
                          last_stage);
}

uint64_t StageWeightBytes(const ModelTensors& t, const WeightFormat& f, const WeightSplit& split,
                          uint64_t first_layer, uint64_t layers, bool first_stage,
                          bool last_stage) {
  uint64_t bytes = 0;
  for (const WeightTensor& w : t.model) {
    bool here = false;
    switch (w.part) {
      case TensorPart::kEmbedding:
        // A tied lm_head reuses the embedding: the last stage needs it too.
        here = first_stage || (last_stage && !std::any_of(t.model.begin(), t.model.end(),
                                                          [](const WeightTensor& x) {
                                                            return x.part == TensorPart::kLmHead;
                                                          }));
        break;
      case TensorPart::kPositions:
        here = first_stage;
        break;
      default:
        here = last_stage;
        break;
    }
    if (here) bytes = CheckedAdd(bytes, TensorBytes(w, f, split), "weight bytes");
  }
  for (uint64_t i = first_layer; i < first_layer + layers && i < t.layers.size(); ++i) {
    for (const WeightTensor& w : t.layers[i])
      bytes = CheckedAdd(bytes, TensorBytes(w, f, split), "weight bytes");
  }
  return bytes;
}

std::string BlockTilingError(const ModelTensors& t, const WeightFormat& f, uint64_t tp) {
  if (f.block_edge == 0 || tp <= 1) return "";
  for (const std::vector<WeightTensor>& layer : t.layers) {
    for (const WeightTensor& w : layer) {
      if (!w.linear || !f.Quantizes(w.part)) continue;
      uint64_t whole = 0;  // the split dimension of one matrix
      const char* side = "output";
      switch (w.split) {
        case TpSplit::kColumn:
          whole = w.rows / w.fused;
          break;
        case TpSplit::kRow:
          whole = w.cols;
          side = "input";
          break;
        case TpSplit::kKvHeads:
          whole = w.rows / w.kv_heads * KvHeadsPerRank(w.kv_heads, tp) * tp;
          break;
        default:
          continue;
      }
      if (whole % tp == 0 && (whole / tp) % f.block_edge == 0) continue;
      return fmt::format(
          "fp8 blocks of {0} x {0} do not tile {1} {2} at tp {3}: {4} / {3} = "
          "{5:.6g} {6} features per rank; vLLM and SGLang need whole blocks per rank",
          f.block_edge, TensorPartName(w.part), w.name, tp, whole,
          static_cast<double>(whole) / static_cast<double>(tp), side);
    }
  }
  return "";
}

uint64_t ModelWeightBytes(const ModelTensors& t, const WeightFormat& f) {
  return StageWeightBytes(t, f, 1, 0, t.layers.size(), true, true);
}

bool UsesCheckpointBytes(const ModelSpec& m, const WeightFormat& f) {
  if (m.checkpoint_bytes == 0) return false;
  if (!f.unmodelled.empty()) return true;
  try {
    return SameLayout(f, ModelWeightFormat(m, ""));
  } catch (const Error&) {
    return false;  // a dtype kvplan has no format for: the checkpoint's own bytes are not
                   // comparable
  }
}

uint64_t ScaleToCheckpoint(uint64_t bytes, uint64_t arch_total, uint64_t checkpoint_bytes) {
  if (arch_total == 0) return bytes;
  __extension__ using U128 = unsigned __int128;  // bytes x checkpoint needs 128 bits
  const U128 scaled = (static_cast<U128>(bytes) * checkpoint_bytes + arch_total / 2) / arch_total;
  if (scaled > UINT64_MAX) {
    Fail("overflow: weight bytes {} x {} / {} do not fit in 64 bits", bytes, checkpoint_bytes,
         arch_total);
  }
  return static_cast<uint64_t>(scaled);
}

std::string WeightBytesSource(const ModelSpec& m, const ModelTensors& t, const WeightFormat& f) {
  if (UsesCheckpointBytes(m, f)) return "exact: " + m.checkpoint_bytes_from;
  return t.from_architecture ? "counted from the architecture"
                             : "estimated from the parameter count";
}

uint64_t WeightBytesFromParams(uint64_t params, const WeightFormat& f) {
  uint64_t bits = CheckedMul(params, f.bits, "weight bits");
  if (f.group_elems != 0)
    bits = CheckedAdd(bits, CeilDiv(params, f.group_elems) * f.group_scale_bits);
  return CeilDiv(bits, 8);
}

}  // namespace kvplan
