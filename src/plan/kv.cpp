#include "plan/kv.h"

#include "util/checked.h"

namespace kvplan {

uint64_t GroupCost::SequenceBytes(uint64_t n) const {
  return CheckedAdd(fixed_bytes, CheckedMul(per_token_bytes, TokensHeld(n), "bytes per sequence"),
                    "bytes per sequence");
}

uint64_t GroupCost::ReadBytes(uint64_t n) const {
  if (sparse_topk == 0 || sparse_topk >= TokensHeld(n)) return SequenceBytes(n);
  const uint64_t index = CheckedMul(CheckedMul(index_bytes_per_token_layer, layers), TokensHeld(n),
                                    "bytes read per step");
  const uint64_t latent =
      CheckedMul(CheckedMul(bytes_per_token_layer - index_bytes_per_token_layer, layers),
                 sparse_topk, "bytes read per step");
  return CheckedAdd(fixed_bytes, CheckedAdd(index, latent, "bytes read per step"),
                    "bytes read per step");
}

uint64_t KvCost::ReadBytes(uint64_t n, uint64_t batch) const {
  uint64_t total = 0;
  for (const GroupCost& g : groups)
    total = CheckedAdd(total, g.ReadBytes(n), "bytes read per step");
  return CheckedMul(total, batch, "bytes read per step");
}

uint64_t KvCost::SequenceBytes(uint64_t n) const {
  uint64_t total = 0;
  for (const GroupCost& g : groups)
    total = CheckedAdd(total, g.SequenceBytes(n), "bytes per sequence");
  return total;
}

uint64_t KvCost::TotalBytes(uint64_t n, uint64_t batch) const {
  return CheckedMul(SequenceBytes(n), batch, "total cache bytes (per sequence x batch)");
}

uint64_t KvCost::MaxTokensPerSequence(uint64_t budget) const {
  if (SequenceBytes(0) > budget) return 0;
  // SequenceBytes is non-decreasing in n: binary search the largest n that fits.
  uint64_t lo = 0, hi = 1;
  auto fits = [&](uint64_t n) {
    try {
      return SequenceBytes(n) <= budget;
    } catch (const Error&) {
      return false;  // overflowed: certainly over budget
    }
  };
  while (fits(hi)) {
    if (hi > (UINT64_MAX >> 2)) return UINT64_MAX;
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

uint64_t IndexerKeyBytes(const MlaSpec& mla) {
  if (mla.index_head_dim == 0) return 0;
  return mla.index_head_dim + 4 * CeilDiv(mla.index_head_dim, 128);
}

uint64_t KvHeadsPerRank(uint64_t kv_heads, uint64_t tp) {
  return kv_heads >= tp ? kv_heads / tp : 1;
}

void CheckKvConfig(const ModelSpec& m, const CacheDtype& dtype, uint64_t tp) {
  if (tp == 0) Fail("tensor parallel size must be at least 1");
  if (m.query_heads % tp != 0) {
    Fail("tensor parallel size {} does not divide the {} query heads of {}", tp, m.query_heads,
         m.name);
  }
  bool has_mla = false;
  for (const LayerGroup& g : m.groups) {
    if (g.kind == LayerKind::kMla) {
      has_mla = true;
      ValidateHeadDim(dtype, m.mla->LatentDim(),
                      "MLA latent dim (kv_lora_rank + qk_rope_head_dim)");
      continue;
    }
    if (g.kind == LayerKind::kState) LayerState(m, g, tp);  // tp must divide its heads
    if (!g.HoldsTokens()) continue;
    if (g.kv_heads >= tp ? g.kv_heads % tp != 0 : tp % g.kv_heads != 0) {
      Fail("tensor parallel size {} must divide the {} KV heads of {} or be a multiple of them", tp,
           g.kv_heads, m.name);
    }
    ValidateHeadDim(dtype, g.head_dim, "head_dim");
    ValidateHeadDim(dtype, g.v_head_dim, "v_head_dim");
  }
  if (dtype.name == "fp8_ds_mla") {
    if (!has_mla || m.mla->kv_lora_rank != 512 || m.mla->qk_rope_head_dim != 64) {
      Fail(
          "cache dtype fp8_ds_mla needs an MLA model with kv_lora_rank 512 and "
          "qk_rope_head_dim 64 ({} is not one)",
          m.name);
    }
  }
}

KvCost ComputeKvCost(const ModelSpec& m, const CacheDtype& dtype, uint64_t tp, StateDtypes state) {
  KvCost cost;
  cost.dtype = dtype.name;
  cost.tp = tp;
  for (const LayerGroup& g : m.groups) {
    GroupCost c;
    c.kind = g.kind;
    c.layers = g.layers;
    switch (g.kind) {
      case LayerKind::kFull:
      case LayerKind::kSliding:
      case LayerKind::kChunked:
        c.kv_heads = KvHeadsPerRank(g.kv_heads, tp);
        c.head_dim = g.head_dim;
        c.v_head_dim = g.v_head_dim;
        c.bytes_per_token_layer = CheckedMul(
            c.kv_heads, CheckedAdd(dtype.VectorBytes(g.head_dim), dtype.VectorBytes(g.v_head_dim)));
        c.cap_tokens = g.kind == LayerKind::kFull ? 0 : g.window;
        break;
      case LayerKind::kMla:
        // One latent vector per token and layer, the same on every rank,
        // plus the sparse-attention indexer's key where the model has one.
        c.kv_heads = 1;
        c.head_dim = m.mla->LatentDim();
        c.index_bytes_per_token_layer = IndexerKeyBytes(*m.mla);
        c.sparse_topk = m.mla->index_topk;
        c.bytes_per_token_layer =
            CheckedAdd(dtype.VectorBytes(c.head_dim), c.index_bytes_per_token_layer);
        break;
      case LayerKind::kState:
        // The state splits across ranks with its heads and channels.
        {
          const StateShape shape = LayerState(m, g, tp, state);
          c.state_bytes_layer = shape.Bytes();
          c.conv_bytes_layer = shape.ConvElements() * shape.conv_bytes;
        }
        c.fixed_bytes = CheckedMul(c.state_bytes_layer, g.layers, "state bytes");
        break;
      case LayerKind::kShared:
      case LayerKind::kNone:
        break;
    }
    c.per_token_bytes = CheckedMul(c.bytes_per_token_layer, g.layers, "bytes per token");
    cost.per_token_bytes = CheckedAdd(cost.per_token_bytes, c.per_token_bytes, "bytes per token");
    cost.fixed_bytes = CheckedAdd(cost.fixed_bytes, c.fixed_bytes, "fixed bytes per sequence");
    cost.groups.push_back(c);
  }
  return cost;
}

}  // namespace kvplan
