// HardwareSpec: an accelerator (or CPU) from hardware/*.yaml, or a profile
// written by `kvplan bench --save` (the same fields plus measured figures).
// Schema: docs/hardware-spec.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kvplan {

/// One point of a measured bandwidth curve: achieved GB/s when a decode step
/// reads `bytes` bytes, with `group` query heads per KV head (GQA: each
/// cached byte serves that many heads, so the kernel does that much more
/// arithmetic per byte and may stream slower).
/// One measured point. `group` (GQA query heads per KV head) is the second
/// axis of the attention `curve`, `batch` (sequences per GEMV) that of the
/// `weights_curve`; each is 1 in the other curve.
struct BandwidthPoint {
  uint64_t bytes = 0;
  double gbps = 0;
  uint64_t group = 1;
  uint64_t batch = 1;
};

struct MeasuredProfile {
  std::string device;                 // "cpu" or "cuda"
  std::string machine;                // free text: CPU model / GPU name, cores
  double read_ceiling_gbps = 0;       // STREAM-style read ceiling (or D2D copy for cuda)
  uint64_t threads = 0;               // CPU threads the kernels ran on (0: not recorded)
  std::vector<BandwidthPoint> curve;  // sorted by (group, bytes)
  /// Achieved GB/s of the weight GEMV (batch 1) by bytes of one matrix, sorted
  /// by bytes; empty when not measured (the weights then read at `curve`'s
  /// group 1). The weights are streamed by a different kernel than the
  /// cache, and on a CPU the two differ by 10-20%.
  std::vector<BandwidthPoint> weights_curve;
};

/// Upper bound the reader enforces (docs/reliability.md): far above any
/// device, and low enough that memory minus weights stays a signed 64-bit
/// number and memory x fraction an exact double-to-integer conversion.
struct HardwareLimits {
  static constexpr uint64_t kMaxMemoryBytes = 1ull << 50;  // 1 PiB; largest published: 288 GB
  // Any bandwidth (datasheet, interconnect, a measured ceiling or curve
  // point): 1 PB/s; largest published: 8 TB/s. Keeps GB/s figures printable
  // as whole numbers (1e20 printed as 2^63).
  static constexpr double kMaxGbps = 1e6;
  // The smallest bandwidth (1 MB/s) and peak FLOP/s (1 MFLOP/s) taken: far
  // below any device kvplan plans for (a CPU core streams ~10 GB/s), and high
  // enough that times computed from them stay printable (1e-300 GB/s made a
  // TTFT of "inf ms").
  static constexpr double kMinGbps = 1e-3;
  static constexpr double kMinFlops = 1e6;
  // The largest peak taken: 10 EFLOP/s (largest published per device: B200
  // fp4, ~2e16); 1e300 printed TFLOP/s as 1e+288.
  static constexpr double kMaxFlops = 1e19;
};

/// The usual server the device comes in, as `kvplan fleet` lays replicas
/// out on it: how many GPUs share a node, the link between them (tensor
/// parallel's all-reduces) and the network between nodes (pipeline stages,
/// the KV cache moved from a prefill to a decode replica). Bandwidths are
/// per GPU, one direction, line rate; latencies one small collective step.
struct NodeSpec {
  uint64_t gpus = 1;
  std::string link;               // e.g. "NVLink 4 (NVSwitch)", "PCIe Gen4"
  double link_gbps = 0;           // GB/s
  double link_latency_us = 0;     // one small all-reduce within the node
  double network_gbps = 0;        // GB/s between nodes (0: one node only)
  double network_latency_us = 0;  // one small message between nodes
  std::string source;
};

struct HardwareSpec {
  std::string name;                     // catalog name, e.g. "h100-sxm"
  std::string display_name;             // "NVIDIA H100 SXM5 80GB"
  std::string vendor;                   // nvidia | amd | intel | cpu
  std::string origin;                   // where kvplan read it
  uint64_t memory_bytes = 0;            // device memory as sold
  uint64_t usable_memory_bytes = 0;     // what the driver reports as total (0: unknown)
  double memory_bandwidth_gbps = 0;     // datasheet peak, GB/s
  std::map<std::string, double> flops;  // dense peak FLOP/s by dtype (fp16, bf16, fp8, ...)
  double interconnect_gbps = 0;
  std::string source;
  std::string source_url;
  std::optional<MeasuredProfile> measured;
  std::optional<NodeSpec> node;

  /// The memory the engines see as total: usable_memory_bytes if known, else memory_bytes.
  uint64_t TotalMemoryBytes() const {
    return usable_memory_bytes != 0 ? usable_memory_bytes : memory_bytes;
  }

  /// Dense peak FLOP/s for `dtype` (falls back fp16 <-> bf16); 0 when unknown.
  double PeakFlops(const std::string& dtype) const;
};

/// Parses and validates a hardware spec or profile from YAML text.
HardwareSpec ParseHardwareYaml(const std::string& text, const std::string& file);

/// Serialises a spec (with its measured profile, if any) as YAML that
/// ParseHardwareYaml reads back.
std::string HardwareToYaml(const HardwareSpec& hw);

}  // namespace kvplan
