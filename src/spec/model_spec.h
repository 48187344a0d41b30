// ModelSpec: what kvplan knows about a model, as read from models/*.yaml (or
// a Hugging Face config.json), validated once so that plan/ can trust it.
//
// Real models are not uniform, so the cache is described by *layer groups*:
// each group is a set of layers with one attention kind. A request's cache is
// then affine in its length n:
//   fixed_bytes + sum over groups of per_token_bytes(group) * min(n, cap(group)).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace kvplan {

enum class LayerKind {
  kFull,     // full causal attention: caches every token
  kSliding,  // sliding window: caches the last `window` tokens
  kChunked,  // chunked local attention: caches at most one `window`-token chunk
  kMla,      // multi-head latent attention: one latent vector per token, no K/V split
  kState,    // attention-free (Mamba, linear attention): fixed state per sequence
  kShared,   // reuses another layer's KV: caches nothing
  kNone,     // no attention and no state (an MLP-only layer): caches nothing
};

/// "full", "sliding", "chunked", "mla", "state", "shared", "none".
std::string_view LayerKindName(LayerKind kind);

/// What a state group's per-sequence state is, and so how its bytes follow
/// from the model's shapes (spec/state_shape.h).
enum class StateForm {
  kGiven,          // only `state_bytes` is known (no mamba or linear_attention block)
  kMamba,          // Mamba-1 (Jamba): conv + SSM state over d_inner channels
  kMamba2,         // Mamba-2 (Nemotron-H, granite-4.0-h, Falcon-H1): grouped B/C, per-head SSM
  kGatedDeltaNet,  // Gated DeltaNet (Qwen3-Next, Qwen3.5): conv + a dk x dv matrix per head
  kLightning,      // lightning attention (MiniMax-M1): a head_dim x head_dim matrix per head
};

/// "given", "mamba", "mamba2", "gated_deltanet", "lightning".
std::string_view StateFormName(StateForm form);

struct LayerGroup {
  LayerKind kind = LayerKind::kFull;
  uint64_t layers = 0;  // how many layers belong to the group
  uint64_t every = 0;   // 0 (and no `at`): the remaining layers; else i % every == offset
  uint64_t offset = 0;
  std::vector<uint64_t> at;  // explicit layer indices (ascending), for non-periodic patterns
  // A state group whose mixer runs beside attention in the same layers
  // (Falcon-H1): its layers are not counted again in the model's total.
  bool parallel = false;
  // Values projected by the key projection (Gemma 4's attention_k_eq_v):
  // no v_proj weights; the cache still keeps K and V, which differ (K gets
  // k_norm and RoPE, V a weightless norm).
  bool k_eq_v = false;
  uint64_t window = 0;       // sliding window or chunk, in tokens (kSliding, kChunked)
  uint64_t kv_heads = 0;     // resolved: the group's value or the model's
  uint64_t head_dim = 0;     // K head dim (resolved)
  uint64_t v_head_dim = 0;   // V head dim (resolved)
  uint64_t state_bytes = 0;  // kState: bytes per sequence per layer (resolved)
  StateForm state_form = StateForm::kGiven;  // kState (resolved from the model's blocks)
  uint64_t state_dtype_bytes = 0;  // kState: bytes per state element (resolved; 0: unknown)
  bool state_dtype_given = false;  // kState: the spec names state_dtype (the model's choice)
  SourcePos pos;                   // where the group was declared

  /// True when the group's `every`/`offset` or `at` select layer `i`
  /// (false for a group without them: ModelSpec::LayerToGroup gives it the
  /// layers the others leave).
  bool Selects(uint64_t i) const;

  /// True when the group holds per-token cache (full, sliding, chunked, mla).
  bool HoldsTokens() const {
    return kind != LayerKind::kState && kind != LayerKind::kShared && kind != LayerKind::kNone;
  }
};

struct MoeSpec {
  uint64_t experts = 0;
  uint64_t experts_per_token = 0;
  uint64_t intermediate_size = 0;  // per expert
  uint64_t shared_experts = 0;
  uint64_t dense_layers = 0;  // leading dense layers
  uint64_t period = 1;        // an MoE layer every `period` layers...
  uint64_t offset = 0;        // ...at i % period == offset
};

struct MlaSpec {
  uint64_t kv_lora_rank = 0;
  uint64_t qk_rope_head_dim = 0;
  uint64_t qk_nope_head_dim = 0;
  uint64_t q_lora_rank = 0;  // 0: no query compression
  uint64_t v_head_dim = 0;
  // DeepSeek-V3.2's sparse attention: a lightning indexer scores every
  // cached token with its own key (index_head_dim wide) and attention reads
  // the top index_topk latents. 0: no indexer.
  uint64_t index_heads = 0;
  uint64_t index_head_dim = 0;
  uint64_t index_topk = 0;

  /// Elements cached per token and layer: kv_lora_rank + qk_rope_head_dim.
  uint64_t LatentDim() const { return kv_lora_rank + qk_rope_head_dim; }
};

struct MambaSpec {
  uint64_t version = 1;  // 1: Mamba (Jamba); 2: Mamba-2
  uint64_t d_state = 0;
  uint64_t d_conv = 0;
  uint64_t expand = 0;   // Mamba-1: d_inner = expand * hidden_size
  uint64_t dt_rank = 0;  // Mamba-1
  uint64_t heads = 0;    // Mamba-2: SSM heads; d_inner = heads * head_dim
  uint64_t head_dim = 0;
  uint64_t groups = 0;  // Mamba-2: B/C groups (n_groups)

  /// The inner (channel) width: expand * hidden (Mamba-1), heads * head_dim (Mamba-2).
  uint64_t InnerDim(uint64_t hidden_size) const {
    return version == 2 ? heads * head_dim : expand * hidden_size;
  }
};

/// Linear attention (config `linear_*` keys): a fixed-size state per head
/// instead of per-token keys and values.
struct LinearAttentionSpec {
  std::string kind;  // gated_deltanet | lightning
  uint64_t key_heads = 0;
  uint64_t value_heads = 0;
  uint64_t key_head_dim = 0;
  uint64_t value_head_dim = 0;
  uint64_t conv_kernel = 0;  // gated_deltanet: the short convolution's width
};

/// The published checkpoint's weight quantization (config.json
/// quantization_config): the weights' format when no --weight-dtype (or
/// deployment `quantization:`) names another. The model's weight_dtype stays
/// its 16-bit type: the activations', the cache's under "auto", and the
/// format of every tensor this leaves unquantized.
struct QuantSpec {
  std::string format;       // fp8 | int8 | int4 | nvfp4 | mxfp4
  std::string scheme;       // the stored layout (spec/weight_format.h), e.g. gptq; "": format's
  uint64_t block = 0;       // fp8: one fp32 scale per block x block weights
                            // (weight_block_size); 0: one scale per tensor
  uint64_t group_size = 0;  // int4: inputs per scale group; 0: 128
  std::vector<std::string> parts;  // the quantized parts (attention, mlp, experts,
                                   // shared_experts, mamba); empty: every linear layer
};

struct ModelSpec {
  std::string name;          // catalog name, e.g. "llama-3.1-70b"
  std::string hf_repo;       // e.g. "meta-llama/Llama-3.1-70B"
  std::string source;        // the public config the numbers come from
  std::string architecture;  // e.g. "LlamaForCausalLM"
  std::string origin;        // where kvplan read it: a path or "catalog:models/x.yaml"

  uint64_t layers = 0;
  uint64_t hidden_size = 0;
  uint64_t query_heads = 0;
  uint64_t kv_heads = 0;
  uint64_t head_dim = 0;
  uint64_t v_head_dim = 0;  // = head_dim unless stated
  uint64_t max_context = 0;
  uint64_t params = 0;                    // published parameter count
  std::string weight_dtype;               // fp32 | fp16 | bf16 | fp8 | int8 | int4 ...
  std::optional<QuantSpec> quantization;  // the checkpoint's; none: weights in weight_dtype
  // The published checkpoint's exact weight bytes (safetensors index or
  // headers, GGUF tensor infos) and where they were read; 0: unknown, the
  // weights are counted from the architecture.
  uint64_t checkpoint_bytes = 0;
  std::string checkpoint_bytes_from;

  uint64_t vocab_size = 0;
  uint64_t intermediate_size = 0;
  bool tie_embeddings = false;
  std::string mlp = "gated";  // gated (3 matrices) | plain (2 matrices)
  bool attention_bias = false;
  std::string norm = "rms";  // rms | layernorm
  // false: every layer is one block (Nemotron-H): a layer with a mixer
  // (attention or state) has no MLP, and only `none` layers have one.
  bool mixer_mlp = true;
  // num_nextn_predict_layers: multi-token-prediction layers stored beside the
  // model (DeepSeek-V3: 1), counted in neither `layers` nor `params`; served
  // only under speculative decoding (vLLM --speculative-config method mtp).
  uint64_t mtp_layers = 0;

  std::optional<MoeSpec> moe;
  std::optional<MlaSpec> mla;
  std::optional<MambaSpec> mamba;
  std::optional<LinearAttentionSpec> linear_attention;

  std::vector<LayerGroup> groups;  // always non-empty after validation
  std::string
      attention_stated;  // optional "attention:" cross-check (MHA/GQA/MQA/MLA/attention-free)

  /// Where each top-level field was read (for error messages); may be empty.
  std::map<std::string, SourcePos, std::less<>> field_pos;

  /// The position of `field`, or just the origin file when unknown.
  SourcePos PosOf(std::string_view field) const;

  /// "MHA", "GQA", "MQA" or "MLA" (by the first attention group's heads), or
  /// "attention-free" for a model of state layers only.
  std::string AttentionKind() const;

  /// For each layer index, the index of its group in `groups` (parallel
  /// groups are never a layer's group: they sit beside it).
  std::vector<size_t> LayerToGroup() const;

  /// The layers of group `g` (a parallel group's too), ascending.
  std::vector<uint64_t> GroupLayers(size_t g) const;

  /// True when some layer group holds per-token cache.
  bool HasAttention() const;

  /// True when the architecture fields (vocab_size, and intermediate_size
  /// where some layer is a dense MLP) let the weights be counted matrix by
  /// matrix; false: only `params` is known, spread evenly over the layers.
  bool HasWeightShapes() const;

  /// True when some layer has a dense (non-MoE) MLP.
  bool HasDenseMlp() const;
};

/// Upper bounds ValidateModel enforces (docs/reliability.md). Each is far
/// above every published model and low enough that no arithmetic on a spec
/// can overflow before the checked byte counts, and per-layer tables stay small.
struct ModelLimits {
  static constexpr uint64_t kMaxLayers = 4096;         // deepest published: 126 (Llama 3.1 405B)
  static constexpr uint64_t kMaxContext = 1ull << 30;  // 1,073,741,824; longest published: 10M
  static constexpr uint64_t kMaxLayerGroups = 1024;
  static constexpr uint64_t kMaxHeads = 65536;       // query or KV heads (largest: 128)
  static constexpr uint64_t kMaxHeadDim = 65536;     // any head or latent dim (largest: 576)
  static constexpr uint64_t kMaxWidth = 1ull << 24;  // hidden, intermediate, vocab (16.7M)
  static constexpr uint64_t kMaxExperts = 65536;     // largest published: 384
  static constexpr uint64_t kMaxParams = 1'000'000'000'000'000;  // 10^15; largest published ~1T
  // A state group's bytes per sequence per layer: 4 GiB; largest bundled:
  // 4,268,032 (Qwen3.5-397B-A17B, an fp32 recurrent state).
  static constexpr uint64_t kMaxStateBytes = 1ull << 32;
};

/// Checks every cross-field rule (heads divide, groups add up, windows > 0...)
/// and fills resolved fields. Throws Error naming the file, line and field.
void ValidateModel(ModelSpec& spec);

}  // namespace kvplan
