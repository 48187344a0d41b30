#include "plan/engines_log.h"

#include <fmt/format.h>

#include <algorithm>

#include "plan/capacity.h"
#include "util/units.h"

namespace kvplan {
namespace {

double Gib(uint64_t bytes) {
  return static_cast<double>(bytes) / static_cast<double>(kGiB);
}
double Mib(uint64_t bytes) {
  return static_cast<double>(bytes) / static_cast<double>(kMiB);
}

// ggml's names for cache types (ggml_type_name).
std::string GgmlName(const std::string& dtype) {
  if (dtype == "fp16") return "f16";
  if (dtype == "fp32") return "f32";
  return dtype;
}

std::vector<std::string> Vllm(const CapacityResult& r) {
  std::vector<std::string> out;
  const EngineConfig& c = r.config;
  // Hybrid Mamba models: HybridAttentionMambaModelConfig, at config time.
  if (r.block_size_raised) {
    out.push_back(
        fmt::format("Setting attention block size to {} tokens to ensure that attention "
                    "page size is >= mamba page size.",
                    c.block_size));
  }
  if (r.state_page_bytes != 0 && r.state_page_bytes < r.page_bytes) {
    out.push_back(
        fmt::format("Padding mamba page size by {:.2f}% to ensure that mamba page size "
                    "and attention page size are exactly equal.",
                    100.0 * static_cast<double>(r.page_bytes - r.state_page_bytes) /
                        static_cast<double>(r.state_page_bytes)));
  }
  // vllm/v1/worker/gpu_worker.py and vllm/v1/core/kv_cache_utils.py.
  if (r.graphs_subtracted) {
    out.push_back(fmt::format("Estimated CUDA graph memory: {:.2f} GiB total",
                              Gib(r.reserve.cuda_graph_bytes)));
  }
  out.push_back(fmt::format("Available KV cache memory: {:.2f} GiB", Gib(r.kv_budget_bytes)));
  // _get_kv_cache_groups_uniform_page_size: one warning per layer spec whose
  // last group is padded, over the whole model.
  uint64_t group_size = 0;
  for (const KvCacheGroup& g : r.kv_cache_groups) {
    group_size = std::max<uint64_t>(group_size, g.layers.size());
  }
  for (size_t i = 0; i < r.kv_cache_groups.size();) {
    uint64_t layers = 0;
    size_t j = i;
    for (; j < r.kv_cache_groups.size() && r.kv_cache_groups[j].type == r.kv_cache_groups[i].type;
         ++j) {
      layers += r.kv_cache_groups[j].layers.size();
    }
    const uint64_t padding = (j - i) * group_size - layers;
    if (padding != 0) {
      out.push_back(
          fmt::format("Add {} padding layers, may waste at most {:.2f}% KV cache memory", padding,
                      100.0 * static_cast<double>(padding) / static_cast<double>(layers)));
    }
    i = j;
  }
  if (!r.fits) {
    out.push_back(fmt::format(
        "ValueError: To serve at least one request with the models's max seq len ({}), ({:.2f} GiB "
        "KV cache is needed, which is larger than the available KV cache memory ({:.2f} GiB). "
        "Based "
        "on the available memory, the estimated maximum model length is {}. Try increasing "
        "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
        c.max_model_len, Gib(r.blocks_per_request * r.block_bytes), Gib(r.kv_budget_bytes),
        r.largest_max_model_len));
    return out;
  }
  out.push_back(fmt::format("GPU KV cache size: {} tokens", WithCommas(r.max_tokens)));
  out.push_back(fmt::format("Maximum concurrency for {} tokens per request: {:.2f}x",
                            WithCommas(c.max_model_len), r.max_concurrency));
  return out;
}

std::vector<std::string> Sglang(const ModelSpec& m, const CapacityResult& r) {
  // model_runner_kv_cache_mixin.py and memory_pool.py (MambaPool); "GB"
  // there is bytes / 2^30.
  std::vector<std::string> out;
  if (r.state_pool) {
    out.push_back(fmt::format(
        "Mamba Cache is allocated. max_mamba_cache_size: {}, conv_state size: {:.2f}GB, "
        "ssm_state size: {:.2f}GB",
        r.state_slots, Gib(r.state_conv_bytes), Gib(r.state_ssm_bytes)));
  }
  if (m.mla) {
    out.push_back(fmt::format("KV Cache is allocated. #tokens: {}, KV size: {:.2f} GB",
                              r.max_tokens, Gib(r.k_bytes + r.v_bytes)));
  } else {
    out.push_back(
        fmt::format("KV Cache is allocated. #tokens: {}, K size: {:.2f} GB, V size: {:.2f} GB",
                    r.max_tokens, Gib(r.k_bytes), Gib(r.v_bytes)));
  }
  return out;
}

std::vector<std::string> Trtllm(const CapacityResult& r) {
  return {fmt::format("[TensorRT-LLM][INFO] Number of blocks in KV cache primary pool: {}",
                      r.num_blocks),
          fmt::format("[TensorRT-LLM][INFO] Allocate {} bytes for k/v cache.", r.kv_used_bytes),
          fmt::format("[TensorRT-LLM][INFO] Using {} tokens in paged KV cache.", r.max_tokens)};
}

std::vector<std::string> LlamaCpp(const ModelSpec& m, const CapacityResult& r,
                                  const CacheDtype& dtype) {
  // src/llama-kv-cache.cpp: "%s: size = %7.2f MiB (%6u cells, %3d layers, %2u/%u seqs),
  // K (%s): %7.2f MiB, V (%s): %7.2f MiB"; iswa builds two caches.
  const StageCapacity& t = r.stages[r.tightest_stage];
  const std::string type = GgmlName(dtype.name);
  const uint64_t np = r.config.n_parallel;
  struct Part {
    uint64_t cells = 0, layers = 0, k = 0, v = 0;
  };
  Part full, swa;
  for (const GroupCost& g : t.kv.groups) {
    if (g.per_token_bytes == 0) continue;
    const bool windowed = g.kind == LayerKind::kSliding || g.kind == LayerKind::kChunked;
    Part& p = windowed ? swa : full;
    p.cells = windowed ? r.swa_cells : r.cells;
    p.layers += g.layers;
    const uint64_t kb = g.kind == LayerKind::kMla
                            ? g.per_token_bytes
                            : g.kv_heads * dtype.VectorBytes(g.head_dim) * g.layers;
    p.k += kb * p.cells;
    p.v += (g.per_token_bytes - kb) * p.cells;
  }
  auto line = [&](const char* who, const Part& p) {
    return fmt::format(
        "{}: size = {:7.2f} MiB ({:6} cells, {:3} layers, {:2}/{} seqs), K ({}): {:7.2f} MiB, "
        "V ({}): {:7.2f} MiB",
        who, Mib(p.k + p.v), p.cells, p.layers, np, np, type, Mib(p.k), type, Mib(p.v));
  };
  std::vector<std::string> out;
  // src/llama-memory-recurrent.cpp: "%s: size = %7.2f MiB (%6u cells, %3d
  // layers, %2u seqs), R (%s): %7.2f MiB, S (%s): %7.2f MiB": one f32 cell
  // per sequence; the layers are the model's.
  uint64_t conv = 0, recurrent = 0;
  for (const GroupCost& g : t.kv.groups) {
    conv += g.conv_bytes_layer * g.layers;
    recurrent += (g.state_bytes_layer - g.conv_bytes_layer) * g.layers;
  }
  if (conv + recurrent != 0) {
    const uint64_t cells = std::max<uint64_t>(1, np);
    out.push_back(fmt::format(
        "llama_memory_recurrent: size = {:7.2f} MiB ({:6} cells, {:3} layers, {:2} seqs), R "
        "(f32): {:7.2f} MiB, S (f32): {:7.2f} MiB",
        Mib((conv + recurrent) * cells), cells, m.layers, cells, Mib(conv * cells),
        Mib(recurrent * cells)));
  }
  if (full.layers == 0) {
    // attention-free: no KV cache line
  } else if (swa.layers == 0) {
    out.push_back(line("llama_kv_cache", full));
  } else {
    out.push_back(
        fmt::format("llama_kv_cache_iswa: creating non-SWA KV cache, size = {} cells", full.cells));
    out.push_back(line("llama_kv_cache", full));
    out.push_back(
        fmt::format("llama_kv_cache_iswa: creating     SWA KV cache, size = {} cells", swa.cells));
    out.push_back(line("llama_kv_cache", swa));
  }
  return out;
}

}  // namespace

std::vector<std::string> EngineLogLines(const ModelSpec& m, const CapacityResult& r,
                                        const CacheDtype& dtype) {
  switch (r.config.engine) {
    case Engine::kVllm:
      return Vllm(r);
    case Engine::kSglang:
      return Sglang(m, r);
    case Engine::kTrtllm:
      return Trtllm(r);
    case Engine::kLlamaCpp:
      return LlamaCpp(m, r, dtype);
  }
  return {};
}

}  // namespace kvplan
