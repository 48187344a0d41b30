// Engine configuration: each engine's defaults for a model and GPU, and the
// lints that make a configuration impossible or worth a second look.
#include <algorithm>

#include "plan/capacity.h"
#include "util/checked.h"
#include "util/units.h"

namespace kvplan {
namespace {

constexpr uint64_t kDefaultGpusPerNode = 8;

void AddLint(std::vector<Lint>& lints, Severity s, std::string code, std::string message) {
  lints.push_back({s, std::move(code), std::move(message)});
}

}  // namespace

WeightFormat ResolvedWeightFormat(const ModelSpec& m, const EngineConfig& c) {
  if (!c.weight_dtype.empty() || m.quantization) {
    return ModelWeightFormat(m, c.weight_dtype, c.quant_group_size);
  }
  // A float dtype named outright casts the (unquantized) weights to it.
  if (!c.activation_dtype.empty()) return FindWeightFormat(c.activation_dtype);
  // vLLM/SGLang/TRT-LLM run fp32 checkpoints in bf16 (dtype "auto").
  if (m.weight_dtype == "fp32" && c.engine != Engine::kLlamaCpp) return FindWeightFormat("bf16");
  return FindWeightFormat(m.weight_dtype, c.quant_group_size);
}

std::string ResolvedCacheDtype(const ModelSpec& m, const EngineConfig& c) {
  if (!c.kv_cache_dtype.empty() && c.kv_cache_dtype != "auto") return c.kv_cache_dtype;
  if (c.engine == Engine::kLlamaCpp) return "fp16";
  if (!c.activation_dtype.empty()) return c.activation_dtype;  // fp32, fp16 or bf16
  // Float weights are the activations' type; quantized ones run the model's
  // (an AWQ Llama-2 keeps an fp16 cache).
  const WeightFormat f = ResolvedWeightFormat(m, c);
  if (!f.Quantized()) return std::string(AutoCacheDtype(f.name));
  // The type the unquantized model runs in (an fp32 checkpoint: bf16).
  return std::string(AutoCacheDtype(m.weight_dtype == "fp32" ? "bf16" : m.weight_dtype));
}

void ApplyMoeLayout(EngineConfig& c, bool dp_attention, bool expert_parallel,
                    std::optional<uint64_t> ep_size) {
  if (dp_attention && c.engine == Engine::kSglang) {
    c.attention_dp = c.dp;
    c.dp = 1;
  } else if (dp_attention && c.engine == Engine::kTrtllm) {
    c.attention_dp = c.tp;
  }
  if (expert_parallel) c.expert_parallel = c.engine == Engine::kVllm ? c.tp * c.dp : c.tp;
  if (ep_size) c.expert_parallel = *ep_size;
}

EngineConfig ResolveEngineConfig(const ModelSpec& m, const HardwareSpec& gpu,
                                 const EngineConfig& in) {
  EngineConfig c = in;
  if (c.tp == 0) c.tp = 1;
  if (c.pp == 0) c.pp = 1;
  if (c.dp == 0) c.dp = 1;
  if (c.nodes == 0) c.nodes = 1;
  if (c.gpus_per_node == 0) c.gpus_per_node = kDefaultGpusPerNode;
  if (c.memory_fraction == 0)
    c.memory_fraction = DefaultMemoryFraction(c.engine, gpu, c.tp, c.vllm_version);
  if (c.block_size == 0) c.block_size = DefaultBlockSize(c.engine);
  if (c.kv_cache_dtype.empty()) c.kv_cache_dtype = "auto";
  if (c.quant_group_size == 0) c.quant_group_size = 128;
  const bool big = gpu.TotalMemoryBytes() >= 70 * kGiB;
  switch (c.engine) {
    case Engine::kVllm: {
      // arg_utils.py get_batch_defaults (API server): >= 70 GiB and not an
      // A100: 8192 batched tokens and 1024 sequences; else 2048 and 256.
      const bool large = big && gpu.name.find("a100") == std::string::npos;
      if (c.max_num_batched_tokens == 0) c.max_num_batched_tokens = large ? 8192 : 2048;
      // arg_utils.py: an unset max_num_seqs at most max_num_batched_tokens
      // (a given one above it is vLLM's startup error, LintConfig).
      if (c.max_num_seqs == 0)
        c.max_num_seqs = std::min<uint64_t>(large ? 1024 : 256, c.max_num_batched_tokens);
      // config/vllm.py: the listed sizes up to max_num_batched_tokens, else
      // min(512, 2 x max_num_seqs); the capture size at most
      // max_num_batched_tokens either way.
      // No graphs (enforce_eager, cudagraph_mode NONE, -O0): vLLM empties the
      // list and zeroes the capture size, so sizes given with them are
      // neither captured nor checked against each other.
      if (c.enforce_eager) {
        c.cuda_graph_sizes.clear();
      } else if (!c.cuda_graph_sizes.empty()) {
        uint64_t kept = 0;  // 0: every size above max_num_batched_tokens, none captured
        for (uint64_t s : c.cuda_graph_sizes) {
          if (s <= c.max_num_batched_tokens) kept = std::max(kept, s);
        }
        // A capture size given beside the list must be the largest size kept.
        if (c.cuda_graph_max_bs != 0 && c.cuda_graph_max_bs != kept) {
          c.cuda_graph_error = fmt::format(
              "customized max_cudagraph_capture_size(={}) should be consistent with the max value "
              "of cudagraph_capture_sizes(={})",
              c.cuda_graph_max_bs, kept);
        }
        c.cuda_graph_max_bs = kept;
      } else if (c.cuda_graph_max_bs == 0) {
        c.cuda_graph_max_bs = std::min<uint64_t>(512, 2 * c.max_num_seqs);
      }
      c.cuda_graph_max_bs = std::min(c.cuda_graph_max_bs, c.max_num_batched_tokens);
      break;
    }
    case Engine::kSglang: {
      const double gib = static_cast<double>(gpu.TotalMemoryBytes()) / static_cast<double>(kGiB);
      if (c.max_num_batched_tokens == 0) {  // chunked_prefill_size
        c.max_num_batched_tokens = gib < 35 ? 2048 : gib < 60 ? 4096 : gib < 160 ? 8192 : 16384;
      }
      if (c.cuda_graph_max_bs == 0) {
        c.cuda_graph_max_bs = gib < 20    ? 8
                              : gib < 35  ? (c.tp < 4 ? 24 : 80)
                              : gib < 60  ? (c.tp < 4 ? 32 : 160)
                              : gib < 160 ? (c.tp < 4 ? 256 : 512)
                                          : 512;
      }
      if (c.max_num_seqs == 0) c.max_num_seqs = c.cuda_graph_max_bs;
      break;
    }
    case Engine::kTrtllm:
      // trtllm-serve defaults: max_num_tokens 8192, max_batch_size 2048 (TorchLlmArgs).
      if (c.max_num_batched_tokens == 0) c.max_num_batched_tokens = 8192;
      if (c.max_num_seqs == 0) c.max_num_seqs = 2048;
      if (c.cuda_graph_max_bs == 0) c.cuda_graph_max_bs = 128;
      break;
    case Engine::kLlamaCpp:
      if (c.n_parallel == 0) c.n_parallel = 1;
      if (c.n_ubatch == 0) c.n_ubatch = 512;
      if (c.n_batch == 0) c.n_batch = 2048;
      // llama-context.cpp: n_ctx 0 is the context the model was trained for.
      if (c.n_ctx == 0 && c.n_ctx_from_model) c.n_ctx = m.max_context;
      if (c.n_ctx == 0) {
        c.n_ctx = c.max_model_len != 0 ? CheckedMul(c.max_model_len, c.n_parallel,
                                                    "n_ctx = max_model_len x n_parallel")
                                       : 4096;
      }
      // Each sequence gets n_ctx / n_parallel cells. With more sequences than
      // cells that is 0, which LintConfig refuses: it is not "unset", so it
      // must not become the model's max_context below.
      c.max_model_len = c.n_ctx / c.n_parallel;
      // Without --kv-unified each of several sequences is a stream of
      // PAD(PAD(n_ctx) / n_parallel) cells (llama-context.cpp): that is
      // each one's context (-c 1024 -np 3: 512 tokens, not 341).
      if (!c.kv_unified && c.n_parallel > 1 && c.max_model_len > 0) {
        c.max_model_len = RoundUp(RoundUp(c.n_ctx, c.block_size, "llama.cpp n_ctx") / c.n_parallel,
                                  c.block_size, "llama.cpp n_ctx_seq");
      }
      c.max_num_seqs = c.n_parallel;
      c.max_num_batched_tokens = c.n_ubatch;
      c.memory_fraction = 1.0;
      return c;
  }
  if (c.max_model_len == 0) c.max_model_len = m.max_context;
  return c;
}

namespace {

// What vLLM (and SGLang, which shares its quantization code) refuses about
// the weights at startup.
void WeightLints(const ModelSpec& m, const EngineConfig& c, std::vector<Lint>& lints) {
  try {
    const WeightFormat f = ResolvedWeightFormat(m, c);
    const std::string method = c.engine_quantization ? FindWeightFormat(c.weight_dtype).name : "";
    if (m.quantization && !method.empty() && method != "checkpoint" &&
        method != m.quantization->format) {
      AddLint(lints, Severity::kError, "quantization-mismatch",
              fmt::format("Quantization method specified in the model config ({}) does not match "
                          "the quantization method specified in the `quantization` argument ({})",
                          m.quantization->format, c.weight_dtype));
    }
    // vLLM's Mxfp4Config takes bf16 only; SGLang's takes fp16 too.
    const bool bf16_only = f.name == "mxfp4" && c.engine == Engine::kVllm;
    const bool bad_act = f.Quantized() && (c.activation_dtype == "fp32" ||
                                           (bf16_only && c.activation_dtype == "fp16"));
    if (bad_act) {
      AddLint(lints, Severity::kError, "dtype-quantization",
              fmt::format("{} activations are not supported for {} weights (supported: {})",
                          c.activation_dtype, f.name, bf16_only ? "bf16" : "bf16, fp16"));
    }
    const std::string tiling = BlockTilingError(BuildModelTensors(m), f, c.tp);
    if (!tiling.empty()) AddLint(lints, Severity::kError, "fp8-block-tp", tiling);
  } catch (const Error& e) {
    AddLint(lints, Severity::kError, "weight-dtype", e.what());
  }
}

}  // namespace

std::vector<Lint> LintConfig(const ModelSpec& m, const HardwareSpec& gpu, const EngineConfig& c) {
  std::vector<Lint> lints;
  (void)gpu;
  if (!c.cuda_graph_error.empty())
    AddLint(lints, Severity::kError, "vllm-cudagraph-sizes", c.cuda_graph_error);
  if (c.engine == Engine::kVllm && c.max_num_batched_tokens != 0 &&
      c.max_num_batched_tokens < c.max_num_seqs) {
    // config/scheduler.py _verify_args, in its words.
    AddLint(lints, Severity::kError, "vllm-batched-tokens",
            fmt::format(
                "max_num_batched_tokens ({}) must be greater than or equal to max_num_seqs ({}).",
                c.max_num_batched_tokens, c.max_num_seqs));
  }
  if (c.memory_fraction <= 0 && c.engine == Engine::kSglang) {
    // No flag gives a fraction <= 0 (they refuse it): this one is SGLang's
    // own, derived from the GPU's size, whose reserve does not fit on it.
    const double total_gib = static_cast<double>(gpu.TotalMemoryBytes()) / kGiB;
    AddLint(lints, Severity::kError, "memory-fraction",
            fmt::format("the GPU is too small for SGLang: its {:.2f} GiB are less than the reserve "
                        "SGLang keeps for activations and CUDA graphs ({:.2f} GiB), so the "
                        "--mem-fraction-static it derives is {:g} and leaves nothing for the "
                        "model's weights and KV cache (use a larger GPU, or give "
                        "--mem-fraction-static)",
                        total_gib, total_gib * (1 - c.memory_fraction), c.memory_fraction));
  } else if (c.memory_fraction <= 0 || c.memory_fraction > 1) {
    AddLint(lints, Severity::kError, "memory-fraction",
            fmt::format("{} must be in (0, 1], got {}", MemoryFractionFlag(c.engine),
                        c.memory_fraction));
  }
  const uint64_t per_replica = c.tp * c.pp;
  const uint64_t available = c.nodes * c.gpus_per_node;
  if (per_replica * c.dp > available) {
    AddLint(lints, Severity::kError, "gpus",
            fmt::format("tp {} x pp {} x dp {} needs {} GPUs but {} node(s) x {} GPUs per node "
                        "have {}",
                        c.tp, c.pp, c.dp, per_replica * c.dp, c.nodes, c.gpus_per_node, available));
  }
  if (c.attention_dp > 1 && c.tp % c.attention_dp != 0) {
    AddLint(lints, Severity::kError, "attention-dp",
            fmt::format("data-parallel attention over {} groups needs tp ({}) to be a multiple of "
                        "it",
                        c.attention_dp, c.tp));
  }
  if (c.expert_parallel > 1 && !m.moe) {
    AddLint(lints, Severity::kWarning, "expert-parallel",
            fmt::format("expert parallelism has no effect: {} has no routed experts", m.name));
  }
  if (c.pp > m.layers) {
    AddLint(lints, Severity::kError, "pp-layers",
            fmt::format("pipeline parallel size {} is more than the {} layers of {}", c.pp,
                        m.layers, m.name));
  }
  bool quantized_cache = false;
  try {
    const CacheDtype& dtype = FindCacheDtype(ResolvedCacheDtype(m, c));
    quantized_cache = dtype.IsBlock();
    std::string why = CacheDtypeUnsupported(c.engine, m, dtype);
    if (!why.empty()) AddLint(lints, Severity::kError, "dtype-engine", why);
    CheckKvConfig(m, dtype, c.tp);
  } catch (const Error& e) {
    AddLint(lints, Severity::kError, "kv-config", e.what());
  }
  if (c.engine == Engine::kVllm || c.engine == Engine::kSglang) WeightLints(m, c, lints);
  if (quantized_cache && c.engine == Engine::kLlamaCpp && c.flash_attn != "on") {
    // llama_init_from_model: "V cache quantization requires flash_attn";
    // -fa auto turns it on only where the device supports it.
    if (c.flash_attn == "off") {
      AddLint(lints, Severity::kError, "llama-fa",
              "llama.cpp refuses a quantized V cache without flash attention (-fa off): "
              "V cache quantization requires flash_attn");
    } else {
      AddLint(lints, Severity::kWarning, "llama-fa",
              "llama.cpp needs flash attention for a quantized V cache: -fa auto turns it on "
              "where the GPU supports it (-fa on to be sure)");
    }
  }
  if (m.mla && c.tp > 1) {
    AddLint(lints, Severity::kWarning, "mla-replicated",
            fmt::format("MLA keeps the whole latent cache on every one of the {} tensor-parallel "
                        "ranks: tp adds no cache capacity per request",
                        c.tp));
  } else if (c.tp > m.kv_heads && m.kv_heads != 0 && m.HasAttention()) {
    AddLint(lints, Severity::kWarning, "kv-replicated",
            fmt::format("tp {} is more than the {}: each head is replicated on {} ranks", c.tp,
                        Plural(m.kv_heads, "KV head"), c.tp / m.kv_heads));
  }
  for (const LayerGroup& g : m.groups) {
    if ((g.kind == LayerKind::kSliding || g.kind == LayerKind::kChunked) &&
        g.window >= c.max_model_len) {
      AddLint(lints, Severity::kWarning, "window-over-context",
              fmt::format("the {} window of {} tokens is not smaller than max_model_len {}: those "
                          "layers cache every token, like full attention",
                          LayerKindName(g.kind), g.window, c.max_model_len));
      break;
    }
  }
  if (c.max_model_len > m.max_context) {
    const bool allowed =
        c.engine == Engine::kLlamaCpp || (c.engine == Engine::kVllm && c.allow_long_max_model_len);
    AddLint(
        lints, allowed ? Severity::kWarning : Severity::kError, "max-model-len",
        c.engine == Engine::kVllm && c.allow_long_max_model_len
            ? fmt::format("max_model_len {} is more than {}'s max_context {}: vLLM takes it "
                          "(VLLM_ALLOW_LONG_MAX_MODEL_LEN=1), the model was not trained that long",
                          c.max_model_len, m.name, m.max_context)
            : fmt::format("max_model_len {} is more than {}'s max_context {} (vLLM refuses this "
                          "without VLLM_ALLOW_LONG_MAX_MODEL_LEN)",
                          c.max_model_len, m.name, m.max_context));
  }
  if (c.engine == Engine::kLlamaCpp && c.n_ctx < c.n_parallel) {
    // llama.cpp itself stops with "n_ctx_seq == 0" (llama-context.cpp).
    AddLint(lints, Severity::kError, "n-ctx-seqs",
            fmt::format("n_ctx {} is smaller than the {} parallel sequences (-np): each sequence "
                        "would get 0 cells; give -c at least {}",
                        c.n_ctx, c.n_parallel, c.n_parallel));
  } else if (c.max_model_len == 0) {
    AddLint(lints, Severity::kError, "max-model-len", "max_model_len must be at least 1 token");
  }
  return lints;
}

}  // namespace kvplan
