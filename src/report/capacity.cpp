#include "report/capacity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/table.h"
#include "report/terminal.h"
#include "util/checked.h"
#include "util/units.h"

namespace kvplan {
namespace {

// A proportional bar of total memory: weights, reserve, KV cache, rest.
std::string MemoryBar(const CapacityResult& r, size_t width = 60) {
  const double total = static_cast<double>(r.total_memory_bytes);
  struct Seg {
    const char* glyph;
    double bytes;
  };
  const double kv = static_cast<double>(r.kv_used_bytes);
  const double weights = static_cast<double>(r.weights_bytes);
  const double reserve =
      static_cast<double>(std::min<uint64_t>(r.reserve.total_bytes, r.total_memory_bytes));
  const double rest = std::max(0.0, total - weights - reserve - kv);
  Seg segs[] = {{"\u2588", weights}, {"\u2593", reserve}, {"\u2592", kv}, {"\u2591", rest}};
  std::string bar;
  double acc = 0;
  size_t drawn = 0;
  for (const Seg& s : segs) {
    acc += s.bytes;
    size_t upto =
        static_cast<size_t>(std::lround(std::min(acc, total) / total * static_cast<double>(width)));
    for (; drawn < upto; ++drawn) bar += s.glyph;
  }
  for (; drawn < width; ++drawn) bar += "\u2591";
  return "  [" + bar +
         "]\n   \u2588 weights  \u2593 reserve  \u2592 KV cache  \u2591 not used by the engine\n";
}

std::string EngineTitle(Engine e) {
  switch (e) {
    case Engine::kVllm:
      return "vLLM";
    case Engine::kSglang:
      return "SGLang";
    case Engine::kTrtllm:
      return "TensorRT-LLM";
    case Engine::kLlamaCpp:
      return "llama.cpp";
  }
  return "";
}

// The heading: the deployment, then the engine's scheduling limits.
std::string Heading(const ModelSpec& m, const HardwareSpec& gpu, const CapacityResult& r) {
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
  return out;
}

// Memory per GPU, from the total down to the KV cache, with the reserve's parts.
std::string MemoryTable(const CapacityResult& r, size_t width) {
  const EngineConfig& c = r.config;
  Table t({"memory per GPU", "bytes", "binary", "decimal"});
  t.SetDropOrder(1, 2);
  t.SetDropOrder(3, 1);
  auto row = [&](const std::string& label, uint64_t bytes) {
    t.AddRow({label, WithCommas(bytes), FormatGiB(bytes), FormatGB(bytes)});
  };
  row("total", r.total_memory_bytes);
  switch (c.engine) {
    case Engine::kVllm:
    case Engine::kSglang:
      row(fmt::format("usable ({} {})", MemoryFractionFlag(c.engine), c.memory_fraction),
          r.usable_bytes);
      break;
    case Engine::kTrtllm:
      row("free after loading", r.usable_bytes);
      break;
    case Engine::kLlamaCpp:
      break;
  }
  // Exact checkpoint bytes say where they were read; counted ones keep the plain label.
  const bool exact = r.weights_from.rfind("exact:", 0) == 0;
  const std::string stage =
      r.stages.size() > 1 ? fmt::format("stage {}", r.tightest_stage) : std::string();
  row(exact ? fmt::format("weights ({}{})", stage.empty() ? "" : stage + "; ", r.weights_from)
            : (stage.empty() ? std::string("weights") : "weights (" + stage + ")"),
      r.weights_bytes);
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
    row(c.engine == Engine::kVllm ? "  non-torch"
        : c.engine == Engine::kSglang
            ? fmt::format("  CUDA context (x {} counted)", c.memory_fraction)
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
  if (r.state_pool) {
    // SGLang carves a hybrid model's state pool out of the budget first.
    row(fmt::format("state pool, {}", Plural(r.state_slots, "slot")),
        CheckedMul(r.state_slots, r.state_slot_bytes, "state pool bytes"));
  }
  row(r.explicit_budget ? "KV cache budget (given)"
      : r.state_pool    ? "KV cache budget (tokens)"
                        : "KV cache budget",
      r.kv_budget_bytes);
  row(c.engine == Engine::kLlamaCpp ? "KV cache allocated" : "KV cache in whole blocks",
      r.kv_used_bytes);
  return t.Text("  ", width);
}

// The KV cache's figures: per token, per block, per request, and in the cluster.
std::string KvCacheTable(const CapacityResult& r, std::optional<uint64_t> concurrency,
                         uint64_t at_concurrency, size_t width) {
  const EngineConfig& c = r.config;
  Table k({"KV cache", "value"});
  k.SetAlign(1, Table::Align::kLeft);
  k.AddRow({"bytes per token",
            fmt::format("{} B ({})", WithCommas(r.bytes_per_token), FormatGiB(r.bytes_per_token))});
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
        {"block", fmt::format("{} token{}, one {} B page in each of {} layers = {} B", c.block_size,
                              c.block_size == 1 ? "" : "s", WithCommas(r.page_bytes), r.group_size,
                              WithCommas(r.block_bytes))});
  }
  k.AddRow({"blocks", r.UsableBlocks() == r.num_blocks
                          ? WithCommas(r.num_blocks)
                          : fmt::format("{} (block 0 is vLLM's null block: {} usable)",
                                        WithCommas(r.num_blocks), WithCommas(r.UsableBlocks()))});
  k.AddRow({"tokens in cache", WithCommas(r.max_tokens)});
  if (r.state_pool) {
    // SGLang's MambaPool: a slot per sequence's states, beside the tokens.
    k.AddRow(
        {"state pool (SGLang)",
         fmt::format("{} of {}, {} allocated with the padding slot; {} per running "
                     "request",
                     Plural(r.state_slots, "slot"), FormatBoth(r.state_slot_bytes),
                     FormatBoth(r.state_conv_bytes + r.state_ssm_bytes), r.state_running_ratio)});
  }
  if (!r.trtllm_windows.empty()) {
    std::string windows;
    for (const TrtllmWindow& w : r.trtllm_windows) {
      windows += fmt::format("{}{} tokens on {}", windows.empty() ? "" : ", ", WithCommas(w.window),
                             Plural(w.layers, "layer"));
    }
    k.AddRow({"attention windows (TensorRT-LLM)", windows});
  }
  if (r.host_bytes != 0) k.AddRow({"host cache (secondary pool)", FormatBoth(r.host_bytes)});
  if (r.host_layers != 0 || r.host_kv_bytes != 0) {
    // llama.cpp: -ngl below the layers leaves the first ones (and their
    // cache) on the CPU; -nkvo keeps every layer's cache there.
    k.AddRow({"in host memory (llama.cpp)",
              fmt::format("{} KV cache{}", FormatBoth(r.host_kv_bytes),
                          r.host_layers == 0 ? " (-nkvo)"
                                             : fmt::format(", {} of weights ({} on the CPU)",
                                                           FormatBoth(r.host_weights_bytes),
                                                           Plural(r.host_layers, "layer")))});
  }
  // vLLM's groups: the blocks a request holds cost more than its own bytes
  // (padding layers, a sliding group's prefill chunk), and concurrency counts them.
  k.AddRow({"one request of max_model_len",
            r.kv_cache_groups.empty()
                ? fmt::format("{} ({}){}", FormatBoth(r.request_bytes),
                              Plural(r.blocks_per_request, "block"),
                              r.state_pool ? ", and a state slot" : "")
                : fmt::format("{} of KV; holds {} = {} (padding layers included)",
                              FormatBoth(r.request_bytes), Plural(r.blocks_per_request, "block"),
                              FormatBoth(CheckedMul(r.blocks_per_request, r.block_bytes,
                                                    "request block bytes")))});
  k.AddRow(
      {fmt::format("max concurrency at {} tokens", WithCommas(c.max_model_len)),
       fmt::format("{:.2f} ({})", r.max_concurrency, Plural(r.max_requests, "whole request"))});
  k.AddRow({"largest max_model_len that fits", WithCommas(r.largest_max_model_len)});
  if (concurrency) {
    k.AddRow(
        {fmt::format("max model len at concurrency {}", *concurrency), WithCommas(at_concurrency)});
  }
  if (r.gpus > 1 || r.replicas > 1) {
    k.AddRow({"GPUs", fmt::format("{} ({} per replica x {} replicas)", r.gpus, r.gpus_per_replica,
                                  r.replicas)});
    k.AddRow({"cluster tokens in cache", WithCommas(r.cluster_max_tokens)});
    k.AddRow({"cluster whole requests", WithCommas(r.cluster_max_requests)});
    k.AddRow({"cluster memory", FormatBoth(r.cluster_memory_bytes)});
  }
  return k.Text("  ", width);
}

// Pipeline stages: each one's layers, weights and KV budget.
std::string StageTable(const CapacityResult& r, size_t width) {
  Table s({"stage", "layers", "weights", "KV budget", "blocks"});
  for (const StageCapacity& st : r.stages) {
    s.AddRow({std::to_string(st.stage) + (st.stage == r.tightest_stage ? " (tightest)" : ""),
              fmt::format("{}-{}", st.first_layer, st.first_layer + st.layers - 1),
              FormatGiB(st.weights_bytes), FormatGiB(st.kv_budget_bytes),
              WithCommas(st.num_blocks)});
  }
  return s.Text("  ", width);
}

// What the engine would log, then the lints.
std::string EngineLogLines(const CapacityResult& r) {
  const EngineConfig& c = r.config;
  std::string out;
  out += fmt::format("\n{} would log:\n", EngineTitle(c.engine));
  for (const std::string& line : r.engine_log) out += "  " + line + "\n";
  for (const Lint& l : r.lints) {
    out += fmt::format("{}: {}\n", l.severity == Severity::kError ? "error" : "warning", l.message);
  }
  return out;
}

}  // namespace

Json LintsJson(const std::vector<Lint>& lints) {
  Json out = Json::MakeArray();
  for (const Lint& l : lints) {
    Json o;
    o.Set("severity", l.severity == Severity::kError ? "error" : "warning");
    o.Set("code", l.code);
    o.Set("message", l.message);
    out.Push(std::move(o));
  }
  return out;
}

void SetEngineJson(Json& j, const CapacityResult& r) {
  j.Set("engine", r.engine_name);
  if (r.config.engine == Engine::kVllm)
    j.Set("vllm_version", VllmVersionName(r.config.vllm_version));
}

std::string CapacityText(const ModelSpec& m, const HardwareSpec& gpu, const CapacityResult& r,
                         std::optional<uint64_t> concurrency, uint64_t at_concurrency,
                         size_t width) {
  std::string out = Heading(m, gpu, r);
  out += MemoryTable(r, width);
  out += "\n";
  out += MemoryBar(r);
  out += "\n";

  out += KvCacheTable(r, concurrency, at_concurrency, width);
  if (r.stages.size() > 1) {
    out += "\n";
    out += StageTable(r, width);
  }
  out += EngineLogLines(r);
  return width == 0 ? out : WrapText(out, width);
}

Json CapacityJson(const ModelSpec& m, const HardwareSpec& gpu, const CapacityResult& r,
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
  if (r.weights_from.rfind("exact:", 0) == 0) j.Set("weights_from", r.weights_from);
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
  // vLLM: every block but the null block; from 0.29 what requests are planned against.
  j.Set("usable_blocks", r.UsableBlocks());
  j.Set("max_tokens", r.max_tokens);
  if (r.config.engine == Engine::kLlamaCpp) {
    j.Set("host_layers", r.host_layers);
    j.Set("host_kv_bytes", r.host_kv_bytes);
    j.Set("host_weights_bytes", r.host_weights_bytes);
  }
  if (r.config.engine == Engine::kTrtllm) j.Set("host_cache_bytes", r.host_bytes);
  if (!r.trtllm_windows.empty()) {  // TensorRT-LLM with several windows
    Json windows = Json::MakeArray();
    for (const TrtllmWindow& w : r.trtllm_windows) {
      Json o = Json::MakeObject();
      o.Set("window", w.window);
      o.Set("layers", w.layers);
      windows.Push(std::move(o));
    }
    j.Set("attention_windows", std::move(windows));
  }
  j.Set("request_bytes", r.request_bytes);
  j.Set("request_block_bytes",
        CheckedMul(r.blocks_per_request, r.block_bytes, "request block bytes"));
  j.Set("blocks_per_request", r.blocks_per_request);
  // Full precision (the text shows vLLM's two decimals): rounded, 3.9996
  // read 4 beside max_requests 3.
  j.Set("max_concurrency", r.max_concurrency);
  j.Set("max_requests", r.max_requests);
  j.Set("fits", r.fits);
  j.Set("engine_starts", !EngineRefusesToStart(r));
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
  if (r.state_pool) {  // SGLang, hybrid models: the separate state pool
    j.Set("state_slots", r.state_slots);
    j.Set("state_conv_bytes", r.state_conv_bytes);
    j.Set("state_ssm_bytes", r.state_ssm_bytes);
    j.Set("state_slots_per_running_request", r.state_running_ratio);
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

std::string CapacityCsv(const ModelSpec& m, const HardwareSpec& gpu, const CapacityResult& r) {
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

}  // namespace kvplan
