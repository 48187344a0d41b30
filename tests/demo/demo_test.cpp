#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>

#include "cli_runner.h"
#include "demo/growth_demo.h"
#include "demo/growth_fit.h"
#include "demo/tiny_transformer.h"
#include "util/error.h"

using namespace kvplan;
using namespace kvplan::demo;

TEST_CASE("the three generation methods produce the same tokens and logits") {
  for (TinyConfig cfg : {DemoModelConfig(), TinyConfig{}, TinyConfig{3, 12, 3, 20, 24, 7}}) {
    CAPTURE(cfg.d_model);
    const TinyTransformer model(cfg);
    const int steps = 70;
    Generation none = model.Generate(CacheMode::kNoCache, 3, steps);
    Generation concat = model.Generate(CacheMode::kConcat, 3, steps);
    Generation append = model.Generate(CacheMode::kAppend, 3, steps);
    REQUIRE(none.tokens.size() == steps + 1);
    REQUIRE(none.logits.size() == static_cast<size_t>(steps * cfg.vocab));
    CHECK(none.tokens == append.tokens);
    CHECK(concat.tokens == append.tokens);
    // Same functions on the same rows in the same order: equal to the bit.
    CHECK(MaxAbsDiff(none.logits, append.logits) == 0.0);
    CHECK(MaxAbsDiff(concat.logits, append.logits) == 0.0);
    // Not a degenerate model: the logits vary and several tokens are produced.
    CHECK(std::set<int>(append.tokens.begin(), append.tokens.end()).size() >= 2);
    CHECK(std::fabs(append.logits[0] - append.logits[1]) > 1e-4);
  }
}

TEST_CASE("the agreement check can fail: other weights give other logits") {
  TinyConfig a = DemoModelConfig(), b = DemoModelConfig();
  b.seed = a.seed + 1;
  Generation ga = TinyTransformer(a).Generate(CacheMode::kAppend, 1, 20);
  Generation gb = TinyTransformer(b).Generate(CacheMode::kAppend, 1, 20);
  CHECK(MaxAbsDiff(ga.logits, gb.logits) > 1e-3);
  CHECK(std::isinf(MaxAbsDiff(ga.logits, std::vector<float>(3))));
}

TEST_CASE("a step hook sees every step, and the tokens do not depend on it") {
  const TinyTransformer model(DemoModelConfig());
  std::vector<int> seen;
  Generation g = model.Generate(CacheMode::kNoCache, 2, 9, [&](int n) { seen.push_back(n); });
  CHECK(seen == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(g.tokens == model.Generate(CacheMode::kAppend, 2, 9).tokens);
}

TEST_CASE("FitPowerLaw recovers known exponents from synthetic data") {
  for (double k : {0.5, 1.0, 2.0, 2.7, 3.0}) {
    CAPTURE(k);
    std::vector<double> x, y;
    for (int n : GrowthSizes(1024)) {
      x.push_back(n);
      y.push_back(3.5e-7 * std::pow(n, k));
    }
    PowerFit f = FitPowerLaw(x, y);
    CHECK(f.exponent == doctest::Approx(k).epsilon(1e-12));
    CHECK(f.coefficient == doctest::Approx(3.5e-7).epsilon(1e-9));
    CHECK(f.r_squared == doctest::Approx(1.0));
  }
  // Multiplicative noise that alternates +-10% tilts nothing on average: the
  // fit stays within 0.1 of the true exponent.
  std::vector<double> x, y;
  for (int i = 0; i < 16; ++i) {
    double n = 64.0 * std::pow(2.0, i / 4.0);
    x.push_back(n);
    y.push_back(2.0 * n * n * n * (i % 2 ? 1.1 : 0.9));
  }
  PowerFit noisy = FitPowerLaw(x, y);
  CHECK(std::fabs(noisy.exponent - 3.0) < 0.1);
  CHECK(noisy.r_squared < 1.0);
  // Quadratic plus a linear part: the fit sits between 1 and 2, as the demo's
  // cached time does when the matmuls are not negligible.
  std::vector<double> y2;
  for (double n : x) y2.push_back(n * n + 100 * n);
  PowerFit mixed = FitPowerLaw(x, y2);
  CHECK(mixed.exponent > 1.2);
  CHECK(mixed.exponent < 1.9);
}

TEST_CASE("FitPowerLaw rejects what it cannot fit") {
  CHECK_THROWS_WITH_AS(FitPowerLaw({1}, {1}), "power-law fit: needs at least two points, got 1",
                       Error);
  CHECK_THROWS_WITH_AS(FitPowerLaw({4, 4}, {1, 2}), "power-law fit: every x is the same (4)",
                       Error);
  CHECK_THROWS_WITH_AS(FitPowerLaw({1, 2}, {1, 0}), "power-law fit: point 1 (2, 0) is not positive",
                       Error);
  CHECK_THROWS_AS(FitPowerLaw({1, 2}, {1}), Error);
}

TEST_CASE("GrowthSizes spans two octaves in steps of 2^(1/4)") {
  CHECK(GrowthSizes(512) == std::vector<int>{128, 152, 181, 215, 256, 304, 362, 431, 512});
  CHECK(GrowthSizes(16) == std::vector<int>{4, 5, 6, 7, 8, 10, 11, 13, 16});
  CHECK(GrowthSizes(4) == std::vector<int>{2, 3, 4});
}

TEST_CASE("kvplan demo: json carries the exponents and the timings") {
  auto r = test::RunKvplan("demo -n 32 --format json");
  REQUIRE(r.exit_code == 0);
  for (const char* key : {"\"exponent_no_cache\"", "\"exponent_cached\"", "\"exponent_concat\"",
                          "\"timings\"", "\"speedup_cached_vs_no_cache\""}) {
    CHECK(r.out.find(key) != std::string::npos);
  }
  CHECK(r.out.find("\"tokens_agree\": true") != std::string::npos);
  CHECK(r.out.find("\"n\": 32") != std::string::npos);
  auto bad = test::RunKvplan("demo -n 5");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--max-tokens") != std::string::npos);
}
