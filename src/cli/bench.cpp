// kvplan bench: measures this machine's read-bandwidth and FMA ceilings, then
// validates and times the CPU decode kernel over a sweep of shapes, placing
// each on the roofline; --save writes a hardware profile with the measured
// bandwidth curve that `capacity` and `latency` read with --profile.
#include <fmt/format.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include "cli/bench_cuda.h"
#include "cli/commands.h"
#include "import/resolve.h"
#include "measure/ceilings.h"
#include "measure/decode_validation.h"
#include "measure/harness.h"
#include "measure/profile_file.h"
#include "report/json.h"
#include "report/table.h"
#include "spec/catalog.h"
#include "spec/hardware_spec.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/units.h"

namespace kvplan {
namespace {

using kernels::BenchShape;
using kernels::Ceilings;
using kernels::ShapeResult;

struct BenchOptions {
  std::string device = "cpu";
  bool quick = false;
  int threads = 0;
  std::string simd = "auto";
  int repeats = 0;  // 0: 5 (quick) or 7
  std::string max_cache;
  std::vector<std::string> shapes;  // --shape specs; empty: the sweep
  bool concat = false;
  std::string hardware;
  std::string save;
  bool force = false;
  std::string format = "text";
};

struct BenchRun {
  std::string machine;
  int threads = 0;
  kernels::SimdPath simd = kernels::SimdPath::kScalar;
  bool far_prefetch = false;  // the SIMD paths' far prefetch into L2 (CpuDecodeOptions)
  Ceilings ceilings;
  std::optional<HardwareSpec> hardware;  // --hardware: datasheet figures
  std::vector<ShapeResult> results;
  std::vector<BandwidthPoint> curve;
  std::vector<BandwidthPoint> weights_curve;  // the fp16 GEMV, measured for --save
  double ceiling_min = 0, ceiling_max = 0;    // over the read-ceiling measurements of the run
  size_t ceiling_count = 0;
  std::optional<double> noise_floor;  // see MeasureNoiseFloor; not with a small --max-cache
};

// One progress line on stderr, rewritten in place on a terminal.
void Progress(const std::string& line) {
  static const bool tty = isatty(STDERR_FILENO) != 0;
  if (tty) {
    WriteStderr("\r\033[K" + line);
  } else if (!line.empty()) {
    WriteStderr("kvplan bench: " + line + "\n");
  }
}

std::string Pct(double f) {
  return fmt::format("{:.0f}%", 100 * f);
}

std::optional<double> DatasheetGbps(const BenchRun& run) {
  if (run.hardware && run.hardware->memory_bandwidth_gbps > 0)
    return run.hardware->memory_bandwidth_gbps;
  return std::nullopt;
}

Json ResultJson(const ShapeResult& r, const BenchRun& run) {
  Json j = BenchShapeJson(r.shape);
  j.Set("bytes_read", r.timing.bytes_read);
  j.Set("flops", r.timing.flops);
  j.Set("seconds", r.timing.seconds);
  j.Set("seconds_min", *std::min_element(r.timing.samples.begin(), r.timing.samples.end()));
  j.Set("gbps", r.gbps);
  j.Set("gflops", r.gflops);
  j.Set("flop_per_byte", r.flop_per_byte);
  j.Set("bound", r.compute_bound ? "compute" : "bandwidth");
  j.Set("ceiling_gbps", r.ceiling_gbps);
  j.Set("fraction_of_ceiling", r.fraction_of_ceiling);
  j.Set("fraction_of_read_ceiling", r.fraction_of_read_ceiling);
  j.Set("read_ceiling_gbps", r.read_ceiling_gbps);
  if (r.in_cache_gbps > 0) {
    j.Set("in_cache_gbps", r.in_cache_gbps);
    j.Set("in_cache_fraction_of_read_ceiling", r.in_cache_fraction);
    // The kernel, run with the cache in the CPU's caches, is slower than the
    // read ceiling: its instructions, not memory, hold the step back.
    j.Set("kernel_limited", r.in_cache_fraction < 1);
  } else {  // not measured
    j.Set("in_cache_gbps", nullptr);
    j.Set("in_cache_fraction_of_read_ceiling", nullptr);
    j.Set("kernel_limited", nullptr);
  }
  if (auto ds = DatasheetGbps(run)) j.Set("fraction_of_datasheet", r.gbps / *ds);
  j.Set("validation_error_ratio", r.timing.validation_ratio);
  if (r.concat_seconds > 0) {
    j.Set("concat_seconds", r.concat_seconds);
    j.Set("concat_slowdown", r.concat_seconds / r.timing.seconds);
  }
  return j;
}

Json ToJson(const BenchRun& run, const BenchOptions& o) {
  Json j;
  j.Set("device", "cpu");
  j.Set("machine", run.machine);
  j.Set("threads", run.threads);
  j.Set("simd", kernels::SimdName(run.simd));
  j.Set("far_prefetch", run.far_prefetch);
  j.Set("quick", o.quick);
  j.Set("read_ceiling_gbps", run.ceilings.read_gbps);
  j.Set("read_buffer_bytes", run.ceilings.read_buffer_bytes);
  j.Set("read_loop", kernels::ReadLoopName(run.ceilings.read_loop));
  j.Set("fma_peak_gflops", run.ceilings.fma_flops / 1e9);
  j.Set("noise_floor_fraction", run.noise_floor ? Json(*run.noise_floor) : Json(nullptr));
  if (auto ds = DatasheetGbps(run)) {
    j.Set("hardware", run.hardware->name);
    j.Set("datasheet_gbps", *ds);
  } else {
    j.Set("datasheet_gbps", nullptr);
  }
  Json results = Json::MakeArray();
  for (const ShapeResult& r : run.results) results.Push(ResultJson(r, run));
  j.Set("results", std::move(results));
  j.Set("curve", CurveJson(run.curve));
  if (!run.weights_curve.empty()) j.Set("weights_curve", CurveJson(run.weights_curve));
  return j;
}

Table ResultTable(const BenchRun& run, bool csv) {
  const auto ds = DatasheetGbps(run);
  std::vector<std::string> head =
      csv ? std::vector<std::string>{"shape",
                                     "bytes_read",
                                     "seconds",
                                     "gbps",
                                     "read_ceiling_gbps",
                                     "fraction_of_read_ceiling",
                                     "bound",
                                     "fraction_of_ceiling",
                                     "gflops",
                                     "in_cache_gbps"}
          : std::vector<std::string>{"shape",   "cache",          "time",  "GB/s",       "in cache",
                                     "ceiling", "% read ceiling", "bound", "% of bound", "GFLOP/s"};
  if (ds) head.push_back(csv ? "fraction_of_datasheet" : "% datasheet");
  const bool concat = !run.results.empty() && run.results.front().concat_seconds > 0;
  if (concat) head.push_back(csv ? "concat_seconds" : "concat/step");
  Table t(head);
  t.SetAlign(0, Table::Align::kLeft);
  for (const ShapeResult& r : run.results) {
    std::vector<std::string> row;
    if (csv) {
      row = {r.shape.Label(),
             std::to_string(r.timing.bytes_read),
             fmt::format("{:.6g}", r.timing.seconds),
             fmt::format("{:.3f}", r.gbps),
             fmt::format("{:.3f}", r.read_ceiling_gbps),
             fmt::format("{:.4f}", r.fraction_of_read_ceiling),
             r.compute_bound ? "compute" : "bandwidth",
             fmt::format("{:.4f}", r.fraction_of_ceiling),
             fmt::format("{:.2f}", r.gflops),
             fmt::format("{:.3f}", r.in_cache_gbps)};
      if (ds) row.push_back(fmt::format("{:.4f}", r.gbps / *ds));
      if (concat) row.push_back(fmt::format("{:.6g}", r.concat_seconds));
    } else {
      row = {r.shape.Label(), FormatGiB(r.timing.bytes_read),
             fmt::format("{:.3f} ms", 1e3 * r.timing.seconds), fmt::format("{:.1f}", r.gbps),
             // '*': the kernel is slower than the read ceiling even in cache.
             fmt::format("{:.1f}{}", r.in_cache_gbps, r.in_cache_fraction < 1 ? " *" : ""),
             fmt::format("{:.1f}", r.read_ceiling_gbps), Pct(r.fraction_of_read_ceiling),
             r.compute_bound ? "compute" : "bandwidth", Pct(r.fraction_of_ceiling),
             fmt::format("{:.1f}", r.gflops)};
      if (ds) row.push_back(Pct(r.gbps / *ds));
      if (concat) {
        row.push_back(r.concat_seconds > 0
                          ? fmt::format("{:.3f} ms ({:.1f}x)", 1e3 * r.concat_seconds,
                                        r.concat_seconds / r.timing.seconds)
                          : "-");
      }
    }
    t.AddRow(row);
  }
  return t;
}

std::string ToText(const BenchRun& run) {
  const Ceilings& c = run.ceilings;
  std::string out;
  out += fmt::format("CPU decode attention on {} ({} thread{}, {} path{})\n", run.machine,
                     run.threads, run.threads == 1 ? "" : "s", kernels::SimdName(run.simd),
                     run.simd == kernels::SimdPath::kScalar ? ""
                     : run.far_prefetch                     ? ", far prefetch on"
                                                            : ", far prefetch off on AMD");
  out += fmt::format(
      "read ceiling  {:.1f} GB/s  (STREAM-style read of {}, all threads, {} loop, the "
      "fastest here; median of {} measurements, one before the sweep and one beside "
      "each timed step: {:.1f}-{:.1f})\n",
      c.read_gbps, FormatGiB(c.read_buffer_bytes), kernels::ReadLoopName(c.read_loop),
      run.ceiling_count, run.ceiling_min, run.ceiling_max);
  out += fmt::format("FMA peak      {:.1f} GFLOP/s  ({} path, all threads)\n", c.fma_flops / 1e9,
                     kernels::SimdName(run.simd));
  if (run.noise_floor) {
    out += fmt::format(
        "noise floor   {}  (the read loop itself over {}, timed as a step: what a "
        "kernel streaming at the ceiling scores in this run)\n",
        Pct(*run.noise_floor), FormatGiB(kernels::kNoiseFloorStepBytes));
  }
  if (auto ds = DatasheetGbps(run)) {
    out += fmt::format("datasheet     {:.1f} GB/s  ({}); measured ceiling = {}\n", *ds,
                       run.hardware->display_name, Pct(c.read_gbps / *ds));
  }
  out += "\n" + ResultTable(run, false).Text();
  out += fmt::format(
      "\nEach step reads every cached K and V once (bytes counted from the shape) and does\n"
      "2 x group FLOP per cache element; a shape is compute-bound when FMA peak / (FLOP per\n"
      "byte) is below the read ceiling, and '% of bound' is against the lower of the two.\n"
      "The read ceiling is measured again right before every timed step; 'ceiling' is the\n"
      "median of those and '% read ceiling' the median of the step-by-step ratios, so each\n"
      "ratio compares two figures from the same moment of a possibly shared machine.\n"
      "'in cache': the same kernel on the shape cut to about 1 MiB of cache per thread, kept\n"
      "in the CPU's caches (never flushed), timed right after each step: its own speed\n"
      "without memory. '*': below the read ceiling beside it (median of the pairs); there\n"
      "the kernel's instructions, not memory, keep the step from the ceiling, whatever the\n"
      "FLOP roofline says.\n"
      "Every shape was validated against the float64 reference before it was timed; caches\n"
      "were flushed before every step (then the kernel ran once on a separate 16-token cache,\n"
      "so the timed step starts warm, as in a decode loop, but reads every byte from memory);\n"
      "times are medians.\n");
  return out;
}

// The profile --save writes: the datasheet fields of --hardware when given,
// else this machine's RAM and the measured figures; plus `measured:`.
HardwareSpec ProfileSpec(const BenchRun& run, const std::string& path) {
  HardwareSpec h;
  const std::string date = UtcDate();
  if (run.hardware) {
    h = *run.hardware;
    h.source = fmt::format("{}; measured: kvplan bench on {}, {}", h.source, run.machine, date);
  } else {
    h.vendor = "cpu";
    h.display_name = run.machine;
    h.memory_bytes = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                     static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
    // No datasheet: the bandwidth is the measured read ceiling and the fp16/
    // bf16 peak the fp32 FMA peak (a CPU widens them and computes in fp32).
    h.memory_bandwidth_gbps = std::round(run.ceilings.read_gbps * 1000) / 1000;
    for (const char* t : {"fp32", "fp16", "bf16"}) h.flops[t] = run.ceilings.fma_flops;
    h.source = fmt::format(
        "kvplan bench on {}, {} ({} path, {} threads): no datasheet, so "
        "memory_bandwidth_gbps is the measured read ceiling and flops the "
        "measured FMA peak",
        run.machine, date, kernels::SimdName(run.simd), run.threads);
    h.source_url = "";
  }
  h.name = std::filesystem::path(path).stem().string();
  MeasuredProfile p;
  p.device = "cpu";
  p.machine = run.machine;
  p.read_ceiling_gbps = run.ceilings.read_gbps;
  p.threads = static_cast<uint64_t>(run.threads);
  p.curve = run.curve;
  p.weights_curve = run.weights_curve;
  h.measured = p;
  return h;
}

void SaveProfile(const BenchRun& run, const std::string& path, bool force) {
  if (run.curve.empty()) Fail("--save: no curve shape was measured (raise --max-cache)");
  WriteProfile(ProfileSpec(run, path), "kvplan bench --save", path, force);
}

void Run(const BenchOptions& o) {
  if (o.device == "cuda") {
    RunCudaBench(
        {o.quick, o.repeats, o.max_cache, o.hardware, o.save, o.force, o.format, o.shapes});
    return;
  }
  if (o.device != "cpu") Fail("--device {}: expected cpu or cuda", o.device);
  if (o.threads < 0) Fail("--threads: must be >= 0 (0 = all cores)");
  if (!o.save.empty()) CheckOutputPath(o.save, o.force);  // before minutes of measuring
  BenchRun run;
  if (!o.hardware.empty()) run.hardware = LoadHardware(o.hardware);
  const uint64_t max_cache =
      o.max_cache.empty() ? UINT64_MAX : ParseBytes(o.max_cache, "--max-cache");
  std::vector<BenchShape> shapes;
  std::vector<BenchShape> candidates;
  for (const std::string& spec : o.shapes) candidates.push_back(kernels::ParseBenchShape(spec));
  if (candidates.empty()) candidates = kernels::BenchSweep(o.quick);
  for (const BenchShape& s : candidates) {
    if (s.CacheBytes() <= max_cache) shapes.push_back(s);
  }
  if (shapes.empty()) Fail("--max-cache {}: no shape of the sweep is that small", o.max_cache);

  kernels::TimingOptions topt;
  topt.cpu.simd = kernels::ParseSimdPath(o.simd);
  topt.cpu.threads = o.threads;
  topt.repeats = o.repeats > 0 ? o.repeats : (o.quick ? 5 : 7);
  run.simd = kernels::ResolveSimd(topt.cpu.simd, 128);
  run.far_prefetch =
      run.simd != kernels::SimdPath::kScalar && kernels::FarPrefetchOn(topt.cpu.far_prefetch);
  run.threads = o.threads > 0 ? o.threads : omp_get_max_threads();
  run.machine = kernels::MachineDescription();

  // The read ceiling over 8x the LLC, within 256 MiB .. 512 MiB (quick) or 1 GiB.
  const uint64_t llc = kernels::LastLevelCacheBytes();
  run.ceilings.read_buffer_bytes =
      std::clamp<uint64_t>(8 * llc, 256 * kMiB, (o.quick ? 512 : 1024) * kMiB);
  Progress(fmt::format("measuring the read ceiling over {} (first choosing the fastest read loop)",
                       FormatGiB(run.ceilings.read_buffer_bytes)));
  // Held only for the sweep: the weights curve's probe below has a buffer
  // of the same size, and two would need twice the memory.
  std::optional<kernels::ReadCeilingMeter> meter;
  meter.emplace(run.ceilings.read_buffer_bytes, o.threads);
  run.ceilings.read_loop = meter->loop();
  std::vector<double> ceilings = {meter->Measure(o.quick ? 5 : 9)};
  run.ceilings.read_gbps = ceilings.front();
  Progress("measuring the FMA peak");
  run.ceilings.fma_flops = kernels::MeasureFmaPeakFlops(run.simd, o.threads);
  if (max_cache >= kernels::kNoiseFloorStepBytes) {
    Progress("measuring the noise floor (the read loop timed as a step)");
    // What a kernel streaming at the ceiling scores in this run (docs/perf.md).
    run.noise_floor =
        kernels::MeasureNoiseFloor(*meter, kernels::kNoiseFloorStepBytes, o.threads, topt.repeats);
  }
  // The read ceiling again, beside every timed step: each step's bandwidth
  // is compared with the ceiling read just before it.
  topt.beside = [&meter] { return meter->MeasureOnce(); };
  topt.in_cache = true;

  // (group, bytes) -> the step's median ratio to the ceiling read beside it
  std::map<std::pair<int64_t, uint64_t>, double> curve;
  for (size_t i = 0; i < shapes.size(); ++i) {
    Progress(fmt::format("[{}/{}] {} ({}): validating, then timing", i + 1, shapes.size(),
                         shapes[i].Label(), FormatGiB(shapes[i].CacheBytes())));
    run.results.push_back(kernels::RunShape(shapes[i], run.ceilings, topt));
    const std::vector<double>& beside = run.results.back().timing.beside;
    ceilings.insert(ceilings.end(), beside.begin(), beside.end());
    if (o.concat && shapes[i].block_tokens == 0) {
      Progress(fmt::format("[{}/{}] {}: timing concat-per-step", i + 1, shapes.size(),
                           shapes[i].Label()));
      run.results.back().concat_seconds = kernels::TimeConcatStep(shapes[i], topt);
    }
    if (kernels::IsCurveShape(shapes[i])) {
      curve[{shapes[i].group, run.results.back().timing.bytes_read}] =
          run.results.back().fraction_of_read_ceiling;
    }
  }
  Progress("");
  meter.reset();
  topt.beside = nullptr;
  run.ceilings.read_gbps = kernels::Median(ceilings);
  run.ceiling_min = *std::min_element(ceilings.begin(), ceilings.end());
  run.ceiling_max = *std::max_element(ceilings.begin(), ceilings.end());
  run.ceiling_count = ceilings.size();
  // The curve is stated at the run's median ceiling: each point's ratio to
  // the ceiling read beside its steps, times that median. A point measured
  // while the shared machine ran slow then does not read as a slow machine
  // (the raw GB/s are the table's).
  for (const auto& [key, fraction] : curve) {
    run.curve.push_back(
        {key.second, fraction * run.ceilings.read_gbps, static_cast<uint64_t>(key.first)});
  }
  if (!o.save.empty()) {
    // The weights of a decode step are streamed by a GEMV, not by this
    // kernel; the latency model reads them at this curve (docs/latency.md).
    // Stated at the same median ceiling, by a ceiling read beside each GEMV.
    Progress("measuring the weights curve (fp16 GEMV, batch 1, 2 and 4)");
    kernels::DriftProbe probe({o.threads}, run.ceilings.read_buffer_bytes, run.ceilings.read_gbps);
    run.weights_curve = kernels::MeasureWeightsCurve({o.threads}, max_cache, &probe);
    Progress("");
    SaveProfile(run, o.save, o.force);
  }

  switch (ToFormat(o.format)) {
    case Format::kJson:
      Print(ToJson(run, o).Dump() + "\n");
      break;
    case Format::kCsv:
      Print(ResultTable(run, true).Csv());
      break;
    case Format::kText:
      Print(ToText(run));
      if (!o.save.empty()) Print(fmt::format("\nprofile written to {}\n", o.save));
      break;
  }
}

}  // namespace

void SetupBenchCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand(
      "bench", "Measure the read-bandwidth ceiling and the CPU decode kernel against it");
  sub->add_option("--device", o->device, "Where to run: cpu, or cuda (the CUDA kernel on GPU 0)")
      ->capture_default_str();
  sub->add_flag("--quick", o->quick,
                "A short sweep (under 30 s on 2 cores) instead of the full one");
  // A bound before any work: OpenMP given 100,000 threads crashes inside
  // libgomp, and no machine kvplan measures has more than a few hundred cores.
  sub->add_option("--threads", o->threads, "Threads, 0 to 1024 (default 0: all cores)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  sub->add_option("--simd", o->simd,
                  "Kernel path: auto|scalar|avx2|avx512 (auto honours KVPLAN_SIMD, else the widest "
                  "this CPU has)")
      ->check(CLI::IsMember({"auto", "scalar", "avx2", "avx512"}))
      ->capture_default_str();
  sub->add_option("--repeats", o->repeats,
                  "Timed steps per shape, median reported (default 7; 5 with --quick)")
      ->check(CLI::Range(1, 1000));
  sub->add_option("--max-cache", o->max_cache,
                  "Skip shapes whose cache is larger (e.g. 64MiB on a machine short of memory)");
  sub->add_option("--shape", o->shapes,
                  "Time this shape instead of the sweep (repeatable): dtype=fp16,context=128K,"
                  "batch=1,kv_heads=8,group=4,head_dim=128,block=0 (at most context 16M, batch "
                  "4096, kv_heads 1024, group 256, head_dim 1024, block 1M)");
  sub->add_flag("--concat", o->concat,
                "Also time the naive concat-per-step cache (copy everything, then attend)");
  sub->add_option("--hardware,--gpu", o->hardware,
                  "Catalog name or spec file whose datasheet bandwidth to compare with");
  sub->add_option("--save", o->save,
                  "Write a hardware profile (datasheet fields + measured curve) for --profile");
  sub->add_flag("--force", o->force, "Overwrite the --save file if it exists");
  AddFormatOption(sub, o->format);
  sub->footer(R"(Examples:
  kvplan bench --quick
  kvplan bench --save my-machine.yaml && kvplan latency llama-3.1-8b --profile my-machine.yaml -c 4K
  kvplan bench --simd scalar --threads 1 --format json
  kvplan bench --shape dtype=fp32,context=128K,kv_heads=8 --concat

Each shape is validated against a float64 reference before it is timed; a
wrong kernel is refused, not timed.)");
  sub->callback([o, &exit_code] {
    Run(*o);
    exit_code = 0;
  });
}

}  // namespace kvplan
