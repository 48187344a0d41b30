// The pieces of `kvplan import-hf` (import/hf_import.h): the supported
// architectures and the spec being built from a config.json, shared by the
// files that read the config (hf_arch, hf_quantization, hf_layers) and the
// one that writes the spec YAML (hf_emit).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "import/hf_config.h"
#include "spec/model_spec.h"

namespace kvplan {

enum class Family {
  kLlama,
  kQwen,
  kGemma2,
  kGemma3,
  kDeepseek,
  kFalcon,
  kGpt2,
  kJamba,
  kGptOss,
  kQwenNext,       // Qwen3-Next, Qwen3.5: Gated DeltaNet + full attention
  kNemotronH,      // Mamba-2, attention and MLP-only layers
  kGraniteHybrid,  // granite-4.0-h: Mamba-2 + attention
  kFalconH1,       // attention and Mamba-2 side by side
  kMiniMax,        // lightning + softmax attention
  kLlama4,         // chunked local attention (RoPE) + global NoPE layers, interleaved MoE
  kGemma4,         // sliding + global layers of their own head width and KV heads
};

// One supported architecture: how to read it, and the defaults its
// transformers config class applies to keys a config.json leaves out.
struct Arch {
  const char* name;        // config "architectures"[0]
  const char* model_type;  // config "model_type"
  Family family;
  bool moe;
  uint64_t default_max_context;  // max_position_embeddings default
  bool default_tie;              // tie_word_embeddings default
  // The transformers config class's defaults where the key is absent:
  uint64_t default_kv_heads;  // num_key_value_heads (0: None, which means the query heads)
  uint64_t default_head_dim;  // head_dim (0: none, hidden_size / heads)
};

// The spec being built: values plus a comment per field saying where each
// number came from, so the output documents its own assumptions.
struct Draft {
  ModelSpec s;
  std::map<std::string, std::string> why;  // field -> comment
  std::vector<std::string> header;         // notes for the file header
  // num_key_value_heads as a list: each layer's KV heads (0: no attention).
  std::vector<uint64_t> layer_kv_heads;
};

/// The routed experts the config describes, into d.s.moe (hf_moe.cpp);
/// nothing for a dense model.
void ReadMoe(const Config& c, const Arch& a, Draft& d);

/// The spec a config.json describes (hf_arch.cpp). `name` overrides the
/// spec name.
Draft BuildDraft(const JsonNode& root, const std::string& file, const std::string& name);

/// weight_dtype from torch_dtype (or dtype), with its comment (hf_quantization.cpp).
std::string WeightDtype(const Config& c, Draft& d);
/// quantization_config, where kvplan has its format (hf_quantization.cpp).
/// Call after the MoE block is read.
void ReadQuantization(const Config& c, Draft& d);

/// The layer groups: full, sliding, MLA or Mamba state, per family (hf_layers.cpp).
void AttentionGroups(const Config& c, const Arch& a, Draft& d);

/// The groups and state mixer of a hybrid family (hf_hybrid.cpp); false
/// for the other families.
bool HybridGroups(const Config& c, const Arch& a, Draft& d);

/// The spec YAML, laid out like models/*.yaml with a comment per
/// assumption (hf_emit.cpp).
std::string EmitSpecYaml(const Draft& d, const std::string& file);

}  // namespace kvplan
