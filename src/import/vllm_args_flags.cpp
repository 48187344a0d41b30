// The table of vLLM's flags as kvplan reads them: the flags that size the
// KV cache (with the EngineArgs field each sets), their short aliases, and
// the lists that sort every other flag into switches, list flags, flags that
// change memory kvplan does not model, and flags known to be harmless.
// ParseVllmCommand (vllm_args.cpp) looks each word up here.
#include <algorithm>
#include <iterator>
#include <map>

#include "import/vllm_args_internal.h"

namespace kvplan {
namespace {

// True where `name` is in `list`.
template <size_t N>
bool Listed(const char* const (&list)[N], const std::string& name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

}  // namespace

// vLLM's flags that size the cache (vllm/engine/arg_utils.py), with their aliases.
const std::vector<VllmFlag>& VllmFlags() {
  static const std::vector<VllmFlag> kFlags = {
      {"--model", "", VllmFlagKind::kText},
      {"--max-model-len", "max_model_len", VllmFlagKind::kTokens},
      {"--max-num-seqs", "max_num_seqs", VllmFlagKind::kCount},
      {"--gpu-memory-utilization", "memory_fraction", VllmFlagKind::kFraction},
      {"--kv-cache-dtype", "kv_cache_dtype", VllmFlagKind::kText},
      {"--tensor-parallel-size", "tp", VllmFlagKind::kCount},
      {"--pipeline-parallel-size", "pp", VllmFlagKind::kCount},
      {"--data-parallel-size", "dp", VllmFlagKind::kCount},
      {"--block-size", "block_size", VllmFlagKind::kCount},
      {"--num-gpu-blocks-override", "num_gpu_blocks_override", VllmFlagKind::kCount},
      {"--enable-prefix-caching", "prefix_caching", VllmFlagKind::kFlag},
      {"--no-enable-prefix-caching", "prefix_caching", VllmFlagKind::kNegFlag},
      {"--max-num-batched-tokens", "max_num_batched_tokens", VllmFlagKind::kTokens},
      {"--kv-cache-memory-bytes", "kv_cache_memory_bytes", VllmFlagKind::kBytes},
      {"--kv-cache-memory", "kv_cache_memory_bytes", VllmFlagKind::kBytes},
      {"--max-cudagraph-capture-size", "cuda_graph_max_bs", VllmFlagKind::kCount},
      {"--enforce-eager", "enforce_eager", VllmFlagKind::kFlag},
      {"--enable-expert-parallel", "expert_parallel", VllmFlagKind::kFlag},
      {"--no-enable-expert-parallel", "expert_parallel", VllmFlagKind::kNegFlag},
      {"--disable-hybrid-kv-cache-manager", "disable_hybrid", VllmFlagKind::kFlag},
      {"--mamba-ssm-cache-dtype", "mamba_ssm_dtype", VllmFlagKind::kText},
      {"--mamba-cache-dtype", "mamba_cache_dtype", VllmFlagKind::kText},
      {"--no-disable-hybrid-kv-cache-manager", "disable_hybrid", VllmFlagKind::kNegFlag},
      {"--no-enforce-eager", "enforce_eager", VllmFlagKind::kNegFlag},
      {"--dtype", "weight_dtype", VllmFlagKind::kText},
      {"--quantization", "quantization", VllmFlagKind::kText},
      {"--speculative-config", "speculative", VllmFlagKind::kText},
  };
  return kFlags;
}

std::string Canonical(const std::string& word) {
  static const std::map<std::string, std::string> kAliases = {
      {"-tp", "--tensor-parallel-size"},   {"-pp", "--pipeline-parallel-size"},
      {"-dp", "--data-parallel-size"},     {"-q", "--quantization"},
      {"-ep", "--enable-expert-parallel"},
  };
  auto it = kAliases.find(word);
  if (it != kAliases.end()) return it->second;
  std::string w = word;
  // vLLM accepts --max_model_len as well as --max-model-len.
  if (w.rfind("--", 0) == 0) {
    for (size_t i = 2; i < w.size(); ++i) {
      if (w[i] == '_') w[i] = '-';
    }
  }
  return w;
}

// vLLM flags that take no value (store_true, or BooleanOptionalAction given
// bare): the word after one is the next argument, perhaps the model.
bool IsSwitch(const std::string& name) {
  static const char* const kSwitches[] = {
      "--trust-remote-code",          "--skip-tokenizer-init",       "--headless",
      "--async-scheduling",           "--calculate-kv-scales",       "--fully-sharded-loras",
      "--return-tokens-as-token-ids", "--multi-step-stream-outputs", "--use-tqdm-on-load",
      "--ray-workers-use-nsight",     "--data-parallel-hybrid-lb",   "--data-parallel-external-lb",
      "--allow-credentials"};
  if (name.starts_with("--enable-") || name.starts_with("--disable-") ||
      name.starts_with("--no-")) {
    return true;
  }
  return Listed(kSwitches, name);
}

// vLLM flags that take one or more values (nargs='+').
bool TakesList(const std::string& name) {
  static const char* const kLists[] = {
      "--served-model-name", "--lora-modules",    "--prompt-adapters",
      "--allowed-origins",   "--allowed-methods", "--allowed-headers",
      "--middleware",        "--api-key",         "--long-lora-scaling-factors"};
  return Listed(kLists, name);
}

// vLLM flags that change the GPU memory the cache is left with, in ways
// kvplan does not model: named apart from the harmless ones, since the
// figures assume them absent.
bool ChangesMemory(const std::string& name) {
  static const char* const kFlags[] = {"--cpu-offload-gb",
                                       "--enable-lora",
                                       "--max-loras",
                                       "--max-lora-rank",
                                       "--limit-mm-per-prompt",
                                       "--mm-encoder-tp-mode",
                                       "--hf-overrides",
                                       "--rope-scaling",
                                       "--rope-theta",
                                       "--kv-transfer-config",
                                       "--enable-eplb",
                                       "--num-redundant-experts",
                                       "--decode-context-parallel-size",
                                       "--disable-sliding-window"};
  return Listed(kFlags, name);
}

// vLLM flags known to leave the cache's memory alone: no did-you-mean for
// them (--enable-chunked-prefill is not a typo of --enable-prefix-caching).
bool KnownHarmless(const std::string& name) {
  static const char* const kFlags[] = {"--host",
                                       "--port",
                                       "--api-key",
                                       "--served-model-name",
                                       "--chat-template",
                                       "--tokenizer",
                                       "--tokenizer-mode",
                                       "--revision",
                                       "--code-revision",
                                       "--tokenizer-revision",
                                       "--download-dir",
                                       "--load-format",
                                       "--seed",
                                       "--enable-chunked-prefill",
                                       "--no-enable-chunked-prefill",
                                       "--disable-log-requests",
                                       "--disable-log-stats",
                                       "--enable-log-requests",
                                       "--uvicorn-log-level",
                                       "--enable-auto-tool-choice",
                                       "--tool-call-parser",
                                       "--reasoning-parser",
                                       "--distributed-executor-backend",
                                       "--max-logprobs",
                                       "--response-role",
                                       "--ssl-keyfile",
                                       "--ssl-certfile",
                                       "--root-path",
                                       "--generation-config",
                                       "--guided-decoding-backend",
                                       "--structured-outputs-config",
                                       "--scheduling-policy",
                                       "--disable-custom-all-reduce",
                                       "--hf-token",
                                       "--disable-fastapi-docs",
                                       "--enable-prompt-tokens-details",
                                       "--enable-server-load-tracking",
                                       "--api-server-count",
                                       "--lora-modules",
                                       "--override-generation-config",
                                       "--enable-request-id-headers",
                                       "--chat-template-content-format",
                                       "--swap-space",
                                       "--kv-offloading-size",
                                       "--max-cpu-loras"};
  return Listed(kFlags, name);
}

}  // namespace kvplan
