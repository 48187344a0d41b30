// vLLM's KV-cache groups for hybrid models (layers of more than one kind:
// full + sliding, attention + Mamba): how vLLM sorts the layers into groups
// of one page size, raises the block for Mamba states, and how many blocks
// one request holds in each group; and vLLM's auto-fit of max_model_len. The common flow
// (capacity.cpp) uses it for vLLM only; every other engine spans all layers with one block.
#include <algorithm>
#include <utility>

#include "plan/capacity_internal.h"
#include "util/checked.h"
#include "util/error.h"
#include "util/units.h"

namespace kvplan {

/// Groups the layers the way vLLM does (vllm/v1/core/kv_cache_utils.py,
/// get_kv_cache_groups): layers with equal specs form one type; a model of one
/// type, or only of full-attention layers (MLA included), or only of sliding
/// layers of one window, keeps one group spanning every layer. Otherwise each
/// type is cut into groups of `group_size` layers (the smallest type's count,
/// or the largest's when it is under 1.5x the smallest), the last group of a
/// type padded, and every group gets its own blocks of one page per layer.
/// With Mamba layers the attention block grows until a page holds a Mamba
/// state (HybridAttentionMambaModelConfig), and the state page is padded to it.
VllmLayout VllmKvCacheGroups(const ModelSpec& m, const KvCost& kv, const EngineConfig& c) {
  struct Type {
    LayerKind kind;
    uint64_t window;       // cap_tokens
    uint64_t token_bytes;  // one token in one layer
    uint64_t state_bytes;  // one sequence in one layer (kState)
    std::vector<uint64_t> layers;
  };
  std::vector<Type> types;  // in order of first layer, as vLLM's dict of layer specs
  const std::vector<size_t> group_of = m.LayerToGroup();
  // A layer's own group, then any state group running beside it (Falcon-H1's
  // Mamba-2 mixer is a layer of its own to vLLM).
  std::vector<std::vector<size_t>> mixers(m.layers);
  for (uint64_t i = 0; i < m.layers; ++i) mixers[i].push_back(group_of[i]);
  for (size_t gi = 0; gi < m.groups.size(); ++gi) {
    if (!m.groups[gi].parallel) continue;
    for (uint64_t i : m.GroupLayers(gi)) mixers[i].push_back(gi);
  }
  for (uint64_t i = 0; i < m.layers; ++i) {
    for (size_t gi : mixers[i]) {
      const GroupCost& g = kv.groups[gi];
      // Shared layers read another layer's cache, MLP-only layers have none: no spec.
      if (g.kind == LayerKind::kShared || g.kind == LayerKind::kNone) continue;
      auto same = [&](const Type& t) {
        return t.kind == g.kind && t.window == g.cap_tokens &&
               t.token_bytes == g.bytes_per_token_layer && t.state_bytes == g.state_bytes_layer;
      };
      auto it = std::find_if(types.begin(), types.end(), same);
      if (it == types.end()) {
        types.push_back({g.kind, g.cap_tokens, g.bytes_per_token_layer, g.state_bytes_layer, {}});
        it = types.end() - 1;
      }
      it->layers.push_back(i);
    }
  }
  VllmLayout out;
  out.block_size = c.block_size;
  if (types.size() <= 1) return out;
  // UniformTypeKVCacheSpecs: layers that all need the same token slots share one group.
  auto slots = [](const Type& t) {
    const bool full = t.kind == LayerKind::kFull || t.kind == LayerKind::kMla;
    return std::pair<int, uint64_t>(full ? 0 : static_cast<int>(t.kind) + 1, t.window);
  };
  const bool any_state = std::any_of(types.begin(), types.end(),
                                     [](const Type& t) { return t.kind == LayerKind::kState; });
  if (!any_state && std::all_of(types.begin(), types.end(),
                                [&](const Type& t) { return slots(t) == slots(types.front()); })) {
    return out;
  }

  // Attention block raised so that one page holds a Mamba state: a multiple of
  // the kernel alignment (16 for FlashAttention and FlashInfer, or the block
  // size when larger), then the state page padded to the attention page.
  uint64_t attn_token_bytes = 0;
  uint64_t state_page = 0;
  for (const Type& t : types) {
    if (t.kind == LayerKind::kState) {
      state_page = std::max(state_page, t.state_bytes);
    } else if (attn_token_bytes == 0) {
      attn_token_bytes = t.token_bytes;
    }
  }
  uint64_t bs = c.block_size;
  if (state_page != 0 && attn_token_bytes != 0) {
    const uint64_t align = std::max<uint64_t>(16, bs);
    const uint64_t need =
        CheckedMul(align, CeilDiv(state_page, CheckedMul(align, attn_token_bytes, "page bytes")));
    bs = std::max(bs, need);
  }
  out.block_size = bs;
  out.state_page_bytes = attn_token_bytes != 0 ? state_page : 0;

  // unify_kv_cache_spec_page_size: smaller attention pages take a larger block
  // (a whole multiple of theirs), or from 0.24 are padded when none is; a
  // state page is padded to the attention page.
  auto page = [&](const Type& t) {
    if (t.kind != LayerKind::kState) return CheckedMul(bs, t.token_bytes, "page bytes");
    return attn_token_bytes != 0 ? CheckedMul(bs, attn_token_bytes, "page bytes") : t.state_bytes;
  };
  uint64_t max_page = 0;
  for (const Type& t : types) max_page = std::max(max_page, page(t));
  out.page_bytes = max_page;

  uint64_t fewest = UINT64_MAX, most = 0;
  for (const Type& t : types) {
    fewest = std::min<uint64_t>(fewest, t.layers.size());
    most = std::max<uint64_t>(most, t.layers.size());
  }
  // The "1" of an n:1 layer pattern, unless the largest type has under 1.5x
  // the smallest's layers (less padding that way).
  const uint64_t group_size = 2 * most < 3 * fewest ? most : fewest;
  for (size_t ti = 0; ti < types.size(); ++ti) {
    const Type& t = types[ti];
    const uint64_t p = page(t);
    // From 0.24 an attention page that is no whole fraction of the largest is
    // padded to it, its block unchanged (page_size_padded); MLA pages are not.
    const bool padded = max_page % p != 0 && c.vllm_version >= kVllmPagePadding &&
                        t.kind != LayerKind::kState && t.kind != LayerKind::kMla;
    if ((max_page % p != 0 && !padded) || (t.kind == LayerKind::kState && p != max_page)) {
      out.error = fmt::format(
          "vLLM cannot unify the page sizes of {}'s layers ({} B is not a whole fraction of {} "
          "B) and refuses to start",
          m.name, p, max_page);
      return out;
    }
    KvCacheGroup g;
    g.kind = t.kind;
    g.window = t.window;
    g.type = ti;
    // A state group has one block a request; vLLM sets its block to max_model_len.
    g.block_size = t.kind == LayerKind::kState ? c.max_model_len
                   : padded                    ? bs
                                               : bs * (max_page / p);
    // Layer i of the type goes to group i mod n, so that pipeline stages
    // share their layers evenly among the groups.
    const uint64_t n = CeilDiv(t.layers.size(), group_size);
    for (uint64_t j = 0; j < n; ++j) {
      g.layers.clear();
      for (uint64_t k = j; k < t.layers.size(); k += n) g.layers.push_back(t.layers[k]);
      out.groups.push_back(g);
    }
  }
  return out;
}

/// Layers per KV-cache group on the stage [first, first + n): the most that
/// any group has there (vLLM pads the others up to it).
uint64_t StageGroupSize(const std::vector<KvCacheGroup>& groups, uint64_t first, uint64_t n) {
  uint64_t most = 0;
  for (const KvCacheGroup& g : groups) {
    const uint64_t here = static_cast<uint64_t>(std::count_if(
        g.layers.begin(), g.layers.end(), [&](uint64_t i) { return i >= first && i < first + n; }));
    most = std::max(most, here);
  }
  return most;
}

/// Blocks one request of `n` tokens holds in one vLLM KV-cache group
/// (kv_cache_interface.py, max_memory_usage_bytes / page_size_bytes).
uint64_t VllmGroupBlocks(const KvCacheGroup& g, uint64_t n, uint64_t batched) {
  const uint64_t bs = g.block_size;
  switch (g.kind) {
    case LayerKind::kSliding:
      return CeilDiv(std::min(g.window - 1 + batched, n), bs) + 1;
    case LayerKind::kChunked:
      return CeilDiv(std::min(g.window + batched, n), bs);
    case LayerKind::kState:
      return 1;  // mamba_cache_mode "none": one state page per request
    case LayerKind::kFull:
    case LayerKind::kMla:
    case LayerKind::kShared:
    case LayerKind::kNone:
      break;
  }
  return CeilDiv(n, bs);
}

/// vLLM's auto-fit (--max-model-len -1, _auto_fit_max_model_len): the
/// model's max_context when one request of it fits, else the longest that
/// does (the null block left out from 0.29); none fitting is vLLM's
/// "Cannot auto-fit max_model_len" error.
CapacityResult AutoFitMaxModelLen(const ModelSpec& m, const HardwareSpec& gpu,
                                  const EngineConfig& config) {
  EngineConfig c = config;
  c.max_model_len_auto = false;
  c.max_model_len = 0;
  CapacityResult r = ComputeCapacity(m, gpu, c);
  if (!r.fits && !r.HasError() && r.largest_max_model_len != 0) {
    const uint64_t derived = r.max_model_len;
    c.max_model_len = r.largest_max_model_len;
    r = ComputeCapacity(m, gpu, c);
    AddLint(r, Severity::kWarning, "max-model-len-auto-fit",
            fmt::format("vLLM's auto-fit lowers max_model_len from {} to {}, the longest request "
                        "the KV cache holds",
                        WithCommas(derived), WithCommas(r.max_model_len)));
  } else if (!r.fits && !r.HasError()) {
    AddLint(r, Severity::kError, "max-model-len-auto-fit",
            "vLLM cannot auto-fit max_model_len: the KV cache holds no request of even one "
            "token");
  }
  r.config.max_model_len_auto = true;
  return r;
}

CapacityResult WithoutHybridManager(const ModelSpec& m, const HardwareSpec& gpu,
                                    const EngineConfig& config) {
  EngineConfig c = config;
  c.disable_hybrid_kv_cache_manager = false;
  auto has = [&](auto pred) { return std::any_of(m.groups.begin(), m.groups.end(), pred); };
  const bool windowed = has([](const LayerGroup& g) {
    return g.kind == LayerKind::kSliding || g.kind == LayerKind::kChunked;
  });
  const bool full = has(
      [](const LayerGroup& g) { return g.kind == LayerKind::kFull || g.kind == LayerKind::kMla; });
  const bool state = has([](const LayerGroup& g) { return g.kind == LayerKind::kState; });
  if (!windowed && !state) return ComputeCapacity(m, gpu, c);  // one kind already
  if (!full || state) {
    CapacityResult r = ComputeCapacity(m, gpu, c);
    AddLint(
        r, Severity::kError, "vllm-hybrid-disabled",
        fmt::format("with --disable-hybrid-kv-cache-manager vLLM cannot unify {}'s layers "
                    "into one kind ({}) and refuses to start",
                    m.name,
                    state ? "state layers beside attention" : "windows without full attention"));
    return r;
  }
  ModelSpec unified = m;
  for (LayerGroup& g : unified.groups) {
    if (g.kind != LayerKind::kSliding && g.kind != LayerKind::kChunked) continue;
    g.kind = LayerKind::kFull;  // a FullAttentionSpec with its sliding_window noted
    g.window = 0;
  }
  CapacityResult r = ComputeCapacity(unified, gpu, c);
  r.config.disable_hybrid_kv_cache_manager = true;
  AddLint(r, Severity::kWarning, "vllm-hybrid-disabled",
          "--disable-hybrid-kv-cache-manager: vLLM caches every token of the sliding-window "
          "layers, as full attention");
  return r;
}

}  // namespace kvplan
