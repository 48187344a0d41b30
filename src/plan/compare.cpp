#include "plan/compare.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "plan/engines.h"
#include "util/error.h"
#include "util/suggest.h"

namespace kvplan {

double CompareRow::Ratio(size_t i) const {
  if (values.empty() || values[0] == 0) return 0;
  return values[i] / values[0];
}

std::vector<CompareRow> CompareRows(const std::vector<CompareColumn>& cols) {
  std::vector<CompareRow> rows = {
      {"bytes_per_token", "KV bytes per token (per GPU)", "count", {}, false},
      {"weights_bytes", "weights per GPU", "bytes", {}, false},
      {"kv_budget_bytes", "KV budget per GPU", "bytes", {}, true},
      {"num_blocks", "KV blocks", "count", {}, true},
      {"max_tokens", "tokens in cache", "count", {}, true},
      {"max_model_len", "max-model-len", "count", {}, true},
      {"max_concurrency", "max concurrency at max-model-len", "x", {}, true},
      {"largest_max_model_len", "longest single request", "count", {}, true},
      {"gpus", "GPUs", "count", {}, false},
      {"cluster_max_tokens", "tokens in cache, all replicas", "count", {}, true},
  };
  for (const CompareColumn& c : cols) {
    const CapacityResult& r = c.cap;
    rows[0].values.push_back(static_cast<double>(r.bytes_per_token));
    rows[1].values.push_back(static_cast<double>(r.weights_bytes));
    rows[2].values.push_back(static_cast<double>(r.kv_budget_bytes));
    rows[3].values.push_back(static_cast<double>(r.num_blocks));
    rows[4].values.push_back(static_cast<double>(r.max_tokens));
    rows[5].values.push_back(static_cast<double>(r.max_model_len));
    rows[6].values.push_back(r.max_concurrency);
    rows[7].values.push_back(static_cast<double>(r.largest_max_model_len));
    rows[8].values.push_back(static_cast<double>(r.gpus));
    rows[9].values.push_back(static_cast<double>(r.cluster_max_tokens));
  }
  return rows;
}

const std::vector<std::string>& VaryKeys() {
  static const std::vector<std::string> keys = {"kv-cache-dtype",
                                                "tp",
                                                "pp",
                                                "gpu",
                                                "engine",
                                                "max-model-len",
                                                "block-size",
                                                "gpu-memory-utilization",
                                                "kv-cache-memory-bytes",
                                                "vllm-version"};
  return keys;
}

void CheckVaryKey(const std::string& key) {
  const std::vector<std::string>& keys = VaryKeys();
  if (std::find(keys.begin(), keys.end(), key) != keys.end()) return;
  Fail("--vary: unknown setting '{}'{} (one of: {})", key, DidYouMean(key, keys),
       fmt::join(keys, ", "));
}

bool EngineFlag::Takes(Engine e) const {
  return (std::find(engines.begin(), engines.end(), e) != engines.end()) != except;
}

const std::vector<EngineFlag>& EngineFlags() {
  static const std::vector<EngineFlag> flags = {
      {"--gpu-memory-utilization", {Engine::kVllm}, false},
      {"--vllm-version", {Engine::kVllm}, false},
      {"--mem-fraction-static", {Engine::kSglang}, false},
      {"--max-total-tokens", {Engine::kSglang}, false},
      {"--free-gpu-memory-fraction", {Engine::kTrtllm}, false},
      {"--max-mamba-cache-size", {Engine::kSglang}, false},
      {"--mamba-full-memory-ratio", {Engine::kSglang}, false},
      {"--disable-radix-cache", {Engine::kSglang}, false},
      {"--mamba-cache-dtype", {Engine::kVllm}, false},
      {"--mamba-ssm-dtype", {Engine::kSglang, Engine::kVllm}, false},
      {"--max-num-seqs", {Engine::kLlamaCpp}, true},
  };
  return flags;
}

void CheckEngineFlagsTaken(const std::string& vary, const std::vector<std::string>& given,
                           const std::vector<std::string>& values) {
  for (const EngineFlag& flag : EngineFlags()) {
    if (std::find(given.begin(), given.end(), flag.name) == given.end()) continue;
    bool taken = false;
    for (const std::string& v : values) {
      try {
        taken = taken || flag.Takes(ParseEngine(v));
      } catch (const Error&) {
        taken = true;  // reported with its column
      }
    }
    if (!taken) {
      std::vector<std::string> names;
      for (Engine e : flag.engines) names.emplace_back(EngineName(e));
      Fail("--vary {}: {} is for {}{}, and no column's engine takes it", vary, flag.name,
           flag.except ? "every engine but " : "", fmt::join(names, ", "));
    }
  }
}

bool FractionRead(const EngineConfig& c) {
  if (MemoryFractionFlag(c.engine).empty()) return false;
  return !(c.engine == Engine::kVllm && c.kv_cache_memory_bytes != 0);
}

}  // namespace kvplan
