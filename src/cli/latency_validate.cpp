#include "cli/latency_validate.h"

#include <fmt/format.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

#include "cli/common.h"
#include "import/resolve.h"
#include "measure/ceilings.h"
#include "measure/decode_validation.h"
#include "report/json.h"
#include "report/table.h"
#include "spec/catalog.h"
#include "util/error.h"
#include "util/units.h"

namespace kvplan {
namespace {

// Shapes of whole decode steps (weights + attention); none is a shape the
// bandwidth curve is measured on (attention alone, 8 KV heads, batch 1).
std::vector<kernels::ValidationShape> Shapes(bool quick) {
  if (quick) return {{1024, 1}, {8192, 1}, {4096, 2}};
  return {{512, 1}, {2048, 1}, {8192, 1}, {32768, 1}, {2048, 2}, {8192, 2}, {4096, 4}};
}

// The profile at `profile`, checked fit to judge decode steps on this CPU
// with the validation's threads.
HardwareSpec LoadValidationProfile(const ValidateOptions& o, const std::string& profile) {
  HardwareSpec hw;
  hw = LoadHardware(profile);
  if (!hw.measured || hw.measured->curve.empty()) {
    Fail("--profile {}: has no measured curve (write one with kvplan bench --save)", profile);
  }
  if (hw.measured->device != "cpu") {
    Fail("--profile {}: measured on {}, but the validation times decode steps on this CPU", profile,
         hw.measured->device);
  }
  // A curve measured on all cores predicts a one-thread step about a core
  // count too fast: every row would fail for a reason that is not the model.
  const uint64_t threads = static_cast<uint64_t>(o.threads == 1 ? 1 : omp_get_max_threads());
  if (hw.measured->threads != 0 && hw.measured->threads != threads) {
    Fail(
        "--profile {}: measured on {} thread(s), but this validation runs on {} (--threads {}); "
        "measure one with kvplan bench --threads {} --save FILE",
        profile, hw.measured->threads, threads, o.threads, o.threads);
  }
  return hw;
}

// Every round's points: a curve measured now (unless --profile), then the
// steps timed against it; `hw` ends as the last round's profile.
std::vector<std::vector<kernels::ValidationPoint>> RunRounds(
    const ValidateOptions& o, const std::string& profile, const kernels::SyntheticModel& m,
    HardwareSpec& hw, const std::function<void(const std::string&)>& progress) {
  std::vector<std::vector<kernels::ValidationPoint>> rounds;
  for (int r = 0; r < o.rounds; ++r) {
    auto step = [&](const std::string& what) {
      progress(fmt::format("round {}/{}: {}", r + 1, o.rounds, what));
    };
    if (profile.empty()) {
      // Contexts a factor 2 apart (1-256 MiB per step at 8 KV heads): with a
      // factor 4 the log interpolation between 4 and 16 MiB, where the curve
      // still bends, put a step's attention at 8 MiB per layer 40-50 % slow.
      hw = kernels::MeasureProfileNow({256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536},
                                      {1, 4, 8}, {o.threads}, step);
    }
    // A profile measured here: each shape's curve points measured again
    // right before its steps (a --profile file is taken as it is).
    rounds.push_back(kernels::ValidateDecodeModel(m, Shapes(o.quick), hw, o.repeats, {o.threads},
                                                  step, profile.empty()));
  }
  return rounds;
}

// The validation's outcome: each shape's median round, and the errors judged.
struct Validation {
  std::vector<kernels::ValidationPoint> pts;
  // Every round's judged error of each shape, in round order: how far the
  // host moves a row from one round to the next.
  std::vector<std::vector<double>> round_errors;
  double median = 0, worst = 0, raw_median = 0, raw_worst = 0;
  bool pass = false;
};

// Each shape keeps the round whose error is its median, so a row's measured
// and predicted times come from the same round.
void PickMedianRounds(const std::vector<std::vector<kernels::ValidationPoint>>& rounds,
                      Validation& v) {
  std::vector<kernels::ValidationPoint>& pts = v.pts;
  std::vector<std::vector<double>>& round_errors = v.round_errors;
  for (size_t i = 0; i < rounds.front().size(); ++i) {
    std::vector<kernels::ValidationPoint> each;
    for (const auto& round : rounds) each.push_back(round[i]);
    round_errors.emplace_back();
    for (const auto& p : each) round_errors.back().push_back(p.AdjustedError());
    std::sort(each.begin(), each.end(),
              [](const kernels::ValidationPoint& a, const kernels::ValidationPoint& b) {
                return a.AdjustedError() < b.AdjustedError();
              });
    pts.push_back(each[(each.size() - 1) / 2]);
  }
}

// Judged on the errors with the machine's drift taken out (DriftProbe):
// the model predicts the machine as profiled, and a shared host's memory
// and cores run 10-25 % faster or slower from one minute to the next.
// The raw errors are shown beside them.
void Judge(Validation& v) {
  const std::vector<kernels::ValidationPoint>& pts = v.pts;
  std::vector<double> errs, raw;
  for (const auto& p : pts) {
    errs.push_back(std::fabs(p.AdjustedError()));
    raw.push_back(std::fabs(p.Error()));
  }
  v.median = kernels::Median(errs);
  v.worst = *std::max_element(errs.begin(), errs.end());
  v.raw_median = kernels::Median(raw);
  v.raw_worst = *std::max_element(raw.begin(), raw.end());
  v.pass = v.worst <= 0.10 && v.median <= 0.05;
}

std::string ModelLine(const kernels::SyntheticModel& m) {
  return fmt::format(
      "synthetic Llama-shaped model: {} layers, hidden {}, {} query / {} KV heads x {}, MLP {}, "
      "vocab {}, fp16 weights and KV",
      m.layers, m.hidden, m.q_heads, m.kv_heads, m.head_dim, m.intermediate, m.vocab);
}

double LowestRoundError(const Validation& v, size_t i) {
  return *std::min_element(v.round_errors[i].begin(), v.round_errors[i].end());
}

double HighestRoundError(const Validation& v, size_t i) {
  return *std::max_element(v.round_errors[i].begin(), v.round_errors[i].end());
}

// The text table: one row per shape.
Table ValidationTable(const Validation& v) {
  Table t({"context", "batch", "bytes/step", "measured ms", "predicted ms", "raw error",
           "ceiling GB/s", "at profile's ceiling ms", "error", "rounds: from", "to",
           "attention at profile's ceiling ms", "predicted ms"});
  const auto lowest = [&](size_t i) { return LowestRoundError(v, i); };
  const auto highest = [&](size_t i) { return HighestRoundError(v, i); };
  for (size_t i = 0; i < v.pts.size(); ++i) {
    const kernels::ValidationPoint& p = v.pts[i];
    t.AddRow({WithCommas(static_cast<uint64_t>(p.shape.context)), std::to_string(p.shape.batch),
              FormatGB(p.bytes), fmt::format("{:.2f}", p.measured_s * 1e3),
              fmt::format("{:.2f}", p.predicted_s * 1e3), fmt::format("{:+.1f}%", 100 * p.Error()),
              fmt::format("{:.1f}", p.ceiling_gbps),
              fmt::format("{:.2f}", p.adjusted_measured_s * 1e3),
              fmt::format("{:+.1f}%", 100 * p.AdjustedError()),
              fmt::format("{:+.1f}%", 100 * lowest(i)), fmt::format("{:+.1f}%", 100 * highest(i)),
              fmt::format("{:.2f}", p.adjusted_attention_s * 1e3),
              fmt::format("{:.2f}", p.predicted_attention_s * 1e3)});
  }
  return t;
}

Json ValidationJson(const ValidateOptions& o, const HardwareSpec& hw, const std::string& model,
                    const Validation& v) {
  Json j;
  j.Set("model", model);
  j.Set("rounds", o.rounds);
  j.Set("profile", hw.origin);
  j.Set("machine", hw.measured->machine);
  j.Set("read_ceiling_gbps", hw.measured->read_ceiling_gbps);
  Json rows = Json::MakeArray();
  for (size_t i = 0; i < v.pts.size(); ++i) {
    const kernels::ValidationPoint& p = v.pts[i];
    Json r;
    r.Set("context_tokens", p.shape.context);
    r.Set("batch", p.shape.batch);
    r.Set("bytes", p.bytes);
    r.Set("measured_ms", p.measured_s * 1e3);
    r.Set("predicted_ms", p.predicted_s * 1e3);
    r.Set("raw_error", p.Error());
    r.Set("ceiling_beside_gbps", p.ceiling_gbps);
    r.Set("measured_at_profile_ceiling_ms", p.adjusted_measured_s * 1e3);
    r.Set("error", p.AdjustedError());
    Json each = Json::MakeArray();
    for (double e : v.round_errors[i]) each.Push(Json(e));
    r.Set("round_errors", std::move(each));
    r.Set("measured_attention_ms", p.measured_attention_s * 1e3);
    r.Set("measured_attention_at_profile_ceiling_ms", p.adjusted_attention_s * 1e3);
    r.Set("predicted_attention_ms", p.predicted_attention_s * 1e3);
    rows.Push(std::move(r));
  }
  j.Set("points", std::move(rows));
  j.Set("median_abs_error", v.median);
  j.Set("max_abs_error", v.worst);
  j.Set("raw_median_abs_error", v.raw_median);
  j.Set("raw_max_abs_error", v.raw_worst);
  j.Set("pass", v.pass);
  return j;
}

std::string ValidationCsv(const Validation& v) {
  const auto lowest = [&](size_t i) { return LowestRoundError(v, i); };
  const auto highest = [&](size_t i) { return HighestRoundError(v, i); };
  // Plain numbers, the unit in the header (the text table's "1,024",
  // "+3.1%" and "33.55 MB" do not parse).
  Table c({"context_tokens", "batch", "bytes", "measured_ms", "predicted_ms", "raw_error",
           "ceiling_beside_gbps", "measured_at_profile_ceiling_ms", "error", "round_error_min",
           "round_error_max", "measured_attention_ms", "measured_attention_at_profile_ceiling_ms",
           "predicted_attention_ms"});
  for (size_t i = 0; i < v.pts.size(); ++i) {
    const kernels::ValidationPoint& p = v.pts[i];
    c.AddRow(
        {std::to_string(p.shape.context), std::to_string(p.shape.batch), std::to_string(p.bytes),
         fmt::format("{:.6g}", p.measured_s * 1e3), fmt::format("{:.6g}", p.predicted_s * 1e3),
         fmt::format("{:.4f}", p.Error()), fmt::format("{:.3f}", p.ceiling_gbps),
         fmt::format("{:.6g}", p.adjusted_measured_s * 1e3),
         fmt::format("{:.4f}", p.AdjustedError()), fmt::format("{:.4f}", lowest(i)),
         fmt::format("{:.4f}", highest(i)), fmt::format("{:.6g}", p.measured_attention_s * 1e3),
         fmt::format("{:.6g}", p.adjusted_attention_s * 1e3),
         fmt::format("{:.6g}", p.predicted_attention_s * 1e3)});
  }
  return c.Csv();
}

void PrintValidationText(const ValidateOptions& o, const HardwareSpec& hw, const std::string& model,
                         const Table& t, const Validation& v) {
  Print(fmt::format(
      "{}\nprofile: {} ({}; read ceiling {:.1f} GB/s, curve of {} points)\n"
      "Each step: weight GEMVs + decode attention over the real cache, caches flushed first, "
      "median of {}, {}; each row is the median error of {} round(s) (from, to: the lowest "
      "and highest of them).\nThe read ceiling is read again before every step (and every "
      "curve point), and each time also stated at the profile's ceiling\n(time x ceiling "
      "beside it / profile's ceiling), so the machine's drift since the profile does not "
      "count as the model's error.\n\n",
      model, hw.origin, hw.measured->machine, hw.measured->read_ceiling_gbps,
      hw.measured->curve.size(), o.repeats,
      o.threads == 1 ? "one thread, its CPU time" : "all cores, wall time", o.rounds));
  Print(t.Text());
  Print(
      fmt::format("\nmedian |error| {:.1f}%, worst {:.1f}%: {} (target: all within 10%, "
                  "median under 5%); raw, without the drift taken out: median {:.1f}%, "
                  "worst {:.1f}%\n",
                  100 * v.median, 100 * v.worst, v.pass ? "PASS" : "FAIL", 100 * v.raw_median,
                  100 * v.raw_worst));
}

}  // namespace

void AddValidateOptions(CLI::App* sub, ValidateOptions& o) {
  sub->add_flag("--validate", o.enabled,
                "Benchmark the model: time synthetic decode steps of a Llama-shaped model on this "
                "CPU and compare with the prediction (--profile, or a curve measured first)");
  sub->add_option("--repeats", o.repeats, "--validate: timed steps per shape (median)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  sub->add_flag("--quick", o.quick, "--validate: three shapes only");
  sub->add_option(
         "--rounds", o.rounds,
         "--validate: rounds of (measure the curve, time the steps); each shape's error is "
         "its median over the rounds, each round's prediction using the curve measured "
         "just before it, so a shared machine's drift cancels")
      ->capture_default_str()
      ->check(CLI::Range(1, 15));
  sub->add_option("--threads", o.threads,
                  "--validate: 0 = all cores timed by the wall clock (as kvplan bench); 1 = one "
                  "thread timed by its CPU time, steadier on a loaded shared machine")
      ->capture_default_str()
      ->check(CLI::Range(0, 1));
}

int RunLatencyValidation(const ValidateOptions& o, const std::string& profile,
                         const std::string& format) {
  const bool tty = isatty(fileno(stderr)) != 0;
  auto progress = [tty](const std::string& what) {
    if (tty) WriteStderr("\r\033[K  " + what);
  };
  HardwareSpec hw;
  if (!profile.empty()) hw = LoadValidationProfile(o, profile);
  const kernels::SyntheticModel m;
  const std::vector<std::vector<kernels::ValidationPoint>> rounds =
      RunRounds(o, profile, m, hw, progress);
  Validation v;
  PickMedianRounds(rounds, v);
  if (tty) WriteStderr("\r\033[K");
  Judge(v);
  const std::string model = ModelLine(m);
  const Table t = ValidationTable(v);
  switch (ToFormat(format)) {
    case Format::kJson:
      Print(ValidationJson(o, hw, model, v).Dump() + "\n");
      break;
    case Format::kCsv:
      Print(ValidationCsv(v));
      break;
    case Format::kText:
      PrintValidationText(o, hw, model, t, v);
      break;
  }
  return v.pass ? 0 : 1;
}

}  // namespace kvplan
