#include "cli/vary.h"

#include <cstdlib>
#include <string_view>

#include "plan/compare.h"
#include "util/error.h"
#include "util/units.h"

namespace kvplan {
namespace {

// Unsets the engine flag `name` (as in EngineFlags) in `f`.
void ResetEngineFlag(DeployFlags& f, std::string_view name) {
  if (name == "--gpu-memory-utilization")
    f.gpu_memory_utilization.reset();
  else if (name == "--vllm-version")
    f.vllm_version.reset();
  else if (name == "--mem-fraction-static")
    f.mem_fraction_static.reset();
  else if (name == "--max-total-tokens")
    f.max_total_tokens.clear();
  else if (name == "--free-gpu-memory-fraction")
    f.free_gpu_memory_fraction.reset();
  else if (name == "--max-num-seqs")
    f.max_num_seqs.clear();
  else if (name == "--max-mamba-cache-size")
    f.max_mamba_cache_size.clear();
  else if (name == "--mamba-full-memory-ratio")
    f.mamba_full_memory_ratio.reset();
  else if (name == "--disable-radix-cache")
    f.disable_radix_cache = false;
  else if (name == "--mamba-cache-dtype")
    f.mamba_cache_dtype.clear();
  else if (name == "--mamba-ssm-dtype")
    f.mamba_ssm_dtype.clear();
}

}  // namespace

std::pair<std::string, std::vector<std::string>> ParseVary(const std::string& text,
                                                           const std::string& flag) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    Fail("{}: '{}': expected KEY=V1,V2 (e.g. kv-cache-dtype=fp16,fp8 or tp=2,4)", flag, text);
  }
  std::string key = text.substr(0, eq);
  std::vector<std::string> values;
  size_t start = eq + 1;
  while (true) {
    size_t comma = text.find(',', start);
    std::string v =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (v.empty()) Fail("{}: '{}': empty value in the list", flag, text);
    values.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return {key, values};
}

std::vector<std::string> GivenEngineFlags(const DeployFlags& flags) {
  std::vector<std::string> given;
  for (const EngineFlag& flag : EngineFlags()) {
    DeployFlags unset = flags;
    ResetEngineFlag(unset, flag.name);
    if (!(unset == flags)) given.emplace_back(flag.name);
  }
  return given;
}

DeployFlags WithVaryValue(DeployFlags f, const std::string& key, const std::string& v) {
  // The same range as the flag itself (--tp, --pp: 1-65536; --block-size: 1-1048576).
  auto u64 = [&](const char* flag, uint64_t max) {
    uint64_t n = ParseTokens(v, flag);
    if (n == 0) Fail("--vary {}: values must be at least 1", key);
    if (n > max) Fail("--vary {}: {} is more than {}", key, n, max);
    return n;
  };
  if (key == "kv-cache-dtype")
    f.kv_cache_dtype = v;
  else if (key == "tp")
    f.tp = u64("--vary tp", uint64_t{1} << 16);
  else if (key == "pp")
    f.pp = u64("--vary pp", uint64_t{1} << 16);
  else if (key == "gpu")
    f.gpu = v;
  else if (key == "engine") {
    f.engine = v;
    // An engine's own flags apply to its columns only (EngineFlags), however
    // the name is written; a bad name is reported later, with the --vary
    // value, and keeps every flag.
    Engine e{};
    try {
      e = ParseEngine(v);
    } catch (const Error&) {
      return f;
    }
    for (const EngineFlag& flag : EngineFlags()) {
      if (!flag.Takes(e)) ResetEngineFlag(f, flag.name);
    }
  } else if (key == "vllm-version")
    f.vllm_version = v;
  else if (key == "max-model-len")
    f.max_model_len = v;
  else if (key == "block-size")
    f.block_size = u64("--vary block-size", uint64_t{1} << 20);
  else if (key == "kv-cache-memory-bytes")
    f.kv_cache_memory_bytes = v;
  else if (key == "gpu-memory-utilization") {
    const double d = TryParseReal(v).value_or(0);  // util/units' one grammar
    if (!(d > 0 && d <= 1)) {
      Fail("--vary gpu-memory-utilization: '{}' is not in (0, 1]", v);
    }
    f.gpu_memory_utilization = d;
  }
  return f;
}

}  // namespace kvplan
