// kvplan demo: why serving engines keep a KV cache. A tiny transformer on
// the CPU generates n tokens with no cache, with a concat-per-step cache and
// with an O(1)-append cache; the measured times and their fitted growth
// exponents (about 3 without a cache, about 2 with one) are printed.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "cli/commands.h"
#include "demo/growth_demo.h"
#include "report/json.h"
#include "report/table.h"
#include "util/error.h"

namespace kvplan {
namespace {

struct DemoOptions {
  int max_tokens = 512;
  std::string format = "text";
};

constexpr const char* kKeys[3] = {"no_cache", "concat", "cached"};

std::string Ms(double seconds) {
  return fmt::format("{:.2f}", seconds * 1e3);
}

std::string ModelLine(const demo::TinyConfig& c) {
  return fmt::format(
      "{} layers, d_model {}, {} heads of {}, MLP {}, vocab {}, fp32, random weights (seed {})",
      c.layers, c.d_model, c.heads, c.d_model / c.heads, c.mlp_hidden, c.vocab, c.seed);
}

Json ToJson(const demo::GrowthResult& r) {
  const demo::GrowthPoint& last = r.points.back();
  Json j;
  j.Set("model", ModelLine(r.config));
  j.Set("clock", "thread CPU time, best of repeats");
  j.Set("max_tokens", last.n);
  j.Set("exponent_no_cache", r.fit[0].exponent);
  j.Set("exponent_concat", r.fit[1].exponent);
  j.Set("exponent_cached", r.fit[2].exponent);
  j.Set("speedup_cached_vs_no_cache", last.seconds[0] / last.seconds[2]);
  j.Set("speedup_cached_vs_concat", last.seconds[1] / last.seconds[2]);
  j.Set("tokens_agree", r.tokens_agree);
  j.Set("max_logit_diff", r.max_logit_diff);
  Json points = Json::MakeArray();
  for (const demo::GrowthPoint& p : r.points) {
    Json o;
    o.Set("n", p.n);
    for (int m = 0; m < 3; ++m) o.Set(std::string(kKeys[m]) + "_s", p.seconds[m]);
    points.Push(std::move(o));
  }
  j.Set("timings", std::move(points));
  return j;
}

std::string ToText(const demo::GrowthResult& r) {
  const demo::GrowthPoint& last = r.points.back();
  std::string out;
  out += "Tiny transformer on the CPU: " + ModelLine(r.config) + "\n";
  out += "Time to generate n tokens (ms, CPU time of one thread, best of repeats):\n\n";
  Table t({"n", "no cache", "cache + concat", "cache + append", "no cache / append"});
  for (const demo::GrowthPoint& p : r.points) {
    t.AddRow({std::to_string(p.n), Ms(p.seconds[0]), Ms(p.seconds[1]), Ms(p.seconds[2]),
              fmt::format("{:.1f}x", p.seconds[0] / p.seconds[2])});
  }
  out += t.Text();
  out += fmt::format(
      "\nGrowth exponent k in time ~ n^k (least squares on log time vs log n):\n"
      "  no cache        {:.2f}   (step t re-runs attention over all t positions: t^2, summed: "
      "n^3)\n"
      "  cache + concat  {:.2f}   (step t attends to t cached tokens and copies them: t, summed: "
      "n^2)\n"
      "  cache + append  {:.2f}   (step t attends to t cached tokens: t, summed: n^2)\n",
      r.fit[0].exponent, r.fit[1].exponent, r.fit[2].exponent);
  out += fmt::format(
      "\nAt n = {}: the O(1)-append cache is {:.0f}x faster than recomputing, and {:.2f}x "
      "faster than concatenating.\n",
      last.n, last.seconds[0] / last.seconds[2], last.seconds[1] / last.seconds[2]);
  out += r.tokens_agree
             ? fmt::format(
                   "All three generated the same {} tokens (largest logit difference {:.3g}).\n",
                   last.n, r.max_logit_diff)
             : "WARNING: the three methods generated different tokens.\n";
  return out;
}

std::string ToCsv(const demo::GrowthResult& r) {
  Table t({"n", "no_cache_s", "concat_s", "cached_s"});
  for (const demo::GrowthPoint& p : r.points) {
    t.AddRow({std::to_string(p.n), fmt::format("{:.6g}", p.seconds[0]),
              fmt::format("{:.6g}", p.seconds[1]), fmt::format("{:.6g}", p.seconds[2])});
  }
  return t.Csv();
}

void Run(const DemoOptions& o) {
  const bool tty = isatty(fileno(stderr)) != 0;
  auto progress = [tty](const std::string& what) {
    if (tty) WriteStderr("\r\033[K  timing " + what);
  };
  demo::GrowthResult r =
      demo::RunGrowthDemo(demo::DemoModelConfig(), demo::GrowthSizes(o.max_tokens), progress);
  if (tty) WriteStderr("\r\033[K");
  switch (ToFormat(o.format)) {
    case Format::kJson:
      Print(ToJson(r).Dump() + "\n");
      break;
    case Format::kCsv:
      Print(ToCsv(r));
      break;
    case Format::kText:
      Print(ToText(r));
      break;
  }
}

}  // namespace

void SetupDemoCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<DemoOptions>();
  CLI::App* sub = app.add_subcommand(
      "demo", "Generation with and without a KV cache on a tiny CPU transformer: times and growth");
  sub->add_option(
         "-n,--max-tokens", o->max_tokens,
         "Largest n; n runs from a quarter of it up in steps of 2^(1/4). The no-cache time "
         "grows as n^3: 512 takes a few seconds, 1024 about 8x that")
      ->capture_default_str()
      ->check(CLI::Range(16, 2048));
  AddFormatOption(sub, o->format);
  sub->footer(R"(Examples:
  kvplan demo                      times for n = 128..512 and the fitted exponents
  kvplan demo -n 256               quicker
  kvplan demo --format json        exponent_no_cache, exponent_cached, timings)");
  sub->callback([o, &exit_code] {
    Run(*o);
    exit_code = 0;
  });
}

}  // namespace kvplan
