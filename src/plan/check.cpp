#include "plan/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "plan/check_internal.h"
#include "plan/latency.h"
#include "plan/weights.h"
#include "util/checked.h"
#include "util/units.h"

namespace kvplan {

CheckItem Item(std::string name, bool pass, std::string measured, std::string required,
               std::string detail, SourcePos pos) {
  CheckItem i;
  i.name = std::move(name);
  i.pass = pass;
  i.measured = std::move(measured);
  i.required = std::move(required);
  i.detail = std::move(detail);
  i.pos = std::move(pos);
  return i;
}

// `i` with its figures as numbers (CheckItem::measured_value, ...).
CheckItem WithNumbers(CheckItem i, std::optional<double> measured, double required,
                      const char* unit, const char* comparison) {
  i.measured_value = measured;
  i.required_value = required;
  i.unit = unit;
  i.comparison = comparison;
  return i;
}

// A check that follows from another one that failed: skipped, with what it
// requires and why it was not measured.
CheckItem SkippedItem(std::string name, std::string required, double required_value,
                      const char* unit, const char* comparison, std::string why, SourcePos pos) {
  CheckItem i = WithNumbers(Item(std::move(name), false, "n/a", std::move(required),
                                 "skipped: " + std::move(why), std::move(pos)),
                            std::nullopt, required_value, unit, comparison);
  i.skipped = true;
  return i;
}

const char* const kNotStarted = "the engine would not start (see startup)";

namespace {

std::string Count(uint64_t n) {
  return WithCommas(n);
}

// vLLM's own words for the startup failures it raises
// (vllm/config/model.py, vllm/v1/core/kv_cache_utils.py), so a reader can
// match the FAIL with the log they would otherwise see on the GPU.
std::string EngineReason(const CheckReport& r, const ModelSpec& m, const EngineConfig& c,
                         const Lint& lint) {
  if (c.engine != Engine::kVllm) return lint.message;
  if (lint.code == "kv-config" && c.tp > 0 && m.query_heads % c.tp != 0) {
    return fmt::format(
        "vLLM: Total number of attention heads ({}) must be divisible by tensor "
        "parallel size ({}).",
        m.query_heads, c.tp);
  }
  if (lint.code == "max-model-len") {
    return fmt::format(
        "vLLM: User-specified max_model_len ({}) is greater than the derived "
        "max_model_len (max_position_embeddings={} in model's config.json).",
        c.max_model_len, m.max_context);
  }
  if (lint.code == "no-kv-memory" || lint.code == "weights-fit") {
    return "vLLM: No available memory for the cache blocks. Try increasing "
           "`gpu_memory_utilization` when initializing the engine. (" +
           lint.message + ")";
  }
  if (lint.code == "dtype-engine") {
    return fmt::format("vLLM: argument --kv-cache-dtype: invalid choice ({})", lint.message);
  }
  (void)r;
  return lint.message;
}

// The flag a startup failure is about, for the annotation's line.
std::string FlagOf(const std::string& code) {
  if (code == "kv-config" || code == "gpus" || code == "kv-replicated") return "tp";
  if (code == "dtype-engine") return "kv_cache_dtype";
  if (code == "max-model-len" || code == "max-model-len-fits" || code == "kv-fits") {
    return "max_model_len";
  }
  if (code == "memory-fraction" || code == "no-kv-memory" || code == "weights-fit") {
    return "memory_fraction";
  }
  if (code == "pp-layers") return "pp";
  if (code == "llama-fa") return "flash_attn";
  if (code == "vllm-cudagraph-sizes") return "cuda_graph_max_bs";  // beside its list
  if (code == "vllm-batched-tokens") return "max_num_seqs";
  return "";
}

std::string Pct(double v) {
  return fmt::format("{:.1f}%", v);
}

// The running cap's name as the config (or the engine) calls it: SGLang's
// own default is its request pool, max_running_requests.
std::string SeqCapName(const DeployConfig& d, const EngineConfig& c) {
  if (c.engine == Engine::kSglang && d.args.names.count("max_num_seqs") == 0) {
    return "max_running_requests";
  }
  return d.args.NameOf("max_num_seqs");
}

void WorkloadItems(const DeployConfig& d, const CapacityResult& cap, bool startup_ok,
                   CheckReport& r) {
  const Workload& w = *d.workload;
  const EngineConfig& c = cap.config;
  uint64_t longest = 0;
  for (const RequestClass& rc : w.requests) longest = std::max(longest, rc.tokens);
  if (longest > c.max_model_len) {
    r.items.push_back(WithNumbers(
        Item("workload_fits_max_model_len", false, Count(longest) + " tokens",
             "<= " + Count(c.max_model_len),
             "the engine rejects requests longer than max_model_len", w.pos),
        static_cast<double>(longest), static_cast<double>(c.max_model_len), "tokens", "<="));
  }
  auto it = d.requirements.pos.find("min_workload_concurrency");
  if (!startup_ok || cap.block_size == 0) {
    if (it != d.requirements.pos.end()) {
      const uint64_t want = *d.requirements.min_workload_concurrency;
      r.items.push_back(SkippedItem("min_workload_concurrency", ">= " + Count(want),
                                    static_cast<double>(want), "requests", ">=", kNotStarted,
                                    it->second));
    }
    return;
  }
  bool caching = d.args.prefix_caching.value_or(DefaultPrefixCaching(c.engine));
  // Only whole blocks of the shared prefix are shared (vLLM hashes full blocks).
  uint64_t shared = caching ? w.shared_prefix_tokens / cap.block_size : 0;
  double mean_blocks = 0;
  for (const RequestClass& rc : w.requests) {
    uint64_t blocks = cap.BlocksForRequest(std::min(rc.tokens, c.max_model_len));
    mean_blocks += rc.share * static_cast<double>(blocks - std::min(blocks, shared));
  }
  double per_replica = 0;
  if (mean_blocks > 0 && cap.num_blocks > shared) {
    per_replica = static_cast<double>(cap.num_blocks - shared) / mean_blocks;
  }
  double limit = static_cast<double>(c.max_num_seqs);
  double conc = std::min(per_replica, limit) * static_cast<double>(cap.replicas);
  std::string detail = fmt::format(
      "{} free blocks / {:.1f} blocks per average request{}{}",
      Count(cap.num_blocks - std::min(cap.num_blocks, shared)), mean_blocks,
      shared
          ? fmt::format(", {} prefix blocks shared once", shared)
          : (w.shared_prefix_tokens && !caching ? ", prefix caching off: prefix not shared" : ""),
      per_replica > limit ? fmt::format(", capped by {} {}", SeqCapName(d, c), c.max_num_seqs)
                          : "");
  if (it == d.requirements.pos.end()) {
    r.notes.push_back(
        fmt::format("workload mix: about {:.1f} requests at once ({})", conc, detail));
  } else {
    uint64_t want = *d.requirements.min_workload_concurrency;
    uint64_t got = static_cast<uint64_t>(std::floor(conc));
    r.items.push_back(WithNumbers(Item("min_workload_concurrency", got >= want,
                                       fmt::format("{} requests ({:.2f})", Count(got), conc),
                                       ">= " + Count(want), detail, it->second),
                                  conc, static_cast<double>(want), "requests", ">="));
  }
}

// TPOT and TTFT from the latency model (plan/latency.h) at the stated batch
// and context, for one tensor-parallel rank of the deployment's engine
// config: its weight format and cache dtype. Pipeline stages run one after
// another for a token, so pp does not change the per-token time here.
void LatencyItems(const ModelSpec& m, const HardwareSpec& gpu, const DeployConfig& d,
                  const CapacityResult& cap, bool startup_ok, CheckReport& r) {
  const LatencyRequirement& l = *d.requirements.latency;
  // As `kvplan latency -c` refuses it: a latency past the model's limit is
  // a figure for a request no server takes.
  if (m.max_context > 0 && l.context_tokens > m.max_context) {
    Fail("{}requirements.latency.context: {} tokens is more than {}'s max_context of {}",
         l.pos.Prefix(), WithCommas(l.context_tokens), m.name, WithCommas(m.max_context));
  }
  auto req = [&](double ms) {
    return fmt::format("<= {:g} ms at batch {}, context {}", ms, l.batch, Count(l.context_tokens));
  };
  // TTFT is one prompt's prefill: the batch does not enter it.
  auto req_ttft = [&](double ms) {
    return fmt::format("<= {:g} ms for one {}-token prompt", ms, Count(l.context_tokens));
  };
  if (!startup_ok || cap.kv_cache_dtype.empty()) {
    if (l.max_tpot_ms) {
      r.items.push_back(SkippedItem("max_tpot_ms", req(*l.max_tpot_ms), *l.max_tpot_ms, "ms",
                                    "<=", kNotStarted, l.tpot_pos));
    }
    if (l.max_ttft_ms) {
      r.items.push_back(SkippedItem("max_ttft_ms", req_ttft(*l.max_ttft_ms), *l.max_ttft_ms, "ms",
                                    "<=", kNotStarted, l.ttft_pos));
    }
    return;
  }
  const CacheDtype& dtype = FindCacheDtype(cap.kv_cache_dtype);
  const WeightFormat format = ResolvedWeightFormat(m, cap.config);
  const ModelCost cost = ComputeModelCost(m, dtype, format, cap.config.tp);
  const std::string bw = HasMeasuredCurve(gpu) ? "measured bandwidth curve"
                                               : fmt::format("datasheet bandwidth x {:g}",
                                                             kDatasheetBandwidthEfficiency);
  if (l.max_tpot_ms) {
    StepEstimate e = EstimateDecodeStep(cost, gpu, l.context_tokens, l.batch);
    double ms = e.seconds * 1e3;
    r.items.push_back(WithNumbers(
        Item("max_tpot_ms", ms <= *l.max_tpot_ms, fmt::format("{:.2f} ms", ms), req(*l.max_tpot_ms),
             fmt::format(
                 "{}-bound decode step: {} weights + {} KV read per rank at {:.0f} GB/s ({})",
                 BoundName(e.bound), FormatGB(e.weight_bytes), FormatGB(e.kv_bytes),
                 e.bandwidth_gbps, bw),
             l.tpot_pos),
        ms, *l.max_tpot_ms, "ms", "<="));
  }
  if (l.max_ttft_ms) {
    StepEstimate e = EstimatePrefill(cost, gpu, l.context_tokens);
    double ms = e.seconds * 1e3;
    r.items.push_back(WithNumbers(
        Item("max_ttft_ms", ms <= *l.max_ttft_ms, fmt::format("{:.1f} ms", ms),
             req_ttft(*l.max_ttft_ms),
             fmt::format(
                 "{}-bound prefill of one {}-token prompt: {} TFLOP per rank, the weight "
                 "matmuls at a {:.0f} TFLOP/s peak and attention at a {:.0f} TFLOP/s peak, each "
                 "x {:g} (queueing behind other requests not included)",
                 BoundName(e.bound), Count(l.context_tokens), Sig3(e.flops / 1e12),
                 e.peak_flops / 1e12, e.attention_peak_flops / 1e12, kComputeEfficiency),
             l.ttft_pos),
        ms, *l.max_ttft_ms, "ms", "<="));
  }
}

// Startup: what the engine itself would refuse, one FAIL item per fatal
// lint (in vLLM's words where it has them); other lints become notes or a
// max_model_len_fits item. Returns whether the engine starts.
bool StartupFailures(const ModelSpec& m, const DeployConfig& d, const CapacityResult& cap,
                     CheckReport& r) {
  const EngineConfig& c = cap.config;
  bool startup_ok = true;
  for (const Lint& lint : cap.lints) {
    const bool fatal = StopsEngineAtStartup(lint, c.engine);
    if (fatal && lint.severity != Severity::kError) {
      if (c.engine == Engine::kVllm) {
        r.items.push_back(WithNumbers(
            Item("startup", false,
                 fmt::format("{} tokens fit in one request", Count(cap.largest_max_model_len)),
                 fmt::format("max_model_len {} fits", Count(c.max_model_len)),
                 fmt::format(
                     "vLLM: To serve at least one request with the models's max seq len ({}), "
                     "({} KV cache is needed, which is larger than the available KV cache "
                     "memory ({}). Based on the available memory, the estimated maximum model "
                     "length is {}. Try increasing `gpu_memory_utilization` or decreasing "
                     "`max_model_len` when initializing the engine.",
                     c.max_model_len, FormatGiB(cap.request_bytes), FormatGiB(cap.kv_budget_bytes),
                     cap.largest_max_model_len),
                 d.args.PosOf("max_model_len", d.engine_pos)),
            static_cast<double>(cap.largest_max_model_len), static_cast<double>(c.max_model_len),
            "tokens", ">="));
        startup_ok = false;
        continue;
      }
    }
    if (!fatal) {
      if (lint.code == "max-model-len-fits") {
        r.items.push_back(WithNumbers(
            Item("max_model_len_fits", false, Count(cap.largest_max_model_len) + " tokens",
                 ">= " + Count(c.max_model_len), lint.message,
                 d.args.PosOf("max_model_len", d.engine_pos)),
            static_cast<double>(cap.largest_max_model_len), static_cast<double>(c.max_model_len),
            "tokens", ">="));
      } else {
        r.notes.push_back(cap.engine_name + ": " + lint.message);
      }
      continue;
    }
    startup_ok = false;
    std::string flag = FlagOf(lint.code);
    SourcePos pos = flag == "tp" && lint.code == "gpus" && d.gpu_count ? d.count_pos
                    : flag.empty()                                     ? d.engine_pos
                                   : d.args.PosOf(flag, d.engine_pos);
    r.items.push_back(Item("startup", false, "fails (" + lint.code + ")", "starts",
                           EngineReason(r, m, c, lint), pos));
  }
  return startup_ok;
}

// The cache's blocks: what the memory holds, but llama.cpp allocates its
// n_ctx cells up front (padded to the block) and never more, whatever
// memory is left: that is its cache.
uint64_t CacheBlocks(const CapacityResult& cap) {
  const EngineConfig& c = cap.config;
  return c.engine == Engine::kLlamaCpp && cap.cells != 0 && cap.block_size != 0
             ? CeilDiv(cap.cells, cap.block_size)
             : cap.num_blocks;
}

// The requirements on the cache: min_concurrency, min_tokens_in_cache and
// min_headroom_percent, each n/a (a FAIL) where the engine would not start.
void CacheRequirementItems(const DeployConfig& d, const CapacityResult& cap, uint64_t cache_blocks,
                           bool startup_ok, CheckReport& r) {
  const EngineConfig& c = cap.config;
  const Requirements& q = d.requirements;
  auto at = [&](const char* key) {
    auto it = q.pos.find(key);
    return it == q.pos.end() ? d.pos : it->second;
  };
  bool concurrency_failed = false;
  if (q.min_concurrency) {
    uint64_t want = *q.min_concurrency;
    if (!startup_ok) {
      r.items.push_back(SkippedItem("min_concurrency", ">= " + Count(want),
                                    static_cast<double>(want), "requests", ">=", kNotStarted,
                                    at("min_concurrency")));
    } else {
      uint64_t by_cache = cap.cluster_max_requests;
      uint64_t by_seqs = CheckedMul(c.max_num_seqs, cap.replicas);
      uint64_t got = std::min(by_cache, by_seqs);
      std::string detail = fmt::format(
          "{} blocks / {} blocks per {}-token request = {:.2f}x{}", Count(cache_blocks),
          Count(cap.blocks_per_request), Count(c.max_model_len), cap.max_concurrency,
          cap.replicas > 1 ? fmt::format(" per replica, x {} replicas", cap.replicas) : "");
      if (by_seqs < by_cache) {
        detail += fmt::format("; capped by {} {}", SeqCapName(d, c), c.max_num_seqs);
      }
      concurrency_failed = got < want;
      r.items.push_back(WithNumbers(
          Item("min_concurrency", got >= want,
               fmt::format("{} of {} tokens", Plural(got, "request"), Count(c.max_model_len)),
               ">= " + Count(want), detail, at("min_concurrency")),
          static_cast<double>(got), static_cast<double>(want), "requests", ">="));
    }
  }
  if (q.min_tokens_in_cache) {
    uint64_t want = *q.min_tokens_in_cache;
    if (!startup_ok) {
      r.items.push_back(SkippedItem("min_tokens_in_cache", ">= " + Count(want),
                                    static_cast<double>(want), "tokens", ">=", kNotStarted,
                                    at("min_tokens_in_cache")));
    } else {
      // vLLM hybrid: the blocks are shared by its KV-cache groups (docs/capacity.md).
      const std::string per_group =
          cap.kv_cache_groups.empty()
              ? ""
              : fmt::format(" / {} KV-cache groups", cap.kv_cache_groups.size());
      r.items.push_back(WithNumbers(
          Item("min_tokens_in_cache", cap.cluster_max_tokens >= want,
               Count(cap.cluster_max_tokens) + " tokens", ">= " + Count(want),
               fmt::format("{} blocks{} x {} token{}{}", Count(cache_blocks), per_group,
                           cap.block_size, cap.block_size == 1 ? "" : "s",
                           cap.replicas > 1 ? fmt::format(" x {} replicas", cap.replicas) : ""),
               at("min_tokens_in_cache")),
          static_cast<double>(cap.cluster_max_tokens), static_cast<double>(want), "tokens", ">="));
    }
  }
  if (q.min_headroom_percent) {
    double want = *q.min_headroom_percent;
    if (!startup_ok || cache_blocks == 0) {
      r.items.push_back(SkippedItem("min_headroom_percent", ">= " + Pct(want), want, "percent",
                                    ">=", kNotStarted, at("min_headroom_percent")));
    } else if (concurrency_failed) {
      // Headroom is what is spare beyond min_concurrency's requests; where
      // those do not fit, there is none to measure.
      r.items.push_back(SkippedItem("min_headroom_percent", ">= " + Pct(want), want, "percent",
                                    ">=", "min_concurrency fails, so nothing is spare beyond it",
                                    at("min_headroom_percent")));
    } else {
      uint64_t per_replica = CeilDiv(*q.min_concurrency, cap.replicas);
      uint64_t need = CheckedMul(per_replica, cap.blocks_per_request);
      double spare = 100.0 * (static_cast<double>(cache_blocks) - static_cast<double>(need)) /
                     static_cast<double>(cache_blocks);
      r.items.push_back(WithNumbers(
          Item("min_headroom_percent", spare >= want, Pct(spare) + " of the cache spare",
               ">= " + Pct(want),
               fmt::format("{} of {} tokens {} {} of {} blocks", Plural(per_replica, "request"),
                           Count(c.max_model_len), per_replica == 1 ? "holds" : "hold", Count(need),
                           Count(cache_blocks)),
               at("min_headroom_percent")),
          spare, want, "percent", ">="));
    }
  }
}

}  // namespace

bool CheckReport::Pass() const {
  return Failures() == 0;
}

size_t CheckReport::Failures() const {
  return static_cast<size_t>(std::count_if(
      items.begin(), items.end(), [](const CheckItem& i) { return !i.pass && !i.skipped; }));
}

size_t CheckReport::Skipped() const {
  return static_cast<size_t>(
      std::count_if(items.begin(), items.end(), [](const CheckItem& i) { return i.skipped; }));
}

// The checks of RunChecks, without the fixes.
CheckReport CheckOnce(const ModelSpec& m, const HardwareSpec& gpu, const DeployConfig& d) {
  CheckReport r;
  r.file = d.file;
  r.name = d.name;
  r.notes = d.notes;
  EngineConfig config = ToEngineConfig(d);
  CapacityResult cap = ComputeCapacity(m, gpu, config);
  const EngineConfig& c = cap.config;
  // The weights' format is known only where the capacity was computed (not
  // where the engine would refuse the configuration first).
  r.summary = fmt::format("{} on {} x {}, {} tp {}{}{}, max_model_len {}, {}{} cache", m.name,
                          c.gpus_per_node, gpu.name, EngineLabel(c), c.tp,
                          c.pp > 1 ? fmt::format(" pp {}", c.pp) : "",
                          c.dp > 1 ? fmt::format(" dp {}", c.dp) : "", Count(c.max_model_len),
                          cap.weight_format.empty() ? "" : cap.weight_format + " weights, ",
                          cap.kv_cache_dtype.empty() ? c.kv_cache_dtype : cap.kv_cache_dtype);
  if (cap.weights_from.rfind("exact:", 0) == 0) {
    r.notes.push_back(
        fmt::format("weights: {} per GPU ({})", FormatGiB(cap.weights_bytes), cap.weights_from));
  }
  if (d.gpu_count > c.tp * c.pp * c.dp) {
    r.notes.push_back(
        fmt::format("{} GPUs given but tp x pp x dp uses {}", d.gpu_count, c.tp * c.pp * c.dp));
  }

  const bool startup_ok = StartupFailures(m, d, cap, r);
  const uint64_t cache_blocks = CacheBlocks(cap);
  if (startup_ok) {
    r.items.insert(
        r.items.begin(),
        Item("startup", true, "starts", "starts",
             fmt::format("{} KV block{} of {} token{} ({} token{}, {} per GPU)",
                         Count(cache_blocks), cache_blocks == 1 ? "" : "s", cap.block_size,
                         cap.block_size == 1 ? "" : "s", Count(cap.max_tokens),
                         cap.max_tokens == 1 ? "" : "s", FormatGiB(cap.kv_used_bytes)),
             d.engine_pos));
  }
  if (d.strict && !d.unmodelled.empty()) {
    std::string flags;
    for (const std::string& f : d.unmodelled) flags += (flags.empty() ? "" : ", ") + f;
    r.items.push_back(Item("all_flags_modelled", false, flags, "none (--strict)",
                           "--strict: these change the memory left for the KV cache in ways "
                           "kvplan does not model, so its figures would not be the engine's",
                           d.engine_pos));
  }
  CacheRequirementItems(d, cap, cache_blocks, startup_ok, r);
  if (d.workload) WorkloadItems(d, cap, startup_ok, r);
  if (d.requirements.latency) LatencyItems(m, gpu, d, cap, startup_ok, r);
  if (d.requirements.serving) ServingItems(m, gpu, d, cap, startup_ok, r);
  r.capacity = std::move(cap);
  return r;
}

CheckReport RunChecks(const ModelSpec& m, const HardwareSpec& gpu, const DeployConfig& d) {
  CheckReport r = CheckOnce(m, gpu, d);
  for (CheckItem& i : r.items) {
    if (!i.pass && !i.skipped) i.fixes = NearestFixes(m, gpu, d, r.capacity, i.name);
  }
  return r;
}

}  // namespace kvplan
