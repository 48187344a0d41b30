#include "import/layer_sets.h"

namespace kvplan {

bool IsPeriodic(const std::vector<uint64_t>& indices, uint64_t total, uint64_t& every,
                uint64_t& offset) {
  if (indices.empty()) return false;
  every = indices.size() == 1 ? total : indices[1] - indices[0];
  offset = indices[0];
  if (every == 0 || offset >= every) return false;
  uint64_t k = 0;
  for (uint64_t i = offset; i < total; i += every, ++k) {
    if (k >= indices.size() || indices[k] != i) return false;
  }
  return k == indices.size();
}

void LayerSetsToGroups(std::vector<LayerSet> sets, uint64_t total, std::vector<LayerGroup>& out) {
  std::erase_if(sets, [](const LayerSet& s) { return s.layers.empty(); });
  auto group = [](const LayerSet& s) {
    LayerGroup g;
    g.kind = s.kind;
    g.kv_heads = s.kv_heads;
    g.window = s.window;
    g.layers = s.layers.size();
    return g;
  };
  if (sets.size() == 1) {
    LayerGroup g = group(sets[0]);
    g.layers = total;
    out = {g};
    return;
  }
  for (size_t rest = sets.size(); rest-- > 0;) {
    std::vector<LayerGroup> groups;
    bool ok = true;
    for (size_t k = 0; k < sets.size() && ok; ++k) {
      if (k == rest) continue;
      groups.push_back(group(sets[k]));
      ok = IsPeriodic(sets[k].layers, total, groups.back().every, groups.back().offset);
    }
    if (!ok) continue;
    groups.push_back(group(sets[rest]));
    out = groups;
    return;
  }
  // Not periodic (Nemotron-H's pattern): every set but the largest lists its
  // layers, the largest takes the rest.
  size_t largest = 0;
  for (size_t k = 1; k < sets.size(); ++k) {
    if (sets[k].layers.size() > sets[largest].layers.size()) largest = k;
  }
  out.clear();
  for (size_t k = 0; k < sets.size(); ++k) {
    if (k == largest) continue;
    out.push_back(group(sets[k]));
    out.back().at = sets[k].layers;
  }
  out.push_back(group(sets[largest]));
}

}  // namespace kvplan
