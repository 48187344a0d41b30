// kvplan gpus [NAME]: the bundled hardware catalog, or one device in full
// (a catalog name or a hardware/profile YAML path).
#include <fmt/format.h>

#include "cli/commands.h"
#include "import/resolve.h"
#include "report/json.h"
#include "report/table.h"
#include "report/terminal.h"
#include "spec/catalog.h"
#include "util/units.h"

namespace kvplan {
namespace {

struct GpusOptions {
  std::string name;
  std::string format = "text";
};

std::string Tflops(const HardwareSpec& h, const std::string& dtype) {
  double f = h.PeakFlops(dtype);
  return f > 0 ? fmt::format("{:.1f}", f / 1e12) : "-";
}

Json GpuJson(const HardwareSpec& h) {
  Json j;
  j.Set("name", h.name);
  j.Set("display_name", h.display_name);
  j.Set("vendor", h.vendor);
  j.Set("memory_bytes", h.memory_bytes);
  // null where none is on record (total_memory_bytes is then the size).
  j.Set("usable_memory_bytes",
        h.usable_memory_bytes != 0 ? Json(h.usable_memory_bytes) : Json(nullptr));
  j.Set("total_memory_bytes", h.TotalMemoryBytes());
  j.Set("memory_bandwidth_gbps", h.memory_bandwidth_gbps);
  Json flops;
  for (const auto& [dtype, v] : h.flops) flops.Set(dtype, v);
  j.Set("flops", std::move(flops));
  j.Set("interconnect_gbps", h.interconnect_gbps);
  j.Set("source", h.source);
  j.Set("source_url", h.source_url);
  if (h.measured) {
    Json m;
    m.Set("device", h.measured->device);
    m.Set("machine", h.measured->machine);
    m.Set("read_ceiling_gbps", h.measured->read_ceiling_gbps);
    m.Set("threads", h.measured->threads);
    // Each point's second axis too (CurveJson): without `group` a grouped
    // curve reads as one curve with repeated byte counts, and without `batch`
    // the weights curve loses what it was measured at.
    m.Set("curve", CurveJson(h.measured->curve));
    m.Set("weights_curve", CurveJson(h.measured->weights_curve));
    j.Set("measured", std::move(m));
  }
  return j;
}

// One device as field,value rows for machines: plain numbers, the unit in
// the field name (the text's "3,350 GB/s" and "80 GB = 74.51 GiB" do not parse).
std::string OneCsv(const HardwareSpec& h) {
  Table t({"field", "value"});
  auto add = [&](std::string k, std::string v) { t.AddRow({std::move(k), std::move(v)}); };
  add("name", h.name);
  add("display_name", h.display_name);
  add("vendor", h.vendor);
  add("memory_bytes", std::to_string(h.memory_bytes));
  if (h.usable_memory_bytes) add("usable_memory_bytes", std::to_string(h.usable_memory_bytes));
  add("memory_bandwidth_gbps", fmt::format("{:g}", h.memory_bandwidth_gbps));
  for (const auto& [dtype, v] : h.flops) add(dtype + "_dense_flops", fmt::format("{:.0f}", v));
  if (h.interconnect_gbps > 0) add("interconnect_gbps", fmt::format("{:g}", h.interconnect_gbps));
  if (h.measured) {
    add("measured_device", h.measured->device);
    add("measured_machine", h.measured->machine);
    add("measured_read_ceiling_gbps", fmt::format("{:g}", h.measured->read_ceiling_gbps));
    add("measured_curve_points", std::to_string(h.measured->curve.size()));
    add("measured_weights_curve_points", std::to_string(h.measured->weights_curve.size()));
  }
  add("source", h.source);
  add("source_url", h.source_url);
  return t.Csv();
}

void ShowOne(const HardwareSpec& h, Format format) {
  if (format == Format::kJson) {
    Print(GpuJson(h).Dump() + "\n");
    return;
  }
  if (format == Format::kCsv) {
    Print(OneCsv(h));
    return;
  }
  Table t({"field", "value"});
  t.SetAlign(1, Table::Align::kLeft);
  auto add = [&](std::string k, std::string v) { t.AddRow({std::move(k), std::move(v)}); };
  add("name", h.name);
  add("display_name", h.display_name);
  add("vendor", h.vendor);
  add("memory", fmt::format("{} B = {}", WithCommas(h.memory_bytes), FormatBoth(h.memory_bytes)));
  if (h.usable_memory_bytes) {
    add("usable memory", fmt::format("{} B = {}", WithCommas(h.usable_memory_bytes),
                                     FormatBoth(h.usable_memory_bytes)));
  }
  add("memory bandwidth", fmt::format("{} GB/s", h.memory_bandwidth_gbps));
  for (const auto& [dtype, v] : h.flops)
    add(dtype + " dense", fmt::format("{:.1f} TFLOP/s", v / 1e12));
  if (h.interconnect_gbps > 0) add("interconnect", fmt::format("{} GB/s", h.interconnect_gbps));
  if (h.measured) {
    add("measured on",
        h.measured->device + (h.measured->machine.empty() ? "" : ", " + h.measured->machine));
    add("measured read ceiling", fmt::format("{:.1f} GB/s", h.measured->read_ceiling_gbps));
    add("measured curve points", std::to_string(h.measured->curve.size()));
    if (!h.measured->weights_curve.empty()) {
      add("measured weights curve points", std::to_string(h.measured->weights_curve.size()));
    }
  }
  add("source", h.source);
  if (!h.source_url.empty()) add("source_url", h.source_url);
  Print(WrapText(t.Text("", OutputWidth()), OutputWidth()));
}

void Run(const GpusOptions& o) {
  Format format = ToFormat(o.format);
  if (!o.name.empty()) {
    ShowOne(LoadHardware(o.name), format);
    return;
  }
  const std::vector<HardwareSpec>& all = CatalogHardware();
  if (format == Format::kJson) {
    Json arr = Json::MakeArray();
    for (const HardwareSpec& h : all) arr.Push(GpuJson(h));
    Print(arr.Dump() + "\n");
    return;
  }
  if (format == Format::kCsv) {
    // Plain numbers, the unit in the header; an unlisted peak is empty, not "-".
    Table c({"name", "device", "memory_bytes", "usable_memory_bytes", "memory_bandwidth_gbps",
             "bf16_dense_flops", "fp8_dense_flops", "fp4_dense_flops"});
    const auto peak = [](const HardwareSpec& h, const char* dtype) {
      const double f = h.PeakFlops(dtype);
      return f > 0 ? fmt::format("{:.0f}", f) : std::string();
    };
    for (const HardwareSpec& h : all) {
      c.AddRow({h.name, h.display_name, std::to_string(h.memory_bytes),
                h.usable_memory_bytes != 0 ? std::to_string(h.usable_memory_bytes) : "",
                fmt::format("{:g}", h.memory_bandwidth_gbps), peak(h, "bf16"), peak(h, "fp8"),
                peak(h, "fp4")});
    }
    Print(c.Csv());
    return;
  }
  // "usable": what the driver reports (nvidia-smi's total), which capacity
  // plans with; "-" where the catalog has no figure and plans with the size.
  Table t({"name", "device", "memory GiB", "memory GB", "usable GiB", "bandwidth GB/s",
           "bf16 TFLOP/s", "fp8 TFLOP/s"});
  t.SetAlign(1, Table::Align::kLeft);
  // On a narrow terminal the decimal size goes first (GiB stays), then the
  // peaks, then the long device name (the catalog name still identifies it).
  t.SetDropOrder(3, 4);
  t.SetDropOrder(7, 3);
  t.SetDropOrder(6, 2);
  t.SetDropOrder(1, 1);
  for (const HardwareSpec& h : all) {
    t.AddRow({h.name, h.display_name,
              fmt::format("{:.2f}", static_cast<double>(h.memory_bytes) / kGiB),
              fmt::format("{:.2f}", static_cast<double>(h.memory_bytes) / kGB),
              h.usable_memory_bytes != 0
                  ? fmt::format("{:.2f}", static_cast<double>(h.usable_memory_bytes) / kGiB)
                  : "-",
              fmt::format("{:g}", h.memory_bandwidth_gbps), Tflops(h, "bf16"), Tflops(h, "fp8")});
  }
  const size_t width = OutputWidth();
  Print(t.Text("", width));
  Print(WrapText(
      "usable: the total the driver reports (nvidia-smi's on NVIDIA), which kvplan plans with; "
      "-: none on record, the memory size is used\n",
      width));
}

}  // namespace

void SetupGpusCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<GpusOptions>();
  CLI::App* sub =
      app.add_subcommand("gpus", "List the bundled accelerator catalog, or show one device");
  sub->add_option("name", o->name, "A catalog name or a hardware/profile YAML to show in full");
  AddFormatOption(sub, o->format);
  sub->footer(
      "Examples:\n  kvplan gpus\n  kvplan gpus h100-sxm\n  kvplan gpus ./profile.yaml --format "
      "json\n"
      "  kvplan gpus --format csv\n\nFLOP/s are dense (no sparsity); GB = 10^9 B, GiB = 2^30 B.");
  sub->callback([o, &exit_code] {
    Run(*o);
    exit_code = 0;
  });
}

}  // namespace kvplan
