// kvplan bench --device cuda. Measures the device-to-device copy bandwidth
// (the practical DRAM ceiling), then validates and times the CUDA decode
// kernel over its sweep; prints GB/s, % of the copy and % of the peak from
// the device's attributes; --save writes a profile for `latency --profile`.
#include "cli/bench_cuda.h"

#include "import/resolve.h"
#include "util/error.h"

#if defined(KVPLAN_HAVE_CUDA)
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <vector>

#include "cli/common.h"
#include "measure/cuda_bench.h"
#include "measure/harness.h"
#include "measure/profile_file.h"
#include "report/json.h"
#include "report/table.h"
#include "spec/catalog.h"
#include "spec/hardware_spec.h"
#include "util/atomic_file.h"
#include "util/units.h"
#endif

namespace kvplan {

#if !defined(KVPLAN_HAVE_CUDA)

void RunCudaBench(const CudaBenchCliOptions&) {
  Fail(
      "--device cuda: this kvplan was built without CUDA (install nvcc and reconfigure, "
      "or pass -DKVPLAN_CUDA=ON)");
}

#else

namespace {

using kernels::BenchShape;
using kernels::KvDtype;
namespace kc = kernels::cuda;

struct CudaRow {
  BenchShape shape;
  kc::CudaCaseResult result;
};

struct CudaRun {
  kc::CudaDevice device;
  double copy_gbps = 0;
  std::optional<HardwareSpec> hardware;
  std::vector<CudaRow> rows;
  std::vector<BandwidthPoint> curve;
};

BenchShape Shape(int64_t batch, int64_t context, int64_t group, KvDtype dtype,
                 int64_t block_tokens = 0) {
  BenchShape s;
  s.batch = batch;
  s.context = context;
  s.kv_heads = 8;
  s.group = group;
  s.head_dim = 128;
  s.dtype = dtype;
  s.block_tokens = block_tokens;
  return s;
}

// The shapes of the targets (8 KV heads x 128; batch 1 x 32K,
// batch 64 x 1K, batch 1 x 4K) for GQA groups 1, 4 and 8, in every dtype,
// paged, and a bandwidth curve (fp16, batch 1, group 1, 1K..128K tokens).
std::vector<BenchShape> CudaSweep(bool quick) {
  const std::vector<std::pair<int64_t, int64_t> > targets = {{1, 32768}, {64, 1024}, {1, 4096}};
  std::vector<BenchShape> out;
  for (auto [batch, context] : targets) out.push_back(Shape(batch, context, 8, KvDtype::kFp16));
  for (auto [batch, context] : targets) out.push_back(Shape(batch, context, 8, KvDtype::kFp16, 16));
  if (quick) {  // two curve points, so --save works
    for (int64_t context : {4096, 32768}) out.push_back(Shape(1, context, 1, KvDtype::kFp16));
    return out;
  }
  for (int64_t group : {1, 4}) {
    for (auto [batch, context] : targets)
      out.push_back(Shape(batch, context, group, KvDtype::kFp16));
  }
  for (KvDtype dtype : {KvDtype::kBf16, KvDtype::kFp8E4M3}) {
    for (auto [batch, context] : targets) out.push_back(Shape(batch, context, 8, dtype));
  }
  for (int64_t context = 1024; context <= 131072; context *= 2) {
    if (context != 4096 && context != 32768) out.push_back(Shape(1, context, 1, KvDtype::kFp16));
  }
  return out;
}

bool IsCudaCurveShape(const BenchShape& s) {
  return s.dtype == KvDtype::kFp16 && s.batch == 1 && s.group == 1 && s.block_tokens == 0;
}

kc::CudaCase ToCase(const BenchShape& s) {
  kc::CudaCase c;
  c.shape = s.Decode();
  c.context = s.context;
  c.dtype = s.dtype;
  c.layout =
      s.block_tokens > 0 ? kernels::KvLayoutKind::kPaged : kernels::KvLayoutKind::kContiguous;
  c.block_tokens = s.block_tokens > 0 ? s.block_tokens : 16;
  return c;
}

std::string Pct(double f) {
  return fmt::format("{:.0f}%", 100 * f);
}

Json ToJson(const CudaRun& run) {
  const kc::CudaDevice& d = run.device;
  Json j;
  j.Set("device", "cuda");
  j.Set("machine", d.name);
  j.Set("compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor));
  j.Set("sm_count", d.sm_count);
  j.Set("l2_bytes", d.l2_bytes);
  j.Set("memory_clock_khz", d.memory_clock_khz);
  j.Set("bus_width_bits", d.bus_width_bits);
  j.Set("peak_gbps", d.peak_gbps);
  j.Set("copy_gbps", run.copy_gbps);
  if (run.hardware) {
    j.Set("hardware", run.hardware->name);
    j.Set("datasheet_gbps", run.hardware->memory_bandwidth_gbps);
  }
  Json results = Json::MakeArray();
  for (const CudaRow& row : run.rows) {
    const kc::CudaCaseResult& r = row.result;
    Json x = BenchShapeJson(row.shape);
    x.Set("bytes_read", r.cache_bytes);
    x.Set("seconds", r.median_us * 1e-6);
    x.Set("min_seconds", r.min_us * 1e-6);
    x.Set("repeats", r.repeats);
    x.Set("gbps", r.gbps);
    x.Set("fraction_of_copy", r.gbps / run.copy_gbps);
    x.Set("fraction_of_peak", r.gbps / d.peak_gbps);
    x.Set("splits", r.plan.max_splits);
    x.Set("split_tokens", r.plan.chunk_tokens);
    x.Set("blocks", r.plan.blocks);
    x.Set("blocks_per_sm", r.blocks_per_sm);
    x.Set("cache_copies", r.cache_copies);
    x.Set("validation_error_ratio", r.tolerance_ratio);
    results.Push(std::move(x));
  }
  j.Set("results", std::move(results));
  j.Set("curve", CurveJson(run.curve));
  return j;
}

Table ResultTable(const CudaRun& run, bool csv) {
  Table t(csv ? std::vector<std::string>{"shape", "bytes_read", "seconds", "gbps",
                                         "fraction_of_copy", "fraction_of_peak", "splits"}
              : std::vector<std::string>{"shape", "cache", "time", "GB/s", "% copy", "% peak",
                                         "splits"});
  t.SetAlign(0, Table::Align::kLeft);
  for (const CudaRow& row : run.rows) {
    const kc::CudaCaseResult& r = row.result;
    if (csv) {
      t.AddRow({row.shape.Label(), std::to_string(r.cache_bytes),
                fmt::format("{:.6g}", r.median_us * 1e-6), fmt::format("{:.1f}", r.gbps),
                fmt::format("{:.4f}", r.gbps / run.copy_gbps),
                fmt::format("{:.4f}", r.gbps / run.device.peak_gbps),
                std::to_string(r.plan.max_splits)});
    } else {
      t.AddRow({row.shape.Label(), FormatGiB(r.cache_bytes), fmt::format("{:.1f} us", r.median_us),
                fmt::format("{:.0f}", r.gbps), Pct(r.gbps / run.copy_gbps),
                Pct(r.gbps / run.device.peak_gbps), std::to_string(r.plan.max_splits)});
    }
  }
  return t;
}

std::string ToText(const CudaRun& run) {
  const kc::CudaDevice& d = run.device;
  std::string out = fmt::format("CUDA decode attention on {} (sm_{}{}, {} SMs, {} L2)\n", d.name,
                                d.cc_major, d.cc_minor, d.sm_count, FormatGiB(d.l2_bytes));
  out += fmt::format(
      "peak          {:.0f} GB/s  (2 x {} MHz memory clock x {}-bit bus, device attributes)\n",
      d.peak_gbps, d.memory_clock_khz / 1000, d.bus_width_bits);
  out += fmt::format(
      "copy          {:.0f} GB/s  (device-to-device cudaMemcpy, read + write, median) = {} of "
      "peak\n",
      run.copy_gbps, Pct(run.copy_gbps / d.peak_gbps));
  if (run.hardware) {
    out += fmt::format("datasheet     {:.0f} GB/s  ({})\n", run.hardware->memory_bandwidth_gbps,
                       run.hardware->display_name);
  }
  out += "\n" + ResultTable(run, false).Text();
  out +=
      "\nBytes are the K, V (and fp8 scales) one decode step reads, counted from the shape.\n"
      "Every shape was validated against the float64 reference (output poisoned with NaN\n"
      "before each run) before it was timed; each timed run read its own copy of the cache\n"
      "(copies cover 3 x L2), times are CUDA-event medians.\n";
  return out;
}

HardwareSpec ProfileSpec(const CudaRun& run, const std::string& path) {
  HardwareSpec h;
  const std::string date = UtcDate();
  if (run.hardware) {
    h = *run.hardware;
    h.source = fmt::format("{}; measured: kvplan bench --device cuda on {}, {}", h.source,
                           run.device.name, date);
  } else {
    h.vendor = "nvidia";
    h.display_name = run.device.name;
    h.memory_bytes = run.device.memory_bytes;
    h.memory_bandwidth_gbps = std::round(run.device.peak_gbps * 1000) / 1000;
    h.source = fmt::format(
        "kvplan bench --device cuda on {}, {}: memory_bandwidth_gbps from the "
        "device's memory clock and bus width; no FLOP/s (pass --hardware)",
        run.device.name, date);
  }
  h.name = std::filesystem::path(path).stem().string();
  MeasuredProfile p;
  p.device = "cuda";
  p.machine = fmt::format("{} ({} SMs)", run.device.name, run.device.sm_count);
  p.read_ceiling_gbps = run.copy_gbps;
  p.curve = run.curve;
  h.measured = p;
  return h;
}

void SaveProfile(const CudaRun& run, const std::string& path, bool force) {
  if (run.curve.empty()) Fail("--save: no curve shape was measured (raise --max-cache)");
  WriteProfile(ProfileSpec(run, path), "kvplan bench --device cuda --save", path, force);
}

}  // namespace

void RunCudaBench(const CudaBenchCliOptions& o) {
  if (!o.save.empty()) CheckOutputPath(o.save, o.force);
  CudaRun run;
  run.device = kc::OpenCudaDevice();  // "no CUDA device: ..." without one
  if (!o.hardware.empty()) run.hardware = LoadHardware(o.hardware);
  const uint64_t max_cache =
      o.max_cache.empty() ? UINT64_MAX : ParseBytes(o.max_cache, "--max-cache");
  std::vector<BenchShape> shapes;
  std::vector<BenchShape> candidates;
  for (const std::string& spec : o.shapes) candidates.push_back(kernels::ParseBenchShape(spec));
  if (candidates.empty()) candidates = CudaSweep(o.quick);
  for (const BenchShape& s : candidates) {
    if (s.CacheBytes() <= max_cache) shapes.push_back(s);
  }
  if (shapes.empty()) Fail("--max-cache {}: no shape of the sweep is that small", o.max_cache);
  const int repeats = o.repeats > 0 ? o.repeats : (o.quick ? 15 : 30);

  WriteStderr(
      fmt::format("kvplan bench: measuring the device-to-device copy on {}\n", run.device.name));
  run.copy_gbps = kc::MeasureCopyGBps(run.device, 20);
  std::map<uint64_t, double> curve;
  for (size_t i = 0; i < shapes.size(); ++i) {
    WriteStderr(fmt::format("kvplan bench: [{}/{}] {} ({}): validating, then timing\n", i + 1,
                            shapes.size(), shapes[i].Label(), FormatGiB(shapes[i].CacheBytes())));
    run.rows.push_back({shapes[i], kc::RunCudaCase(ToCase(shapes[i]), run.device, repeats, 1 + i)});
    if (IsCudaCurveShape(shapes[i]))
      curve[run.rows.back().result.cache_bytes] = run.rows.back().result.gbps;
  }
  for (const auto& [bytes, gbps] : curve) run.curve.push_back({bytes, gbps});
  if (!o.save.empty()) SaveProfile(run, o.save, o.force);

  switch (ToFormat(o.format)) {
    case Format::kJson:
      Print(ToJson(run).Dump() + "\n");
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

#endif  // KVPLAN_HAVE_CUDA

}  // namespace kvplan
