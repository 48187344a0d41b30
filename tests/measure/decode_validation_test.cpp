// The latency model against real decode steps on this CPU, with loose bounds
// (a factor of 2) so a loaded shared machine cannot make it flaky; the tight
// figures (10% / 5%) are a benchmark: kvplan latency --validate, docs/perf.md.
#include "measure/decode_validation.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "plan/latency.h"
#include "spec/cache_dtype.h"
#include "spec/hardware_spec.h"
#include "util/units.h"

using namespace kvplan;
using namespace kvplan::kernels;

TEST_CASE("the synthetic model's spec counts what the step reads") {
  SyntheticModel m;
  ModelSpec s = SyntheticModelSpec(m);
  ModelCost c = ComputeModelCost(s, FindCacheDtype("fp16"), FindWeightFormat("fp16"), 1);
  const uint64_t qd = 8 * 128, kvd = 2 * 128;
  const uint64_t matrices =
      8 * ((qd + 2 * kvd) * 1024 + 1024 * qd + 3 * 2816 * 1024) + 32000 * 1024;
  // Every matrix the step multiplies, in fp16, plus the norm vectors.
  CHECK(c.dense_weight_bytes == 2 * (matrices + 8 * 2 * 1024 + 1024));
  CHECK(c.lookup_weight_bytes == 2ull * 32000 * 1024);
  CHECK(c.kv.per_token_bytes == 8 * 2 * kvd * 2);
}

TEST_CASE("latency model vs a measured decode step, within 2x") {
  SyntheticModel m;
  m.layers = 4;
  m.hidden = 512;
  m.q_heads = 8;
  m.kv_heads = 2;
  m.head_dim = 64;
  m.intermediate = 1408;
  m.vocab = 8000;
  // One thread timed by its CPU clock: a loaded machine's scheduling does
  // not land in the figures (all-core wall-clock timing is the benchmark's).
  const TimingMode mode{1};
  const HardwareSpec hw = MeasureProfileNow({1024, 8192}, {1, 4}, mode, {});
  REQUIRE(hw.measured);
  REQUIRE(hw.measured->curve.size() == 4);
  CHECK(hw.measured->curve[0].group == 1);
  CHECK(hw.measured->curve[3].group == 4);
  CHECK(hw.measured->curve[3].bytes > hw.measured->curve[2].bytes);
  for (const BandwidthPoint& p : hw.measured->curve) CHECK(p.gbps > 0.1);
  // The weights curve: the GEMV at 2, 8, 32 and 128 MiB for batch 1, 2 and
  // 4, and the profile reads back through the writer with it.
  REQUIRE(hw.measured->weights_curve.size() == 12);
  CHECK(hw.measured->weights_curve[0].bytes == 2 * kMiB);
  CHECK(hw.measured->weights_curve[3].bytes == 128 * kMiB);
  CHECK(hw.measured->weights_curve[3].batch == 1);
  CHECK(hw.measured->weights_curve[4].batch == 2);
  CHECK(hw.measured->weights_curve[11].batch == 4);
  for (const BandwidthPoint& p : hw.measured->weights_curve) CHECK(p.gbps > 0.1);
  HardwareSpec file = hw;
  file.memory_bytes = kGiB;  // a profile measured now knows no memory size; a file needs one
  const HardwareSpec back = ParseHardwareYaml(HardwareToYaml(file), "now.yaml");
  REQUIRE(back.measured->weights_curve.size() == 12);
  CHECK(back.measured->weights_curve[11].batch == 4);
  std::vector<ValidationPoint> pts =
      ValidateDecodeModel(m, {{1024, 1}, {4096, 2}}, hw, 5, mode, {});
  REQUIRE(pts.size() == 2);
  for (const ValidationPoint& p : pts) {
    CAPTURE(p.shape.context);
    CAPTURE(p.measured_s);
    CAPTURE(p.predicted_s);
    CHECK(p.measured_s > 0);
    CHECK(p.predicted_s > 0);
    CHECK(p.measured_attention_s > 0);
    CHECK(p.measured_attention_s < p.measured_s);
    CHECK(p.predicted_attention_s > 0);
    CHECK(p.predicted_attention_s < p.predicted_s);
    // The ceiling was read beside the steps, and the steps restated at the
    // profile's ceiling by that ratio.
    CHECK(p.ceiling_gbps > 0.1);
    CHECK(p.adjusted_measured_s > 0);
    // How close the prediction comes is a benchmark figure (docs/perf.md,
    // `kvplan latency --validate`), not a test: on a shared machine a step
    // moves 10-60% between minutes, so no ratio here would be honest.
  }
}

TEST_CASE("latency validation: each shape's curve points measured again before its steps") {
  SyntheticModel m;
  m.layers = 2;
  m.hidden = 256;
  m.intermediate = 512;
  m.vocab = 4000;
  const TimingMode mode{1};
  HardwareSpec hw = MeasureProfileNow({1024, 8192}, {1, 4}, mode, {});
  REQUIRE(hw.measured);
  // Points no measurement gives: the prediction from them is 1000x off
  // until the points the step reads are measured again.
  for (BandwidthPoint& p : hw.measured->curve) p.gbps = 1e-3;
  for (BandwidthPoint& p : hw.measured->weights_curve) p.gbps = 1e-3;
  std::vector<std::string> said;
  const auto pts = ValidateDecodeModel(
      m, {{2048, 1}}, hw, 3, mode, [&](const std::string& s) { said.push_back(s); }, true);
  REQUIRE(pts.size() == 1);
  CHECK(pts[0].predicted_s < 0.1);  // 1e-3 GB/s would be seconds per step
  CHECK(std::find(said.begin(), said.end(),
                  "decode step: context 2048, batch 1: its curve points again") != said.end());
  // Without it, the profile is taken as it is.
  const auto as_given = ValidateDecodeModel(m, {{2048, 1}}, hw, 3, mode, {});
  CHECK(as_given[0].predicted_s > 1.0);
}

TEST_CASE("DriftProbe: reads the ceiling now and restates a time at its reference") {
  DriftProbe probe(TimingMode{1});
  CHECK(probe.reference() > 0.1);  // the median of 5 passes, GB/s
  CHECK(probe.Read() > 0.1);
  const DriftProbe at10(TimingMode{1}, 0, 10.0);  // a given reference, nothing measured for it
  CHECK(at10.reference() == 10.0);
  // 2 s beside a ceiling of 5 GB/s: the machine ran at half the reference
  // speed, so the same work at the reference takes 1 s.
  CHECK(at10.AtReference(2.0, 5.0) == doctest::Approx(1.0));
  CHECK(at10.AtReference(2.0, 20.0) == doctest::Approx(4.0));
  ValidationPoint p;
  p.predicted_s = 1.1;
  p.measured_s = 2.0;
  p.adjusted_measured_s = 1.0;
  CHECK(p.Error() == doctest::Approx(-0.45));
  CHECK(p.AdjustedError() == doctest::Approx(0.1));
}
