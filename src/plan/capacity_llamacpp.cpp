// llama.cpp's cache: it allocates n_ctx cells (padded to 256) up front for
// all of its -np sequences, so the budget only decides whether that fits;
// sliding-window layers get cells that grow with the sequences, not with the
// context. This file holds that arithmetic and the count that the common
// flow (capacity.cpp) runs for llama.cpp instead of counting blocks.
#include <algorithm>

#include "plan/capacity_internal.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/units.h"

namespace kvplan {
namespace {

/// llama.cpp's cells for `seqs` sequences in an n_ctx of `n_ctx`
/// (llama-context.cpp, llama-kv-cache-iswa.cpp). n_ctx is padded to 256
/// first. With one unified cache (--kv-unified) every layer gets those
/// cells, and sliding layers min(that, PAD(n_swa * seqs + n_ubatch)). Without
/// it (llama-server's default for -np N) each sequence has its own stream of
/// PAD(n_ctx / seqs) cells, so `-c 1024 -np 3` allocates 3 x 512 = 1,536; a
/// stream's sliding layers get min(that, PAD(n_swa + n_ubatch)). --swa-full
/// gives sliding layers the full count. The window cells grow with the
/// sequences, not with the context: that is why the fit is not per-token
/// bytes times cells.
struct LlamaCppCells {
  uint64_t full = 0;
  uint64_t swa = 0;
};

LlamaCppCells CellsFor(const KvCost& kv, const EngineConfig& c, uint64_t n_ctx, uint64_t seqs) {
  LlamaCppCells out;
  const uint64_t padded = RoundUp(n_ctx, c.block_size, "llama.cpp cells");
  // Streams: one unified cache, or one per sequence.
  const uint64_t streams = c.kv_unified ? 1 : std::max<uint64_t>(seqs, 1);
  const uint64_t per_stream = RoundUp(padded / streams, c.block_size, "llama.cpp cells");
  out.full = CheckedMul(per_stream, streams, "llama.cpp cells");
  out.swa = out.full;
  uint64_t window = 0;  // llama.cpp has one n_swa: the widest window
  for (const GroupCost& g : kv.groups) {
    if (Windowed(g)) window = std::max(window, g.cap_tokens);
  }
  if (window == 0 || c.swa_full) return out;
  const uint64_t window_seqs = c.kv_unified ? seqs : 1;  // sequences one stream's window holds
  const uint64_t want = CheckedAdd(CheckedMul(window, window_seqs, "llama.cpp SWA cells"),
                                   c.n_ubatch, "llama.cpp SWA cells");
  const uint64_t swa_per_stream =
      std::min(per_stream, RoundUp(want, c.block_size, "llama.cpp SWA cells"));
  out.swa = CheckedMul(swa_per_stream, streams, "llama.cpp SWA cells");
  return out;
}

/// What llama.cpp allocates for those cells, plus each sequence's fixed
/// (recurrent) state: what must fit in the budget.
uint64_t AllocBytes(const KvCost& kv, const LlamaCppCells& cells, uint64_t seqs) {
  uint64_t total = CheckedMul(kv.fixed_bytes, seqs, "llama.cpp KV bytes");
  for (const GroupCost& g : kv.groups) {
    const uint64_t n = Windowed(g) ? cells.swa : cells.full;
    total = CheckedAdd(total, CheckedMul(g.per_token_bytes, n, "llama.cpp KV bytes"),
                       "llama.cpp KV bytes");
  }
  return total;
}

}  // namespace

std::vector<uint64_t> LlamaCppStageLayers(uint64_t n_layer, const EngineConfig& c,
                                          uint64_t& first) {
  const uint64_t gpus = c.pp;
  std::vector<float> splits(gpus, 1.0f);
  if (!c.tensor_split.empty()) {
    if (c.tensor_split.size() != gpus) {
      Fail("-ts/--tensor-split gives {} shares for {} GPUs (-pp): give one share per GPU",
           c.tensor_split.size(), gpus);
    }
    for (size_t i = 0; i < gpus; ++i) splits[i] = static_cast<float>(c.tensor_split[i]);
  }
  // The shares summed and normalised: each GPU's upper split point.
  float sum = 0;
  for (float& s : splits) {
    sum += s;
    s = sum;
  }
  if (!(sum > 0)) Fail("-ts/--tensor-split: the shares add up to 0");
  for (float& s : splits) s /= sum;
  const uint64_t ngl = c.n_gpu_layers.value_or(n_layer + 1);
  first = n_layer > ngl ? n_layer - ngl : 0;
  // The output layer counts as one more: -ngl n_layer + 1 offloads it too.
  const uint64_t act = std::min(ngl, n_layer + 1);
  std::vector<uint64_t> counts(gpus, 0);
  for (uint64_t il = first; il < n_layer; ++il) {
    const float at = static_cast<float>(il - first) / static_cast<float>(act);
    const size_t gpu =
        static_cast<size_t>(std::upper_bound(splits.begin(), splits.end(), at) - splits.begin());
    ++counts[std::min(gpu, gpus - 1)];
  }
  for (size_t i = 0; i < gpus; ++i) {
    if (counts[i] == 0 && first < n_layer) {
      Fail(
          "llama.cpp puts no layer on GPU {} of {} ({} layers offloaded{}); use fewer GPUs (-pp) "
          "or a larger share",
          i, gpus, n_layer - first, c.tensor_split.empty() ? "" : " at these -ts shares");
    }
  }
  return counts;
}

bool LlamaCppOutputOnCpu(const ModelSpec& m, const EngineConfig& c) {
  return c.engine == Engine::kLlamaCpp && c.n_gpu_layers && *c.n_gpu_layers <= m.layers;
}

uint64_t LlamaCppAllocBytes(const KvCost& kv, const EngineConfig& c) {
  return AllocBytes(kv, CellsFor(kv, c, c.n_ctx, c.n_parallel), c.n_parallel);
}

uint64_t SeqsAllocBytes(const KvCost& kv, const EngineConfig& c, uint64_t tokens, uint64_t seqs) {
  const uint64_t n_ctx = CheckedMul(tokens, seqs, "llama.cpp n_ctx");
  return AllocBytes(kv, CellsFor(kv, c, n_ctx, seqs), seqs);
}

void CountLlamaCppCells(CapacityResult& r, const StageCapacity& t, const EngineConfig& c,
                        const CacheDtype& dtype) {
  // llama.cpp allocates n_ctx cells (padded) whatever the budget.
  const LlamaCppCells cells = CellsFor(t.kv, c, c.n_ctx, c.n_parallel);
  r.cells = cells.full;
  r.swa_cells = cells.swa;
  uint64_t k = 0, v = 0;
  for (size_t i = 0; i < t.kv.groups.size(); ++i) {
    const GroupCost& g = t.kv.groups[i];
    if (g.per_token_bytes == 0) continue;
    const uint64_t n = Windowed(g) ? cells.swa : cells.full;
    const uint64_t kb = KeyBytesPerToken(g, dtype);
    k = CheckedAdd(k, CheckedMul(kb, n));
    v = CheckedAdd(v, CheckedMul(g.per_token_bytes - kb, n));
  }
  r.k_bytes = k;
  r.v_bytes = v;
  r.kv_used_bytes = AllocBytes(t.kv, cells, c.n_parallel);
  if (c.no_kv_offload) {
    // -nkvo: every layer's cache is in host memory (r.host_kv_bytes); the
    // GPUs hold weights and compute buffers only.
    r.kv_used_bytes = 0;
    r.max_tokens = r.cells;
    r.request_bytes = r.RequestBytes(c.max_model_len);
    r.blocks_per_request = r.BlocksForRequest(c.max_model_len);
    r.fits = true;
    r.max_requests = c.n_parallel;
    r.max_concurrency = static_cast<double>(r.max_requests);
    r.largest_max_model_len = r.model_max_context;
    return;
  }
  r.max_tokens = r.cells;
  r.request_bytes = r.RequestBytes(c.max_model_len);
  r.blocks_per_request = r.BlocksForRequest(c.max_model_len);
  r.fits = r.kv_used_bytes <= r.kv_budget_bytes;
  r.max_requests = r.fits ? c.n_parallel : 0;
  r.max_concurrency = static_cast<double>(r.max_requests);
  // The longest per-sequence context whose cells for all n_parallel
  // sequences fit, window cells and state included: the same question
  // --concurrency asks at n_parallel, so the two answers agree.
  r.largest_max_model_len = MaxModelLenAtConcurrency(r, c.n_parallel);
  if (!r.fits) {
    AddLint(r, Severity::kWarning, "kv-fits",
            fmt::format("n_ctx {} needs {} of KV cache but only {} is left after weights and "
                        "the compute buffer; -c {} fits",
                        c.n_ctx, FormatBoth(r.kv_used_bytes), FormatBoth(r.kv_budget_bytes),
                        r.largest_max_model_len * c.n_parallel));
  }
}

}  // namespace kvplan
