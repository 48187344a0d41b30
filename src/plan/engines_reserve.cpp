// The activation/overhead reserve: memory an engine keeps back from the KV
// cache, modelled from the model's dimensions and the batched-token budget.
// docs/capacity.md derives each term and the public logs it is fitted to.
#include <algorithm>

#include "plan/capacity.h"
#include "util/checked.h"
#include "util/units.h"

namespace kvplan {
namespace {

// Bytes of one activation element: engines run 16-bit activations (fp32
// checkpoints are cast to bf16 by vLLM/SGLang's dtype "auto").
constexpr uint64_t kActBytes = 2;

// The sampler's peak per element of the [rows, vocab] logits: model-dtype
// logits (2) + fp32 copy (4) + sorted values (4) + int64 sort indices (8) +
// radix-sort scratch (~12) + softmax (4) + cumulative sum (4) = 38 bytes,
// for vLLM's worst-case top-k/top-p profiling run. Fitted: 38.2-39.2 B from
// vLLM logs (docs/capacity.md, "sampler").
constexpr uint64_t kSamplerBytesPerLogit = 38;

// TRT-LLM and llama.cpp keep one fp32 logits row per output token.
constexpr uint64_t kLogitBytes = 4;

// vLLM V1's "non-torch forward increase" on one GPU (cuBLAS workspaces);
// the CUDA context itself is created before vLLM's baseline snapshot and is
// not subtracted. 0.02 GiB in the log cited in docs/capacity.md.
constexpr uint64_t kVllmNonTorchBytes = 20 * kMiB;

// CUDA context + cuBLAS handles, taken before SGLang/TRT-LLM/llama.cpp
// measure free memory (typical 300-600 MiB on data-centre GPUs).
constexpr uint64_t kCudaContextBytes = 512 * kMiB;

// CUDA graph private pools: SGLang's own estimate of 2 MiB per unit of
// cuda_graph_max_bs (server_args.py), used for every engine.
constexpr uint64_t kGraphBytesPerBatch = 2 * kMiB;

// Widest per-token activation (elements) of one layer on one tp rank: the
// residual and normed hidden state (2H) plus the larger of the attention and
// MLP intermediates.
uint64_t ForwardElemsPerToken(const ModelSpec& m, uint64_t tp) {
  const uint64_t h = m.hidden_size;
  uint64_t attn = 0;
  if (m.mla) {
    const MlaSpec& a = *m.mla;
    const uint64_t heads = CeilDiv(m.query_heads, tp);
    attn = heads * (a.qk_nope_head_dim + a.qk_rope_head_dim) + a.kv_lora_rank + a.qk_rope_head_dim +
           heads * (a.qk_nope_head_dim + a.v_head_dim) + heads * a.v_head_dim;
  } else {
    const uint64_t heads = CeilDiv(m.query_heads, tp);
    const uint64_t vd = m.v_head_dim != 0 ? m.v_head_dim : m.head_dim;
    attn = heads * m.head_dim + 2 * KvHeadsPerRank(m.kv_heads, tp) * m.head_dim + heads * vd;
  }
  const uint64_t up = m.mlp == "gated" ? 3 : 2;  // gate+up output, then the activation
  uint64_t mlp = 0;
  if (m.intermediate_size != 0) mlp = up * CeilDiv(m.intermediate_size, tp) + h;
  if (m.moe) {
    const MoeSpec& e = *m.moe;
    uint64_t moe = e.experts_per_token * (up * CeilDiv(e.intermediate_size, tp) + h) + e.experts;
    if (e.shared_experts) moe += up * CeilDiv(e.intermediate_size * e.shared_experts, tp);
    mlp = std::max(mlp, moe);
  }
  if (m.mamba) {
    const uint64_t inner = CeilDiv(m.mamba->InnerDim(h), tp);
    mlp = std::max(mlp, 3 * inner + m.mamba->dt_rank + 2 * m.mamba->d_state);
  }
  return 2 * h + std::max(attn, mlp);
}

// vLLM and SGLang precompute a cos/sin table of max_position_embeddings x
// rotary dim in the model dtype at load time (vLLM's "Model loading took"
// includes it: 14.9888 GiB for Llama-3.1-8B = 14.9575 GiB of weights + 32 MiB).
uint64_t RopeCacheBytes(const ModelSpec& m) {
  if (m.architecture.rfind("GPT2", 0) == 0 || m.architecture.rfind("Jamba", 0) == 0) return 0;
  const uint64_t dim = m.mla ? m.mla->qk_rope_head_dim : m.head_dim;
  return CheckedMul(CheckedMul(m.max_context, dim), kActBytes, "rotary cache bytes");
}

}  // namespace

Reserve ModelReserve(const ModelSpec& m, const HardwareSpec& gpu, const EngineConfig& c) {
  (void)gpu;
  Reserve r;
  const uint64_t tokens = c.max_num_batched_tokens;
  const uint64_t rows = std::min(c.max_num_seqs, tokens);
  // SGLang samples its whole running batch in a decode step, which its
  // chunked-prefill size does not bound.
  r.logits_rows = c.engine == Engine::kLlamaCpp ? c.n_ubatch
                  : c.engine == Engine::kSglang ? c.max_num_seqs
                                                : rows;
  const uint64_t vocab = m.vocab_size != 0 ? m.vocab_size : 32000;
  const uint64_t forward =
      CheckedMul(CheckedMul(tokens, ForwardElemsPerToken(m, c.tp), "activation bytes"), kActBytes);
  // The sampler runs after the forward pass, when only the hidden states of
  // the batch are still held: the peak is the larger of the two phases.
  const uint64_t held_hidden = CheckedMul(CheckedMul(tokens, m.hidden_size), kActBytes);
  switch (c.engine) {
    case Engine::kVllm:
      r.activation_bytes = forward;
      r.logits_bytes =
          CheckedAdd(CheckedMul(CheckedMul(rows, vocab), kSamplerBytesPerLogit), held_hidden);
      r.non_torch_bytes = kVllmNonTorchBytes;
      // From 0.21 vLLM profiles its graphs and subtracts the estimate
      // (gpu_worker.py determine_available_memory); before, it captured them
      // after sizing the cache: reported, not subtracted.
      r.cuda_graph_bytes =
          c.enforce_eager ? 0 : CheckedMul(c.cuda_graph_max_bs, kGraphBytesPerBatch);
      r.rope_cache_bytes = RopeCacheBytes(m);
      r.total_bytes = std::max(r.activation_bytes, r.logits_bytes) + r.non_torch_bytes +
                      r.rope_cache_bytes + (c.GraphsInBudget() ? r.cuda_graph_bytes : 0);
      break;
    case Engine::kSglang:
      // SGLang leaves activations and graphs to the (1 - mem_fraction_static)
      // share; only the CUDA context, measured into its baseline, comes out
      // of the static share (scaled by the fraction, see capacity.cpp).
      r.activation_bytes = forward;
      r.logits_bytes = CheckedMul(CheckedMul(r.logits_rows, vocab), kLogitBytes);
      r.cuda_graph_bytes =
          c.enforce_eager ? 0 : CheckedMul(c.cuda_graph_max_bs, kGraphBytesPerBatch);
      r.non_torch_bytes = kCudaContextBytes;
      r.rope_cache_bytes = RopeCacheBytes(m);
      r.total_bytes =
          static_cast<uint64_t>(static_cast<double>(kCudaContextBytes) * c.memory_fraction) +
          r.rope_cache_bytes;
      break;
    case Engine::kTrtllm:
      // Everything in use after loading reduces the free memory the fraction applies to.
      r.activation_bytes = forward;
      r.logits_bytes = CheckedMul(CheckedMul(rows, vocab), kLogitBytes);
      r.non_torch_bytes = kCudaContextBytes;
      r.cuda_graph_bytes =
          c.enforce_eager ? 0 : CheckedMul(c.cuda_graph_max_bs, kGraphBytesPerBatch);
      r.total_bytes = r.activation_bytes + r.logits_bytes + r.non_torch_bytes + r.cuda_graph_bytes;
      break;
    case Engine::kLlamaCpp: {
      // The compute buffer for one micro-batch: activations of n_ubatch tokens
      // in fp32 plus the fp32 logits rows.
      const uint64_t ub = c.n_ubatch;
      r.activation_bytes = CheckedMul(CheckedMul(ub, ForwardElemsPerToken(m, c.tp)), 4);
      r.logits_bytes = CheckedMul(CheckedMul(ub, vocab), kLogitBytes);
      r.non_torch_bytes = kCudaContextBytes;
      r.total_bytes = r.activation_bytes + r.logits_bytes + r.non_torch_bytes;
      break;
    }
  }
  if (c.reserve_bytes) {
    r.total_bytes = *c.reserve_bytes;
    r.overridden = true;
  }
  return r;
}

}  // namespace kvplan
