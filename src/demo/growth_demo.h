// The experiment behind `kvplan demo`: time the tiny transformer generating
// n tokens with no cache, a concat-per-step cache and an O(1)-append cache,
// for growing n, and fit how each total time grows with n.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "demo/growth_fit.h"
#include "demo/tiny_transformer.h"

namespace kvplan::demo {

/// The model `kvplan demo` runs. Its shape is chosen so that attention, not
/// the weight matmuls, dominates every step at the measured n: with d_model
/// 8 in 4 heads of 2, the matmuls of one token (~1,100 multiply-adds) cost
/// about as much as attending to ~20-30 context tokens (4 heads x 2 layers
/// x (4 multiply-adds + an exp) each), so from n = 128 on a cached step is
/// mostly attention (total ~ n^2) and a recomputed one even more so (~ n^3).
TinyConfig DemoModelConfig();

struct GrowthPoint {
  int n = 0;
  double seconds[3] = {0, 0, 0};  // by CacheMode: no cache, concat, append
};

struct GrowthResult {
  TinyConfig config;
  std::vector<GrowthPoint> points;
  PowerFit fit[3];            // by CacheMode
  bool tokens_agree = false;  // the three methods produced the same tokens at the largest n
  double max_logit_diff = 0;  // largest |logit difference| between methods at the largest n
};

/// n values from max_n / 4 to max_n, spaced by 2^(1/4) (9 points for a
/// power of two), increasing, each at least 2. Two octaves: below max_n / 4
/// the per-token weight matmuls still weigh on the cached time and pull its
/// fitted exponent under 2.
std::vector<int> GrowthSizes(int max_n);

/// Generates sizes.back() tokens with each method and reads the clock (CPU
/// time of the calling thread) when the first n of them are done, for each
/// n in `sizes` (increasing): the time to generate n tokens. Runs repeat
/// until 0.5 s has been spent on a method (at most 25), and each point keeps
/// its best run. Checks the methods agree and fits the exponents.
/// `progress` (may be empty) is called before each run.
GrowthResult RunGrowthDemo(const TinyConfig& config, const std::vector<int>& sizes,
                           const std::function<void(const std::string&)>& progress);

/// Largest |a - b| over two equally long logit arrays (infinity when the lengths differ).
double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace kvplan::demo
