// Request mixes: the lengths of the requests a server holds at once, either
// read from a file (spec/request_mix_reader.h) or drawn from a parametric
// distribution with a fixed seed, so the same spec always gives the same mix.
//
// Sampling uses kvplan's own generator (splitmix64 + Box-Muller) rather than
// <random>'s distributions, whose output differs between standard libraries:
// a mix must be reproducible on every machine, not just every run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvplan {

/// One request: its prompt and the tokens it generates. At its peak it holds
/// prompt + output tokens in the cache.
struct Request {
  uint64_t prompt_tokens = 0;
  uint64_t output_tokens = 0;
  int line = 0;  // 1-based line in the source file (0: generated)

  uint64_t Tokens() const { return prompt_tokens + output_tokens; }
};

struct RequestMix {
  std::string source;             // the file path, or the distribution spec as given
  std::vector<Request> requests;  // never empty once built
};

enum class MixDistribution { kUniform, kLognormal };

/// A parametric mix. Uniform draws each length uniformly from [min, max]
/// (inclusive). Lognormal draws exp(N(mu, sigma)) with mu chosen so the
/// arithmetic mean is `mean` (mu = ln(mean) - sigma^2 / 2), rounded to the
/// nearest token and clamped to [min, max].
struct MixParams {
  MixDistribution distribution = MixDistribution::kUniform;
  uint64_t prompt_min = 1, prompt_max = 1;
  uint64_t output_min = 0, output_max = 0;
  double prompt_mean = 0, prompt_sigma = 0;  // lognormal only
  double output_mean = 0, output_sigma = 0;  // lognormal only
  uint64_t count = 1000;                     // requests drawn
  uint64_t seed = 1;
};

/// The requests `params` describes: the same params give the same requests
/// on every platform. `source` is recorded as the mix's source.
RequestMix GenerateMix(const MixParams& params, const std::string& source);

/// A deterministic 64-bit generator (splitmix64), exposed for tests.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  /// Uniform in [0, 1) with 53 random bits.
  double NextDouble();
  /// Uniform integer in [lo, hi] (inclusive), without modulo bias.
  uint64_t Between(uint64_t lo, uint64_t hi);

 private:
  uint64_t state_;
};

/// Summary figures of a mix: count, mean/min/max/percentiles of total tokens.
struct MixStats {
  uint64_t count = 0;
  uint64_t min_tokens = 0, max_tokens = 0;
  uint64_t p50_tokens = 0, p90_tokens = 0, p99_tokens = 0;
  double mean_prompt = 0, mean_output = 0, mean_tokens = 0;
};

/// Statistics of the mix's request lengths (nearest-rank percentiles).
MixStats ComputeMixStats(const RequestMix& mix);

}  // namespace kvplan
