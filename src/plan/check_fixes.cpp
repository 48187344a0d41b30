// Every failed check's nearest changes that pass: each candidate (a
// shorter max_model_len, an 8-bit cache, fewer sequences, another tp, another
// GPU) is checked again with that change alone.
#include <fmt/format.h>

#include <algorithm>

#include "plan/check_internal.h"
#include "spec/catalog.h"
#include "util/error.h"
#include "util/units.h"

namespace kvplan {
namespace {

// Whether `name`'s item passes when `d` runs on `gpu`; a change the engine
// refuses outright (an error while checking) does not pass.
bool ItemPasses(const ModelSpec& m, const HardwareSpec& gpu, const DeployConfig& d,
                const std::string& name) {
  try {
    const CheckReport r = CheckOnce(m, gpu, d);
    bool found = false;
    for (const CheckItem& i : r.items) {
      if (i.name != name) continue;
      if (!i.pass) return false;
      found = true;
    }
    return found;
  } catch (const Error&) {
    return false;
  }
}

// The cache dtype that halves a 16-bit cache, as the engine names it.
const char* Fp8CacheName(Engine e) {
  switch (e) {
    case Engine::kSglang:
      return "fp8_e4m3";
    case Engine::kLlamaCpp:
      return "q8_0";
    default:
      return "fp8";
  }
}

}  // namespace

// The nearest changes that make the failed item `name` pass, each checked:
// the largest max_model_len (binary search), an 8-bit cache, the largest
// max_num_seqs below the current one, the smallest tp, and the catalog GPU
// with the least memory, in that order.
std::vector<std::string> NearestFixes(const ModelSpec& m, const HardwareSpec& gpu,
                                      const DeployConfig& d, const CapacityResult& cap,
                                      const std::string& name) {
  std::vector<std::string> fixes;
  const EngineConfig& c = cap.config;
  const EngineArgs& a = d.args;
  if (c.engine != Engine::kLlamaCpp && c.max_model_len > 1) {
    DeployConfig t = d;
    uint64_t lo = 0, hi = c.max_model_len - 1;  // the largest passing length is in [lo, hi]
    while (lo < hi) {
      const uint64_t mid = hi - (hi - lo) / 2;
      t.args.max_model_len = mid;
      if (ItemPasses(m, gpu, t, name)) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    t.args.max_model_len = lo;
    if (lo > 0 && ItemPasses(m, gpu, t, name)) {
      fixes.push_back(fmt::format("{} {}", a.NameOf("max_model_len"), lo));
    }
  }
  const std::string dtype = cap.kv_cache_dtype;
  if (dtype.empty() || dtype == "fp16" || dtype == "bf16" || dtype == "fp32") {
    DeployConfig t = d;
    t.args.kv_cache_dtype = Fp8CacheName(c.engine);
    if (ItemPasses(m, gpu, t, name)) {
      fixes.push_back(fmt::format("{} {}", a.NameOf("kv_cache_dtype"), *t.args.kv_cache_dtype));
    }
  }
  if (c.engine != Engine::kLlamaCpp && c.max_num_seqs > 1) {
    DeployConfig t = d;
    for (uint64_t seqs = c.max_num_seqs / 2; seqs >= 1; seqs /= 2) {
      t.args.max_num_seqs = seqs;
      if (ItemPasses(m, gpu, t, name)) {
        fixes.push_back(fmt::format("{} {}", a.NameOf("max_num_seqs"), seqs));
        break;
      }
    }
  }
  if (c.engine != Engine::kLlamaCpp) {
    // The smallest tp that passes, a power of two up to 8 (or twice the
    // current one): a smaller one where the heads do not divide.
    DeployConfig t = d;
    for (uint64_t tp = 1; tp <= std::max<uint64_t>(8, c.tp * 2) && tp <= 64; tp *= 2) {
      if (tp == c.tp) continue;
      t.args.tp = tp;
      if (t.gpu_count != 0 && t.gpu_count < tp * c.pp * c.dp) t.gpu_count = 0;
      if (ItemPasses(m, gpu, t, name)) {
        fixes.push_back(
            fmt::format("{} {} ({})", a.NameOf("tp"), tp, Plural(tp * c.pp * c.dp, "GPU")));
        break;
      }
    }
  }
  std::vector<const HardwareSpec*> gpus;
  for (const HardwareSpec& h : CatalogHardware()) {
    if (h.name != gpu.name && h.memory_bytes > 0) gpus.push_back(&h);
  }
  std::stable_sort(gpus.begin(), gpus.end(), [](const HardwareSpec* x, const HardwareSpec* y) {
    return x->memory_bytes < y->memory_bytes;
  });
  for (const HardwareSpec* h : gpus) {
    if (ItemPasses(m, *h, d, name)) {
      fixes.push_back("gpu " + h->name);
      break;
    }
  }
  return fixes;
}

}  // namespace kvplan
