#include "plan/latency_fit.h"

#include <algorithm>

#include "util/checked.h"

namespace kvplan {

uint64_t ResidentBytes(const LatencySetup& s, uint64_t batch) {
  return CheckedAdd(CheckedAdd(s.cost.dense_weight_bytes, s.cost.expert_weight_bytes),
                    CheckedAdd(s.cost.lookup_weight_bytes, s.cost.kv.TotalBytes(s.context, batch)));
}

uint64_t WeightBytes(const LatencySetup& s) {
  return CheckedAdd(CheckedAdd(s.cost.dense_weight_bytes, s.cost.expert_weight_bytes),
                    s.cost.lookup_weight_bytes);
}

bool Fits(const LatencySetup& s, uint64_t batch) {
  return s.hw.TotalMemoryBytes() == 0 || ResidentBytes(s, batch) <= s.hw.TotalMemoryBytes();
}

std::vector<uint64_t> TableBatches(const LatencySetup& s, uint64_t limit) {
  std::vector<uint64_t> out;
  const uint64_t turn = ComputeBoundBatch(s.cost, s.hw, s.context, 1 << 16);
  const uint64_t last =
      limit != 0 ? limit : std::max<uint64_t>(turn != 0 ? turn * 2 : 256, s.batch);
  for (uint64_t b = 1; b <= last; b *= 2) out.push_back(b);
  if (s.batch > 0 && std::find(out.begin(), out.end(), s.batch) == out.end() && s.batch <= last) {
    out.push_back(s.batch);
    std::sort(out.begin(), out.end());
  }
  return out;
}

}  // namespace kvplan
