#include "demo/growth_demo.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>

namespace kvplan::demo {
namespace {

// CPU time of this thread: the demo is single-threaded, and on a shared
// machine wall time also counts whoever else is running; the growth
// exponent is about the work done, so CPU time is the honest clock here.
double ThreadSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

constexpr CacheMode kModes[3] = {CacheMode::kNoCache, CacheMode::kConcat, CacheMode::kAppend};
constexpr int kPromptToken = 1;

}  // namespace

TinyConfig DemoModelConfig() {
  TinyConfig c;
  c.layers = 2;
  c.d_model = 8;
  c.heads = 4;
  c.mlp_hidden = 16;
  c.vocab = 16;
  return c;
}

std::vector<int> GrowthSizes(int max_n) {
  std::vector<int> sizes;
  for (int i = 8; i >= 0; --i) {
    int n = std::max(2, static_cast<int>(std::lround(max_n / std::pow(2.0, i / 4.0))));
    if (sizes.empty() || n > sizes.back()) sizes.push_back(n);
  }
  return sizes;
}

double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    m = std::max(m, std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
  }
  return m;
}

GrowthResult RunGrowthDemo(const TinyConfig& config, const std::vector<int>& sizes,
                           const std::function<void(const std::string&)>& progress) {
  GrowthResult r;
  r.config = config;
  const TinyTransformer model(config);
  const int max_n = sizes.back();
  r.points.resize(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    r.points[i].n = sizes[i];
    for (double& s : r.points[i].seconds) s = std::numeric_limits<double>::infinity();
  }
  Generation last[3];
  for (int m = 0; m < 3; ++m) {
    double spent = 0;
    for (int rep = 0; rep < 25 && spent < 0.5; ++rep) {
      if (progress) progress(fmt::format("{}, run {}", CacheModeName(kModes[m]), rep + 1));
      size_t next = 0;
      const double t0 = ThreadSeconds();
      auto hook = [&](int generated) {
        if (next < sizes.size() && generated == sizes[next]) {
          double& best = r.points[next++].seconds[m];
          best = std::min(best, ThreadSeconds() - t0);
        }
      };
      last[m] = model.Generate(kModes[m], kPromptToken, max_n, hook);
      spent += ThreadSeconds() - t0;
    }
  }
  for (int m = 0; m < 3; ++m) {
    std::vector<double> x, y;
    for (const GrowthPoint& p : r.points) {
      x.push_back(p.n);
      y.push_back(std::max(p.seconds[m], 1e-9));
    }
    r.fit[m] = FitPowerLaw(x, y);
  }
  r.tokens_agree = last[0].tokens == last[1].tokens && last[1].tokens == last[2].tokens;
  r.max_logit_diff = std::max(MaxAbsDiff(last[0].logits, last[2].logits),
                              MaxAbsDiff(last[1].logits, last[2].logits));
  return r;
}

}  // namespace kvplan::demo
