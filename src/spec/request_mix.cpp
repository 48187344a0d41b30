#include "spec/request_mix.h"

#include <algorithm>
#include <cmath>

namespace kvplan {

uint64_t SplitMix64::Next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double SplitMix64::NextDouble() {
  return static_cast<double>(Next() >> 11) * 0x1.0p-53;
}

uint64_t SplitMix64::Between(uint64_t lo, uint64_t hi) {
  uint64_t span = hi - lo;
  if (span == UINT64_MAX) return Next();
  uint64_t n = span + 1;
  // Reject the top sliver so every value is equally likely.
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x = Next();
  while (x >= limit) x = Next();
  return lo + x % n;
}

namespace {

// One standard normal draw (Box-Muller; the second value is discarded so
// each draw consumes exactly two uniforms, keeping streams easy to reason about).
double StandardNormal(SplitMix64& rng) {
  double u1 = 1.0 - rng.NextDouble();  // (0, 1]: log is finite
  double u2 = rng.NextDouble();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

uint64_t Lognormal(SplitMix64& rng, double mean, double sigma, uint64_t lo, uint64_t hi) {
  double mu = std::log(mean) - sigma * sigma / 2.0;
  double x = std::exp(mu + sigma * StandardNormal(rng));
  double r = std::round(x);
  if (!(r >= static_cast<double>(lo))) return lo;  // also catches NaN
  if (r >= static_cast<double>(hi)) return hi;
  return static_cast<uint64_t>(r);
}

}  // namespace

RequestMix GenerateMix(const MixParams& p, const std::string& source) {
  RequestMix mix;
  mix.source = source;
  mix.requests.reserve(p.count);
  SplitMix64 rng(p.seed);
  for (uint64_t i = 0; i < p.count; ++i) {
    Request r;
    if (p.distribution == MixDistribution::kUniform) {
      r.prompt_tokens = rng.Between(p.prompt_min, p.prompt_max);
      r.output_tokens = rng.Between(p.output_min, p.output_max);
    } else {
      r.prompt_tokens = Lognormal(rng, p.prompt_mean, p.prompt_sigma, p.prompt_min, p.prompt_max);
      r.output_tokens = Lognormal(rng, p.output_mean, p.output_sigma, p.output_min, p.output_max);
    }
    mix.requests.push_back(r);
  }
  return mix;
}

MixStats ComputeMixStats(const RequestMix& mix) {
  MixStats s;
  s.count = mix.requests.size();
  if (s.count == 0) return s;
  std::vector<uint64_t> lengths;
  lengths.reserve(s.count);
  double prompt = 0, output = 0;
  for (const Request& r : mix.requests) {
    lengths.push_back(r.Tokens());
    prompt += static_cast<double>(r.prompt_tokens);
    output += static_cast<double>(r.output_tokens);
  }
  std::sort(lengths.begin(), lengths.end());
  auto rank = [&](double q) {
    // Nearest rank: the smallest value with at least q of the mix at or below it.
    size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(s.count)));
    return lengths[std::clamp<size_t>(k, 1, s.count) - 1];
  };
  s.min_tokens = lengths.front();
  s.max_tokens = lengths.back();
  s.p50_tokens = rank(0.50);
  s.p90_tokens = rank(0.90);
  s.p99_tokens = rank(0.99);
  s.mean_prompt = prompt / static_cast<double>(s.count);
  s.mean_output = output / static_cast<double>(s.count);
  s.mean_tokens = s.mean_prompt + s.mean_output;
  return s;
}

}  // namespace kvplan
