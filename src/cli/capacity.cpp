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
#include "report/json.h"
#include "report/table.h"
#include "spec/catalog.h"
#include "util/checked.h"
#include "util/units.h"

namespace kvplan {
namespace {

struct CapacityOptions {
  std::string model;
  DeployFlags deploy;  // the flags every deployment command shares
  // llama.cpp's own, and the multi-GPU/multi-node layout.
  std::string ctx_size, ubatch;
  std::optional<uint64_t> n_parallel;
  bool swa_full = false;
  uint64_t dp = 1;
  std::string max_gpu_total_bytes;
  std::optional<uint64_t> cuda_graph_max_bs;
  bool enable_prefix_caching = false;
  std::string concurrency;
  std::string format = "text";
};

uint64_t OptTokens(const std::string& s, const char* flag) {
  return s.empty() ? 0 : ParseTokens(s, flag);
}

// model_max_context: what llama.cpp's -c 0 stands for.
EngineConfig ToConfig(const CapacityOptions& o, uint64_t model_max_context) {
  EngineConfig c = ToEngineConfig(o.deploy);
  c.n_ctx = OptTokens(o.ctx_size, "--ctx-size");
  c.n_ctx_from_model = !o.ctx_size.empty() && c.n_ctx == 0;  // llama.cpp: -c 0 = the model's
  if (!o.ctx_size.empty() && c.engine != Engine::kLlamaCpp) {
    Fail("-c/--ctx-size is llama.cpp's flag (use --max-model-len or --engine llama.cpp)");
  }
  // Another engine's flag is an error, as -c above, and so is an explicit 0
  // (it would have meant the default).
  const auto only = [&](bool given, Engine engine, const char* flag) {
    if (given && c.engine != engine) {
      Fail("{} is {}'s flag, not {}'s (or use --engine {})", flag, EngineName(engine),
           EngineName(c.engine), EngineName(engine));
    }
  };
  only(o.n_parallel.has_value(), Engine::kLlamaCpp, "-np/--parallel");
  only(!o.ubatch.empty(), Engine::kLlamaCpp, "--ubatch-size");
  only(o.swa_full, Engine::kLlamaCpp, "--swa-full");
  only(!o.max_gpu_total_bytes.empty(), Engine::kTrtllm, "--max-gpu-total-bytes");
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
  c.dp = o.dp;
  if (!o.max_gpu_total_bytes.empty()) {
    c.max_gpu_total_bytes = ParseBytes(o.max_gpu_total_bytes, "--max-gpu-total-bytes");
  }
  if (o.cuda_graph_max_bs == uint64_t{0}) {
    Fail("--cuda-graph-max-bs: must be at least 1 (--enforce-eager: no CUDA graphs)");
  }
  c.cuda_graph_max_bs = o.cuda_graph_max_bs.value_or(0);
  c.enable_prefix_caching = o.enable_prefix_caching;
  return c;
}

/// A proportional bar of total memory: weights, reserve, KV cache, rest.
std::string MemoryBar(const CapacityResult& r, size_t width = 60) {
  const double total = static_cast<double>(r.total_memory_bytes);
  struct Seg { const char* glyph; double bytes; };
  const double kv = static_cast<double>(r.kv_used_bytes);
  const double weights = static_cast<double>(r.weights_bytes);
  const double reserve = static_cast<double>(std::min<uint64_t>(r.reserve.total_bytes, r.total_memory_bytes));
  const double rest = std::max(0.0, total - weights - reserve - kv);
  Seg segs[] = {{"\u2588", weights}, {"\u2593", reserve}, {"\u2592", kv}, {"\u2591", rest}};
  std::string bar;
  double acc = 0;
  size_t drawn = 0;
  for (const Seg& s : segs) {
    acc += s.bytes;
    size_t upto = static_cast<size_t>(std::lround(std::min(acc, total) / total * static_cast<double>(width)));
    for (; drawn < upto; ++drawn) bar += s.glyph;
  }
  for (; drawn < width; ++drawn) bar += "\u2591";
  return "  [" + bar + "]\n   \u2588 weights  \u2593 reserve  \u2592 KV cache  \u2591 not used by the engine\n";
}

std::string EngineTitle(Engine e) {
  switch (e) {
    case Engine::kVllm: return "vLLM";
    case Engine::kSglang: return "SGLang";
    case Engine::kTrtllm: return "TensorRT-LLM";
    case Engine::kLlamaCpp: return "llama.cpp";
  }
  return "";
}

std::string ToText(const ModelSpec& m, const HardwareSpec& gpu, const CapacityResult& r,
                   std::optional<uint64_t> concurrency, uint64_t at_concurrency) {
  const EngineConfig& c = r.config;
  std::string out;
  out += fmt::format("{} on {} · {} · tp {} · pp {} · dp {} · weights {} · KV cache {}\n", m.name,
                     gpu.display_name, EngineLabel(c), c.tp, c.pp, c.dp, r.weight_format,
                     r.kv_cache_dtype);
  if (c.engine == Engine::kLlamaCpp) {
    out += fmt::format("n_ctx {} cells ({} sequence{} x {} tokens{}) · n_ubatch {}\n\n",
                       WithCommas(r.cells), c.n_parallel, c.n_parallel == 1 ? "" : "s",
                       WithCommas(c.max_model_len),
                       c.n_ctx_from_model ? "; -c 0: the model's max_context" : "", c.n_ubatch);
  } else {
    out +=
        fmt::format("max_model_len {} · max_num_batched_tokens {} · max_num_seqs {} · block {}\n\n",
                    FormatTokens(c.max_model_len), WithCommas(c.max_num_batched_tokens),
                    c.max_num_seqs, Plural(c.block_size, "token"));
  }
  Table t({"memory per GPU", "bytes", "binary", "decimal"});
  auto row = [&](const std::string& label, uint64_t bytes) {
    t.AddRow({label, WithCommas(bytes), FormatGiB(bytes), FormatGB(bytes)});
  };
  row("total", r.total_memory_bytes);
  switch (c.engine) {
    case Engine::kVllm:
    case Engine::kSglang:
      row(fmt::format("usable ({} {})", MemoryFractionFlag(c.engine), c.memory_fraction), r.usable_bytes);
      break;
    case Engine::kTrtllm:
      row("free after loading", r.usable_bytes);
      break;
    case Engine::kLlamaCpp: break;
  }
  row(r.stages.size() > 1 ? fmt::format("weights (stage {})", r.tightest_stage) : "weights", r.weights_bytes);
  row(r.reserve.overridden ? "reserve (--reserve)" : "reserve (modelled)", r.reserve.total_bytes);
  if (!r.reserve.overridden) {
    // vLLM subtracts the larger of the two profiled peaks; TRT-LLM both;
    // SGLang neither (they live in the 1 - mem_fraction_static share).
    const bool vllm = c.engine == Engine::kVllm;
    const bool act_peak = r.reserve.activation_bytes >= r.reserve.logits_bytes;
    const char* outside = c.engine == Engine::kSglang ? " (outside the fraction)" : "";
    // llama.cpp's compute buffer is one micro-batch: n_ubatch tokens, and as
    // many fp32 logits rows.
    const bool llama = c.engine == Engine::kLlamaCpp;
    const uint64_t tokens = llama ? c.n_ubatch : c.max_num_batched_tokens;
    const uint64_t rows = r.reserve.logits_rows;
    row(fmt::format("  forward pass, {}{}", Plural(tokens, "token"),
                    vllm ? (act_peak ? " (peak)" : " (not the peak)") : outside),
        r.reserve.activation_bytes);
    row(fmt::format("  logits/sampler, {}{}", Plural(rows, "row"),
                    vllm ? (act_peak ? " (not the peak)" : " (peak)") : outside),
        r.reserve.logits_bytes);
    row(c.engine == Engine::kVllm     ? "  non-torch"
        : c.engine == Engine::kSglang ? fmt::format("  CUDA context (x {} counted)", c.memory_fraction)
                                      : std::string("  CUDA context"),
        r.reserve.non_torch_bytes);
    if (r.reserve.rope_cache_bytes) row("  rotary cos/sin cache", r.reserve.rope_cache_bytes);
    if (r.reserve.cuda_graph_bytes && c.engine != Engine::kLlamaCpp) {
      // vLLM from 0.21 subtracts its estimate unless the budget is given.
      // The largest captured batch, which the estimate scales with.
      const std::string graphs = fmt::format("  CUDA graphs, batches to {}", c.cuda_graph_max_bs);
      row(c.engine == Engine::kTrtllm || (c.GraphsInBudget() && !r.graphs_subtracted) ? graphs
          : c.GraphsInBudget() ? graphs + " (estimated, subtracted)"
                               : graphs + " (outside the fraction)",
          r.reserve.cuda_graph_bytes);
    }
  }
  row(r.explicit_budget ? "KV cache budget (given)" : "KV cache budget", r.kv_budget_bytes);
  row(c.engine == Engine::kLlamaCpp ? "KV cache allocated" : "KV cache in whole blocks", r.kv_used_bytes);
  out += t.Text();
  out += "\n" + MemoryBar(r) + "\n";

  Table k({"KV cache", "value"});
  k.SetAlign(1, Table::Align::kLeft);
  k.AddRow({"bytes per token", fmt::format("{} B ({})", WithCommas(r.bytes_per_token), FormatGiB(r.bytes_per_token))});
  if (r.kv_cache_groups.empty()) {
    k.AddRow({"block",
              fmt::format("{} = {} B", Plural(c.block_size, "token"), WithCommas(r.block_bytes))});
  } else {
    // vLLM's hybrid layout: a block is one page in each of group_size layers.
    std::string kinds;
    for (size_t i = 0; i < r.kv_cache_groups.size();) {
      size_t j = i;
      const size_t type = r.kv_cache_groups[i].type;
      while (j < r.kv_cache_groups.size() && r.kv_cache_groups[j].type == type) ++j;
      kinds += fmt::format("{}{} {}", kinds.empty() ? "" : " + ", j - i,
                           LayerKindName(r.kv_cache_groups[i].kind));
      i = j;
    }
    k.AddRow({"KV-cache groups (vLLM)",
              fmt::format("{} ({}) of {} layers", r.kv_cache_groups.size(), kinds, r.group_size)});
    k.AddRow(
        {"block", fmt::format("{} tokens, one {} B page in each of {} layers = {} B", c.block_size,
                              WithCommas(r.page_bytes), r.group_size, WithCommas(r.block_bytes))});
  }
  k.AddRow({"blocks", WithCommas(r.num_blocks)});
  k.AddRow({"tokens in cache", WithCommas(r.max_tokens)});
  // vLLM's groups: the blocks a request holds cost more than its own bytes
  // (padding layers, a sliding group's prefill chunk), and concurrency counts them.
  k.AddRow({"one request of max_model_len",
            r.kv_cache_groups.empty()
                ? fmt::format("{} ({})", FormatBoth(r.request_bytes),
                              Plural(r.blocks_per_request, "block"))
                : fmt::format("{} of KV; holds {} = {} (padding layers included)",
                              FormatBoth(r.request_bytes), Plural(r.blocks_per_request, "block"),
                              FormatBoth(CheckedMul(r.blocks_per_request, r.block_bytes,
                                                    "request block bytes")))});
  k.AddRow(
      {fmt::format("max concurrency at {} tokens", WithCommas(c.max_model_len)),
       fmt::format("{:.2f} ({})", r.max_concurrency, Plural(r.max_requests, "whole request"))});
  k.AddRow({"largest max_model_len that fits", WithCommas(r.largest_max_model_len)});
  if (concurrency) {
    k.AddRow({fmt::format("max model len at concurrency {}", *concurrency), WithCommas(at_concurrency)});
  }
  if (r.gpus > 1 || r.replicas > 1) {
    k.AddRow({"GPUs", fmt::format("{} ({} per replica x {} replicas)", r.gpus, r.gpus_per_replica, r.replicas)});
    k.AddRow({"cluster tokens in cache", WithCommas(r.cluster_max_tokens)});
    k.AddRow({"cluster whole requests", WithCommas(r.cluster_max_requests)});
    k.AddRow({"cluster memory", FormatBoth(r.cluster_memory_bytes)});
  }
  out += k.Text();
  if (r.stages.size() > 1) {
    out += "\n";
    Table s({"stage", "layers", "weights", "KV budget", "blocks"});
    for (const StageCapacity& st : r.stages) {
      s.AddRow({std::to_string(st.stage) + (st.stage == r.tightest_stage ? " (tightest)" : ""),
                fmt::format("{}-{}", st.first_layer, st.first_layer + st.layers - 1),
                FormatGiB(st.weights_bytes), FormatGiB(st.kv_budget_bytes), WithCommas(st.num_blocks)});
    }
    out += s.Text();
  }
  out += fmt::format("\n{} would log:\n", EngineTitle(c.engine));
  for (const std::string& line : r.engine_log) out += "  " + line + "\n";
  for (const Lint& l : r.lints) {
    out += fmt::format("{}: {}\n", l.severity == Severity::kError ? "error" : "warning", l.message);
  }
  return out;
}

Json ToJson(const ModelSpec& m, const HardwareSpec& gpu, const CapacityResult& r,
            std::optional<uint64_t> concurrency, uint64_t at_concurrency) {
  const EngineConfig& c = r.config;
  Json j;
  j.Set("model", m.name);
  j.Set("gpu", gpu.name);
  SetEngineJson(j, r);
  j.Set("kv_cache_dtype", r.kv_cache_dtype);
  j.Set("weight_dtype", r.weight_dtype);
  j.Set("weight_format", r.weight_format);
  j.Set("memory_fraction", c.memory_fraction);
  j.Set("max_model_len", c.max_model_len);
  j.Set("max_num_seqs", c.max_num_seqs);
  j.Set("max_num_batched_tokens", c.max_num_batched_tokens);
  j.Set("block_size", c.block_size);
  j.Set("tp", c.tp);
  j.Set("pp", c.pp);
  j.Set("dp", c.dp);
  j.Set("total_memory_bytes", r.total_memory_bytes);
  j.Set("usable_bytes", r.usable_bytes);
  j.Set("weights_bytes", r.weights_bytes);
  j.Set("reserve_bytes", r.reserve.total_bytes);
  Json res;
  res.Set("activation_bytes", r.reserve.activation_bytes);
  res.Set("logits_bytes", r.reserve.logits_bytes);
  res.Set("non_torch_bytes", r.reserve.non_torch_bytes);
  res.Set("cuda_graph_bytes", r.reserve.cuda_graph_bytes);
  // The largest captured batch (null where the engine captures none).
  if (r.reserve.cuda_graph_bytes != 0) {
    res.Set("cuda_graph_max_bs", r.config.cuda_graph_max_bs);
  } else {
    res.Set("cuda_graph_max_bs", nullptr);
  }
  res.Set("cuda_graphs_subtracted", r.graphs_subtracted);  // in reserve_bytes, out of the budget
  res.Set("rope_cache_bytes", r.reserve.rope_cache_bytes);
  res.Set("overridden", r.reserve.overridden);
  j.Set("reserve", std::move(res));
  j.Set("kv_budget_bytes", r.kv_budget_bytes);
  j.Set("explicit_budget", r.explicit_budget);
  j.Set("kv_used_bytes", r.kv_used_bytes);
  j.Set("bytes_per_token", r.bytes_per_token);
  j.Set("block_bytes", r.block_bytes);
  if (!r.kv_cache_groups.empty()) {  // vLLM, hybrid models only
    j.Set("kv_cache_groups", static_cast<uint64_t>(r.kv_cache_groups.size()));
    j.Set("group_size", r.group_size);
    j.Set("page_bytes", r.page_bytes);
  }
  j.Set("num_blocks", r.num_blocks);
  j.Set("max_tokens", r.max_tokens);
  j.Set("request_bytes", r.request_bytes);
  j.Set("request_block_bytes",
        CheckedMul(r.blocks_per_request, r.block_bytes, "request block bytes"));
  j.Set("blocks_per_request", r.blocks_per_request);
  // Full precision (the text shows vLLM's two decimals): rounded, 3.9996
  // read 4 beside max_requests 3.
  j.Set("max_concurrency", r.max_concurrency);
  j.Set("max_requests", r.max_requests);
  j.Set("fits", r.fits);
  j.Set("largest_max_model_len", r.largest_max_model_len);
  if (concurrency) {
    j.Set("concurrency", *concurrency);
    j.Set("max_model_len_at_concurrency", at_concurrency);
  }
  if (c.engine == Engine::kLlamaCpp) j.Set("cells", r.cells);
  if (c.engine == Engine::kSglang || c.engine == Engine::kLlamaCpp) {
    j.Set("k_bytes", r.k_bytes);
    j.Set("v_bytes", r.v_bytes);
  }
  Json stages = Json::MakeArray();
  for (const StageCapacity& st : r.stages) {
    Json s;
    s.Set("stage", st.stage);
    s.Set("first_layer", st.first_layer);
    s.Set("layers", st.layers);
    s.Set("weights_bytes", st.weights_bytes);
    s.Set("kv_budget_bytes", st.kv_budget_bytes);
    s.Set("bytes_per_token", st.bytes_per_token);
    s.Set("num_blocks", st.num_blocks);
    stages.Push(std::move(s));
  }
  j.Set("stages", std::move(stages));
  j.Set("tightest_stage", static_cast<uint64_t>(r.tightest_stage));
  Json cl;
  cl.Set("gpus", r.gpus);
  cl.Set("replicas", r.replicas);
  cl.Set("memory_bytes", r.cluster_memory_bytes);
  cl.Set("max_tokens", r.cluster_max_tokens);
  cl.Set("max_requests", r.cluster_max_requests);
  j.Set("cluster", std::move(cl));
  Json log = Json::MakeArray();
  for (const std::string& line : r.engine_log) log.Push(line);
  j.Set("engine_log", std::move(log));
  j.Set("lints", LintsJson(r.lints));
  return j;
}

std::string ToCsv(const ModelSpec& m, const HardwareSpec& gpu, const CapacityResult& r) {
  const EngineConfig& c = r.config;
  // vllm_version: "latest" or e.g. "0.20" for vLLM, empty for the other engines.
  Table t({"model",
           "gpu",
           "engine",
           "vllm_version",
           "tp",
           "pp",
           "dp",
           "kv_cache_dtype",
           "max_model_len",
           "total_memory_bytes",
           "weights_bytes",
           "reserve_bytes",
           "kv_budget_bytes",
           "bytes_per_token",
           "block_size",
           "num_blocks",
           "max_tokens",
           "max_concurrency",
           "max_requests",
           "largest_max_model_len"});
  t.AddRow({m.name,
            gpu.name,
            r.engine_name,
            c.engine == Engine::kVllm ? VllmVersionName(c.vllm_version) : "",
            std::to_string(c.tp),
            std::to_string(c.pp),
            std::to_string(c.dp),
            r.kv_cache_dtype,
            std::to_string(c.max_model_len),
            std::to_string(r.total_memory_bytes),
            std::to_string(r.weights_bytes),
            std::to_string(r.reserve.total_bytes),
            std::to_string(r.kv_budget_bytes),
            std::to_string(r.bytes_per_token),
            std::to_string(c.block_size),
            std::to_string(r.num_blocks),
            std::to_string(r.max_tokens),
            fmt::format("{}", r.max_concurrency),
            std::to_string(r.max_requests),
            std::to_string(r.largest_max_model_len)});
  return t.Csv();
}

void Run(const CapacityOptions& o) {
  ModelSpec m = LoadModel(o.model);
  HardwareSpec gpu = LoadHardware(o.deploy.gpu);
  EngineConfig config = ToConfig(o, m.max_context);
  std::optional<uint64_t> concurrency;
  if (!o.concurrency.empty()) {
    concurrency = ParseTokens(o.concurrency, "--concurrency");
    if (*concurrency == 0) Fail("--concurrency: must be at least 1");
  }
  const CapacityResult r = CapacityOrFail(m, gpu, config);
  uint64_t at = concurrency ? MaxModelLenAtConcurrency(r, *concurrency) : 0;
  switch (ToFormat(o.format)) {
    case Format::kJson: Print(ToJson(m, gpu, r, concurrency, at).Dump() + "\n"); break;
    case Format::kCsv: Print(ToCsv(m, gpu, r)); break;
    case Format::kText: Print(ToText(m, gpu, r, concurrency, at)); break;
  }
}

}  // namespace

void SetupCapacityCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CapacityOptions>();
  CLI::App* sub = app.add_subcommand(
      "capacity", "Memory breakdown, tokens in cache and max concurrency, the way an engine sizes it");
  sub->add_option("model", o->model, "Catalog name, HF repo id, spec YAML or config.json")->required();
  AddDeployFlags(sub, o->deploy);
  sub->add_option("-c,--ctx-size", o->ctx_size,
                  "llama.cpp: total cells for all sequences (default 4096; 0: the model's "
                  "max_context, as llama.cpp loads it)");
  sub->add_option("--np,--parallel", o->n_parallel, "llama.cpp: sequences (-np, default 1)");
  sub->add_option("--ubatch-size", o->ubatch, "llama.cpp: physical batch n_ubatch (default 512)");
  sub->add_flag("--swa-full", o->swa_full, "llama.cpp: full-size cache for sliding-window layers");
  sub->add_option("--dp,--data-parallel-size", o->dp, "Data-parallel replicas (also -dp)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 16))
      ->capture_default_str();
  sub->add_option("--max-gpu-total-bytes", o->max_gpu_total_bytes, "TensorRT-LLM: cap on the KV pool");
  sub->add_option("--cuda-graph-max-bs", o->cuda_graph_max_bs, "Largest CUDA-graph batch (engine default)");
  sub->add_flag("--enable-prefix-caching", o->enable_prefix_caching, "Recorded for the paging planner");
  sub->add_option("--concurrency", o->concurrency, "Also report the longest max_model_len at this concurrency");
  AddFormatOption(sub, o->format);
  sub->footer(R"(Examples:
  kvplan capacity llama-3.1-8b --gpu h100-sxm
  kvplan capacity llama-3.1-70b --gpu a100-80gb -tp 4 --max-model-len 32K --kv-cache-dtype fp8
  kvplan capacity llama-3.1-8b --gpu rtx-3090 --max-model-len 20000 --kv-cache-memory-bytes 3.8125GiB
  kvplan capacity llama-3.1-8b --gpu h100-sxm --vllm-version 0.20
  kvplan capacity qwen3-32b --gpu h200 --engine sglang --mem-fraction-static 0.88 --format json
  kvplan capacity llama-2-7b --gpu a100-80gb --engine trtllm --free-gpu-memory-fraction 0.95
  kvplan capacity gemma-3-27b --gpu rtx-4090 --engine llama.cpp -c 32K -np 4 --kv-cache-dtype q8_0 --weight-dtype int4
  kvplan capacity deepseek-v3 --gpu h200 -tp 8 --nodes 2 -pp 2 --weight-dtype fp8 --concurrency 64
  kvplan capacity llama-3.1-8b --gpu ./my-profile.yaml --reserve 2GiB)");
  sub->callback([o, &exit_code] {
    Run(*o);
    exit_code = 0;
  });
}

}  // namespace kvplan
