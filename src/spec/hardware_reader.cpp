#include <fmt/format.h>

#include "spec/hardware_spec.h"
#include "spec/yaml_reader.h"

namespace kvplan {

double HardwareSpec::PeakFlops(const std::string& dtype) const {
  auto it = flops.find(dtype);
  if (it != flops.end()) return it->second;
  if (dtype == "fp16" && flops.count("bf16")) return flops.at("bf16");
  if (dtype == "bf16" && flops.count("fp16")) return flops.at("fp16");
  return 0;
}

namespace {

// The second axis of a curve: a point's GQA `group` (the attention curve) or
// `batch` (the weights curve), 1 when the point does not name it. (Zero is
// refused by MapReader::U64 already.)
struct CurveAxis {
  const char* key;
  uint64_t max;
  const char* what;
  uint64_t BandwidthPoint::*field;
};
constexpr CurveAxis kGroupAxis{
    "group", 1024, "a GQA group size (1 to 1024 query heads per KV head)", &BandwidthPoint::group};
constexpr CurveAxis kBatchAxis{"batch", 65536, "a batch size (1 to 65536 sequences)",
                               &BandwidthPoint::batch};

// The value of `key` as written (1e-400 reads as the smallest double).
std::string AsWritten(const MapReader& m, std::string_view key) {
  for (const auto& it : m.Node()) {
    if (it.first.Scalar() == key) return it.second.Scalar();
  }
  return "";
}

// A bandwidth in GB/s from `key` of `m`: from HardwareLimits::kMinGbps to
// kMaxGbps; 0 where `optional` and absent.
double Gbps(MapReader& m, std::string_view key, bool optional = false) {
  const double v = optional ? m.OptNum(key).value_or(0) : m.Num(key);
  if (v != 0 && v < HardwareLimits::kMinGbps) {
    Fail(
        "{}{}: {} GB/s is below kvplan's minimum of {:g} GB/s (1 MB/s; see "
        "docs/reliability.md)",
        m.Pos(key).Prefix(), key, AsWritten(m, key), HardwareLimits::kMinGbps);
  }
  if (v > HardwareLimits::kMaxGbps) {
    Fail("{}{}: {:g} GB/s is over kvplan's limit of {:g} GB/s (1 PB/s; see docs/reliability.md)",
         m.Pos(key).Prefix(), key, v, HardwareLimits::kMaxGbps);
  }
  return v;
}

// A non-empty list of {bytes, gbps} points under `key` of `m`, each with an
// optional second axis (`group` or `batch`, default 1), in increasing order
// of that axis, then of bytes.
std::vector<BandwidthPoint> ReadCurve(MapReader& m, const std::string& file, std::string_view key,
                                      const CurveAxis& axis) {
  YAML::Node list = m.Child(key);
  if (!list.IsSequence() || list.size() == 0) {
    Fail("{}{}: expected a non-empty list of {{bytes, gbps}} points", m.Pos(key).Prefix(), key);
  }
  std::vector<BandwidthPoint> curve;
  for (size_t i = 0; i < list.size(); ++i) {
    MapReader pt(list[i], file, fmt::format("{}[{}]", key, i), {"bytes", "gbps", axis.key});
    BandwidthPoint b{pt.U64("bytes"), Gbps(pt, "gbps")};
    uint64_t& x = b.*axis.field;
    if (pt.Has(axis.key)) {
      x = pt.U64(axis.key);
      if (x > axis.max)
        Fail("{}{}: {} is not {}", pt.Pos(axis.key).Prefix(), axis.key, x, axis.what);
    }
    pt.Finish();
    const uint64_t last = curve.empty() ? 0 : curve.back().*axis.field;
    if (!curve.empty() && x < last) {
      Fail("{}{}: {} points must be in increasing order of {}, then bytes",
           pt.Pos(axis.key).Prefix(), axis.key, key, axis.key);
    }
    if (!curve.empty() && x == last && b.bytes <= curve.back().bytes) {
      Fail("{}bytes: {} points must be in increasing order of bytes", pt.Pos("bytes").Prefix(),
           key);
    }
    curve.push_back(b);
  }
  return curve;
}

// The `node:` map: the usual server's GPU count, link and network.
NodeSpec ReadNode(const YAML::Node& node, const std::string& file) {
  MapReader m(node, file, "node",
              {"gpus", "link", "link_gbps", "link_latency_us", "network_gbps", "network_latency_us",
               "source"});
  NodeSpec n;
  n.gpus = m.U64("gpus");
  if (n.gpus > 1024) {
    Fail("{}gpus: {} GPUs in one node is over kvplan's limit of 1024", m.Pos("gpus").Prefix(),
         n.gpus);
  }
  n.link = m.OptStr("link").value_or("");
  n.link_gbps = Gbps(m, "link_gbps");
  n.network_gbps = Gbps(m, "network_gbps", true);
  for (const char* key : {"link_latency_us", "network_latency_us"}) {
    const double us = m.OptNum(key, true).value_or(0);
    if (us > 1e6) {
      Fail("{}{}: {:g} us is over kvplan's limit of 1 s", m.Pos(key).Prefix(), key, us);
    }
    (std::string_view(key) == "link_latency_us" ? n.link_latency_us : n.network_latency_us) = us;
  }
  n.source = m.Str("source");
  m.Finish();
  return n;
}

}  // namespace

HardwareSpec ParseHardwareYaml(const std::string& text, const std::string& file) {
  YAML::Node root = ParseYaml(text, file);
  MapReader r(root, file, "hardware spec",
              {"name", "display_name", "vendor", "memory_bytes", "usable_memory_bytes",
               "memory_bandwidth_gbps", "flops", "interconnect_gbps", "node", "source",
               "source_url", "measured"});
  HardwareSpec h;
  h.origin = file;
  h.name = r.Str("name");
  h.display_name = r.OptStr("display_name").value_or(h.name);
  h.vendor = r.OptStr("vendor").value_or("");
  h.memory_bytes = r.U64("memory_bytes");
  if (h.memory_bytes > HardwareLimits::kMaxMemoryBytes) {
    Fail("{}memory_bytes: {} is over kvplan's limit of {} (see docs/reliability.md)",
         r.Pos("memory_bytes").Prefix(), h.memory_bytes, HardwareLimits::kMaxMemoryBytes);
  }
  h.usable_memory_bytes = r.OptU64("usable_memory_bytes").value_or(0);
  if (h.usable_memory_bytes > h.memory_bytes) {
    Fail("{}usable_memory_bytes: {} is more than memory_bytes {}",
         r.Pos("usable_memory_bytes").Prefix(), h.usable_memory_bytes, h.memory_bytes);
  }
  h.memory_bandwidth_gbps = Gbps(r, "memory_bandwidth_gbps");
  if (r.Has("flops")) {
    static const std::vector<std::string> kDtypes = {"fp64", "fp32", "tf32", "fp16",
                                                     "bf16", "fp8",  "int8", "fp4"};
    MapReader f(r.Child("flops"), file, "flops", kDtypes);
    for (const std::string& dtype : kDtypes) {
      if (auto v = f.OptNum(dtype)) {
        if (*v < HardwareLimits::kMinFlops) {
          Fail(
              "{}{}: {} FLOP/s is below kvplan's minimum of {:g} FLOP/s (see "
              "docs/reliability.md)",
              f.Pos(dtype).Prefix(), dtype, AsWritten(f, dtype), HardwareLimits::kMinFlops);
        }
        if (*v > HardwareLimits::kMaxFlops) {
          Fail(
              "{}{}: {:g} FLOP/s is over kvplan's limit of {:g} FLOP/s (10 EFLOP/s; see "
              "docs/reliability.md)",
              f.Pos(dtype).Prefix(), dtype, *v, HardwareLimits::kMaxFlops);
        }
        h.flops[dtype] = *v;
      }
    }
    f.Finish();
  } else {
    r.OptStr("flops");
  }
  h.interconnect_gbps = Gbps(r, "interconnect_gbps", true);
  if (r.Has("node")) {
    h.node = ReadNode(r.Child("node"), file);
  } else {
    r.OptStr("node");
  }
  h.source = r.Str("source");
  h.source_url = r.OptStr("source_url").value_or("");
  if (r.Has("measured")) {
    MapReader m(r.Child("measured"), file, "measured",
                {"device", "machine", "read_ceiling_gbps", "threads", "curve", "weights_curve"});
    MeasuredProfile p;
    p.device = m.Str("device");
    if (p.device != "cpu" && p.device != "cuda") {
      Fail("{}device: '{}' is not a device kvplan measures (cpu or cuda)", m.Pos("device").Prefix(),
           p.device);
    }
    p.machine = m.OptStr("machine").value_or("");
    p.read_ceiling_gbps = Gbps(m, "read_ceiling_gbps");
    p.threads = m.OptU64("threads").value_or(0);
    p.curve = ReadCurve(m, file, "curve", kGroupAxis);
    if (m.Has("weights_curve")) {
      p.weights_curve = ReadCurve(m, file, "weights_curve", kBatchAxis);
    }
    m.Finish();
    h.measured = p;
  } else {
    r.OptStr("measured");
  }
  r.Finish();
  return h;
}

std::string HardwareToYaml(const HardwareSpec& h) {
  std::string out;
  // Every text value is quoted and escaped so that any name a reader accepted
  // (or a bench machine reports) reads back unchanged; numbers use the
  // shortest form that reads back exactly.
  out += fmt::format("# {}\n", OneLine(h.display_name));
  out += fmt::format("name: {}\n", YamlQuote(h.name));
  out += fmt::format("display_name: {}\n", YamlQuote(h.display_name));
  if (!h.vendor.empty()) out += fmt::format("vendor: {}\n", YamlQuote(h.vendor));
  out += fmt::format("memory_bytes: {}\n", h.memory_bytes);
  if (h.usable_memory_bytes) out += fmt::format("usable_memory_bytes: {}\n", h.usable_memory_bytes);
  out += fmt::format("memory_bandwidth_gbps: {}\n", h.memory_bandwidth_gbps);
  if (!h.flops.empty()) {
    out += "flops:\n";
    for (const auto& [k, v] : h.flops) out += fmt::format("  {}: {}\n", k, v);
  }
  if (h.interconnect_gbps > 0) out += fmt::format("interconnect_gbps: {}\n", h.interconnect_gbps);
  if (h.node) {
    const NodeSpec& n = *h.node;
    out += fmt::format("node:\n  gpus: {}\n", n.gpus);
    if (!n.link.empty()) out += fmt::format("  link: {}\n", YamlQuote(n.link));
    out += fmt::format("  link_gbps: {}\n", n.link_gbps);
    if (n.link_latency_us > 0) out += fmt::format("  link_latency_us: {}\n", n.link_latency_us);
    if (n.network_gbps > 0) out += fmt::format("  network_gbps: {}\n", n.network_gbps);
    if (n.network_latency_us > 0) {
      out += fmt::format("  network_latency_us: {}\n", n.network_latency_us);
    }
    out += fmt::format("  source: {}\n", YamlQuote(n.source));
  }
  out += fmt::format("source: {}\n", YamlQuote(h.source));
  if (!h.source_url.empty()) out += fmt::format("source_url: {}\n", YamlQuote(h.source_url));
  if (h.measured) {
    const MeasuredProfile& p = *h.measured;
    out += "measured:\n";
    out += fmt::format("  device: {}\n", YamlQuote(p.device));
    if (!p.machine.empty()) out += fmt::format("  machine: {}\n", YamlQuote(p.machine));
    out += fmt::format("  read_ceiling_gbps: {}\n", p.read_ceiling_gbps);
    if (p.threads > 0) out += fmt::format("  threads: {}\n", p.threads);
    out += "  curve:  # achieved GB/s by bytes read per decode step (and GQA group)\n";
    for (const BandwidthPoint& b : p.curve) {
      if (b.group == 1) {
        out += fmt::format("    - {{bytes: {}, gbps: {}}}\n", b.bytes, b.gbps);
      } else {
        out += fmt::format("    - {{bytes: {}, gbps: {}, group: {}}}\n", b.bytes, b.gbps, b.group);
      }
    }
    if (!p.weights_curve.empty()) {
      out +=
          "  weights_curve:  # achieved GB/s of the weight GEMV by bytes of one matrix (and "
          "batch)\n";
      for (const BandwidthPoint& b : p.weights_curve) {
        if (b.batch == 1) {
          out += fmt::format("    - {{bytes: {}, gbps: {}}}\n", b.bytes, b.gbps);
        } else {
          out +=
              fmt::format("    - {{bytes: {}, gbps: {}, batch: {}}}\n", b.bytes, b.gbps, b.batch);
        }
      }
    }
  }
  return out;
}

}  // namespace kvplan
