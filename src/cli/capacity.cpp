// kvplan capacity: the memory breakdown of one deployment (weights, reserve,
// KV budget) the way the chosen engine sizes it, tokens in cache, concurrency
// at max-model-len, and the engine's own startup lines.
#include "plan/capacity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "cli/commands.h"
#include "cli/deploy_flags.h"
#include "cli/model_route.h"
#include "import/resolve.h"
#include "import/speculative_config.h"
#include "report/capacity.h"
#include "spec/cache_dtype.h"
#include "spec/catalog.h"
#include "util/units.h"

namespace kvplan {
namespace {

struct CapacityOptions {
  std::string model;
  std::string revision = "main";
  DeployFlags deploy;  // the flags every deployment command shares
  // llama.cpp's own, and the multi-GPU/multi-node layout.
  std::string ctx_size, ubatch;
  std::optional<uint64_t> n_parallel;
  bool swa_full = false;
  bool kv_unified = false;
  std::string n_gpu_layers;  // -ngl N, all or -1
  std::string tensor_split;  // -ts 10,6
  bool no_kv_offload = false;
  bool enable_dp_attention = false;        // SGLang, TensorRT-LLM
  bool enable_expert_parallel = false;     // vLLM
  bool disable_hybrid = false;             // vLLM
  std::optional<uint64_t> ep_size;         // SGLang, TensorRT-LLM
  std::string flash_attn;                  // -fa on|off|auto
  std::string cache_type_k, cache_type_v;  // -ctk, -ctv
  uint64_t dp = 1;
  std::string max_gpu_total_bytes;
  std::string host_cache_size;
  std::string speculative_config;  // vLLM's JSON: {"method": "mtp"} or {"model": ...}
  std::optional<uint64_t> num_gpu_blocks_override;
  std::optional<uint64_t> cuda_graph_max_bs;
  bool enable_prefix_caching = false;
  std::string concurrency;
  std::string format = "text";
};

uint64_t OptTokens(const std::string& s, const char* flag) {
  return s.empty() ? 0 : ParseTokens(s, flag);
}

// Another engine's flag is an error, as -c is.
void OnlyFor(const EngineConfig& c, bool given, Engine engine, const char* flag) {
  if (given && c.engine != engine) {
    Fail("{} is {}'s flag, not {}'s (or use --engine {})", flag, EngineName(engine),
         EngineName(c.engine), EngineName(engine));
  }
}

// -ctk and -ctv: kvplan models one cache type for K and V, as a deployment
// config's cache_type_k/cache_type_v; llama.cpp keeps f16 for the one not
// given.
void ApplyCacheTypes(const CapacityOptions& o, EngineConfig& c) {
  if (o.cache_type_k.empty() && o.cache_type_v.empty()) return;
  if (o.deploy.kv_cache_dtype != "auto") {
    Fail("-ctk/-ctv and --kv-cache-dtype both set the cache type: give one");
  }
  const std::string k = o.cache_type_k.empty() ? "f16" : o.cache_type_k;
  const std::string v = o.cache_type_v.empty() ? "f16" : o.cache_type_v;
  if (k != v) {
    Fail(
        "-ctk {} and -ctv {} differ (llama.cpp's default is f16); kvplan models one cache "
        "type for K and V, so give both, equal",
        k, v);
  }
  FindCacheDtype(k);
  c.kv_cache_dtype = k;
}

// llama.cpp's own flags: sequences, batch, cache types, layer placement.
void ApplyLlamaCppFlags(const CapacityOptions& o, uint64_t model_max_context, EngineConfig& c) {
  const auto only = [&](bool given, const char* flag) {
    OnlyFor(c, given, Engine::kLlamaCpp, flag);
  };
  only(o.n_parallel.has_value(), "-np/--parallel");
  only(!o.ubatch.empty(), "--ubatch-size");
  only(o.swa_full, "--swa-full");
  only(o.kv_unified, "--kv-unified");
  only(!o.n_gpu_layers.empty(), "-ngl/--n-gpu-layers");
  only(!o.tensor_split.empty(), "-ts/--tensor-split");
  only(o.no_kv_offload, "-nkvo/--no-kv-offload");
  only(!o.flash_attn.empty(), "-fa/--flash-attn");
  only(!o.cache_type_k.empty() || !o.cache_type_v.empty(), "-ctk/-ctv");
  c.kv_unified = o.kv_unified;
  c.no_kv_offload = o.no_kv_offload;
  if (!o.n_gpu_layers.empty()) c.n_gpu_layers = ParseGpuLayers(o.n_gpu_layers, "-ngl");
  if (!o.tensor_split.empty()) {
    c.tensor_split = ParseTensorSplit(o.tensor_split, "-ts");
    // llama.cpp splits over every GPU it sees: one share each.
    if (o.deploy.pp == 1) c.pp = c.tensor_split.size();
  }
  if (!o.flash_attn.empty()) c.flash_attn = o.flash_attn;
  ApplyCacheTypes(o, c);
  // An explicit 0 is an error (it would have meant the default).
  if (o.n_parallel == uint64_t{0}) Fail("-np/--parallel: must be at least 1");
  c.n_parallel = o.n_parallel.value_or(0);
  c.n_ubatch = OptTokens(o.ubatch, "--ubatch-size");
  if (!o.ubatch.empty() && c.n_ubatch == 0) Fail("--ubatch-size: must be at least 1");
  c.swa_full = o.swa_full;
  // llama.cpp has one context flag, -c, for all its sequences; --max-model-len
  // (tokens per sequence) stands in for it when -c is absent. Both given and
  // apart, one would be ignored: an error, naming what each means (-c 0 is
  // the model's context, so it is compared against that).
  if (!o.ctx_size.empty() && !o.deploy.max_model_len.empty() && c.max_model_len != 0) {
    const uint64_t seqs = std::max<uint64_t>(1, c.n_parallel);
    const uint64_t cells = c.n_ctx_from_model ? model_max_context : c.n_ctx;
    if (cells / seqs != c.max_model_len) {
      const std::string np = o.n_parallel ? fmt::format(" -np {}", seqs) : "";
      Fail(
          "--max-model-len {} and -c {}{} disagree: llama.cpp gives each sequence -c / -np "
          "cells ({} here{}), and --max-model-len only stands in for -c when -c is absent; give "
          "one",
          WithCommas(c.max_model_len), c.n_ctx_from_model ? "0" : WithCommas(c.n_ctx), np,
          WithCommas(cells / seqs), c.n_ctx_from_model ? ", -c 0 being the model's context" : "");
    }
  }
}

// The paged engines' pool and MoE flags: vLLM's block override, hybrid
// manager and expert parallelism; SGLang's and TensorRT-LLM's data-parallel
// attention and expert ranks; TensorRT-LLM's pool and host pool bytes.
void ApplyPoolFlags(const CapacityOptions& o, EngineConfig& c) {
  OnlyFor(c, !o.max_gpu_total_bytes.empty(), Engine::kTrtllm, "--max-gpu-total-bytes");
  OnlyFor(c, !o.host_cache_size.empty(), Engine::kTrtllm, "--host-cache-size");
  OnlyFor(c, o.num_gpu_blocks_override.has_value(), Engine::kVllm, "--num-gpu-blocks-override");
  OnlyFor(c, o.enable_expert_parallel, Engine::kVllm, "--enable-expert-parallel");
  OnlyFor(c, o.disable_hybrid, Engine::kVllm, "--disable-hybrid-kv-cache-manager");
  c.num_gpu_blocks_override = o.num_gpu_blocks_override.value_or(0);
  c.disable_hybrid_kv_cache_manager = o.disable_hybrid;
  if (o.enable_dp_attention && c.engine != Engine::kSglang && c.engine != Engine::kTrtllm) {
    Fail(
        "--enable-dp-attention is SGLang's and TensorRT-LLM's (vLLM: --dp with "
        "--enable-expert-parallel)");
  }
  if (o.ep_size && c.engine != Engine::kSglang && c.engine != Engine::kTrtllm)
    Fail("--ep-size is SGLang's and TensorRT-LLM's (vLLM: --enable-expert-parallel)");
  ApplyMoeLayout(c, o.enable_dp_attention, o.enable_expert_parallel, o.ep_size);
  if (!o.max_gpu_total_bytes.empty()) {
    c.max_gpu_total_bytes = ParseBytes(o.max_gpu_total_bytes, "--max-gpu-total-bytes");
  }
  if (!o.host_cache_size.empty()) {
    c.host_cache_size = ParseBytes(o.host_cache_size, "--host-cache-size");
  }
}

// model_max_context: what llama.cpp's -c 0 stands for.
EngineConfig ToConfig(const CapacityOptions& o, uint64_t model_max_context) {
  EngineConfig c = ToEngineConfig(o.deploy);
  c.n_ctx = OptTokens(o.ctx_size, "--ctx-size");
  c.n_ctx_from_model = !o.ctx_size.empty() && c.n_ctx == 0;  // llama.cpp: -c 0 = the model's
  if (!o.ctx_size.empty() && c.engine != Engine::kLlamaCpp) {
    Fail("-c/--ctx-size is llama.cpp's flag (use --max-model-len or --engine llama.cpp)");
  }
  ApplyLlamaCppFlags(o, model_max_context, c);
  c.dp = o.dp;
  ApplyPoolFlags(o, c);
  if (o.cuda_graph_max_bs == uint64_t{0}) {
    Fail("--cuda-graph-max-bs: must be at least 1 (--enforce-eager: no CUDA graphs)");
  }
  c.cuda_graph_max_bs = o.cuda_graph_max_bs.value_or(0);
  if (o.enable_prefix_caching && c.disable_radix_cache) {
    Fail("--enable-prefix-caching and --disable-radix-cache contradict each other");
  }
  c.enable_prefix_caching = o.enable_prefix_caching;
  return c;
}

// Prints the capacity; returns false when the engine would refuse to start
// (its startup error is in the output, as the engine prints it).
bool Run(const CapacityOptions& o) {
  ModelSpec m = LoadModelAndSay(o.model, o.revision);
  HardwareSpec gpu = LoadHardware(o.deploy.gpu);
  EngineConfig config = ToConfig(o, m.max_context);
  if (!o.speculative_config.empty()) {
    if (config.engine == Engine::kLlamaCpp)
      Fail("--speculative-config is for vLLM, SGLang and TensorRT-LLM (llama.cpp: -md)");
    std::vector<std::string> ignored;
    const SpeculativeArgs s =
        ReadSpeculativeConfig(o.speculative_config, "--speculative-config", ignored);
    ResolveSpeculative(s, m, "--speculative-config", config.mtp_layers, config.draft_model);
    config.num_speculative_tokens = s.num_tokens;
  }
  std::optional<uint64_t> concurrency;
  if (!o.concurrency.empty()) {
    concurrency = ParseTokens(o.concurrency, "--concurrency");
    if (*concurrency == 0) Fail("--concurrency: must be at least 1");
  }
  const CapacityResult r = CapacityOrFail(m, gpu, config);
  uint64_t at = concurrency ? MaxModelLenAtConcurrency(r, *concurrency) : 0;
  switch (ToFormat(o.format)) {
    case Format::kJson:
      Print(CapacityJson(m, gpu, r, concurrency, at).Dump() + "\n");
      break;
    case Format::kCsv:
      Print(CapacityCsv(m, gpu, r));
      break;
    case Format::kText:
      Print(CapacityText(m, gpu, r, concurrency, at, OutputWidth()));
      break;
  }
  return !EngineRefusesToStart(r);
}

}  // namespace

void SetupCapacityCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CapacityOptions>();
  CLI::App* sub = app.add_subcommand(
      "capacity",
      "Memory breakdown, tokens in cache and max concurrency, the way an engine sizes it");
  sub->add_option("model", o->model, "Catalog name, HF repo id, spec YAML or config.json")
      ->required();
  AddRevisionOption(sub, o->revision);
  AddDeployFlags(sub, o->deploy);
  sub->add_option("-c,--ctx-size", o->ctx_size,
                  "llama.cpp: total cells for all sequences (default 4096; 0: the model's "
                  "max_context, as llama.cpp loads it)");
  sub->add_option("--np,--parallel", o->n_parallel,
                  "llama.cpp: sequences (-np, default 1; at most 65536)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 16));
  sub->add_option("--ubatch-size", o->ubatch, "llama.cpp: physical batch n_ubatch (default 512)");
  sub->add_flag("--swa-full", o->swa_full, "llama.cpp: full-size cache for sliding-window layers");
  sub->add_option("--ngl,--n-gpu-layers,--gpu-layers", o->n_gpu_layers,
                  "llama.cpp: layers on the GPUs (-ngl; default all); the others, and their "
                  "cache, stay in host memory");
  sub->add_option("--ts,--tensor-split", o->tensor_split,
                  "llama.cpp: each GPU's share of the layers, e.g. 10,6 (-ts; one per GPU, sets "
                  "-pp)");
  sub->add_flag("--nkvo,--no-kv-offload", o->no_kv_offload,
                "llama.cpp: keep the KV cache in host memory (-nkvo)");
  sub->add_flag("--kvu,--kv-unified", o->kv_unified,
                "llama.cpp: one cache for all -np sequences (-kvu); without it each sequence "
                "has its own PAD(-c / -np, 256) cells");
  sub->add_option("--fa,--flash-attn", o->flash_attn,
                  "llama.cpp: flash attention on, off or auto (-fa; default auto); a quantized V "
                  "cache needs it")
      ->check(CLI::IsMember({"on", "off", "auto"}));
  sub->add_option("--ctk,--cache-type-k", o->cache_type_k,
                  "llama.cpp: K cache type (-ctk; f16, q8_0, q4_0, ...); equal to -ctv");
  sub->add_option("--ctv,--cache-type-v", o->cache_type_v,
                  "llama.cpp: V cache type (-ctv); equal to -ctk");
  sub->add_option("--dp,--data-parallel-size", o->dp, "Data-parallel replicas (also -dp)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 16))
      ->capture_default_str();
  sub->add_flag("--enable-dp-attention", o->enable_dp_attention,
                "SGLang: --dp attention groups inside the tp group; TensorRT-LLM "
                "(enable_attention_dp): every rank its own requests");
  sub->add_flag("--disable-hybrid-kv-cache-manager", o->disable_hybrid,
                "vLLM: one KV-cache group, sliding-window layers cached in full");
  sub->add_flag("--enable-expert-parallel", o->enable_expert_parallel,
                "vLLM: the routed experts dealt whole over tp x dp GPUs");
  sub->add_option("--ep-size", o->ep_size,
                  "SGLang, TensorRT-LLM: ranks the routed experts are dealt over")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 16));
  sub->add_option("--speculative-config", o->speculative_config,
                  "Speculative decoding, as vLLM's JSON: {\"method\": \"mtp\"} serves the model's "
                  "MTP layers, {\"model\": \"NAME\"} a draft model; its cache and weights are "
                  "counted");
  sub->add_option("--max-gpu-total-bytes", o->max_gpu_total_bytes,
                  "TensorRT-LLM: the KV pool's bytes (replaces the memory fraction's estimate)");
  sub->add_option("--host-cache-size", o->host_cache_size,
                  "TensorRT-LLM: a secondary KV pool in host memory, e.g. 32GiB");
  sub->add_option("--num-gpu-blocks-override", o->num_gpu_blocks_override,
                  "vLLM: the number of KV blocks, whatever memory gives (for testing)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  sub->add_option("--cuda-graph-max-bs", o->cuda_graph_max_bs,
                  "Largest CUDA-graph batch (engine default; at most 65536)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 16));
  sub->add_flag("--enable-prefix-caching", o->enable_prefix_caching,
                "Recorded for the paging planner");
  sub->add_option("--concurrency", o->concurrency,
                  "Also report the longest max_model_len at this concurrency");
  AddFormatOption(sub, o->format);
  sub->footer(R"(Examples:
  kvplan capacity llama-3.1-8b --gpu h100-sxm
  kvplan capacity llama-3.1-70b --gpu a100-80gb -tp 4 --max-model-len 32K --kv-cache-dtype fp8
  kvplan capacity llama-3.1-8b --gpu rtx-3090 --max-model-len 20000 --kv-cache-memory-bytes 3.8125GiB
  kvplan capacity llama-3.1-8b --gpu h100-sxm --vllm-version 0.20
  kvplan capacity qwen3-32b --gpu h200 --engine sglang --mem-fraction-static 0.88 --format json
  kvplan capacity llama-2-7b --gpu a100-80gb --engine trtllm --free-gpu-memory-fraction 0.95
  kvplan capacity qwen2.5-32b --gpu rtx-4090 --engine llama.cpp -c 32K -ctk q8_0 -ctv q8_0 -ts 10,6 --weight-dtype int4
  kvplan capacity gemma-3-27b --gpu rtx-4090 --engine llama.cpp -c 32K -np 4 --kv-cache-dtype q8_0 --weight-dtype int4
  kvplan capacity llama-3.1-8b --gpu rtx-4090 --engine llama.cpp -c 32768 -np 4 -ctk q8_0 -ctv q8_0 -fa on
  kvplan capacity deepseek-v3 --gpu h200 -tp 8 --nodes 2 -pp 2 --weight-dtype fp8 --concurrency 64
  kvplan capacity llama-3.1-8b --gpu ./my-profile.yaml --reserve 2GiB

Exit status: 0; 1 when the engine would refuse to start (a max_model_len request that
does not fit the cache: vLLM's ValueError, llama.cpp's failed allocation); 2 on bad input.)");
  sub->callback([o, &exit_code] { exit_code = Run(*o) ? 0 : 1; });
}

}  // namespace kvplan
