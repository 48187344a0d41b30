// The CUDA side of `kvplan bench --device cuda`: the device and its ceilings
// (DRAM peak from its attributes, a device-to-device copy measured now), and
// one case run the llm.c way: random data, the float64 reference, the output
// poisoned with NaN before every run and validated, then timed with CUDA
// events over rotating copies of the cache (so no run finds its data in L2),
// median of the repeats. No CUDA types here: the CLI includes it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cuda/decode_plan.h"
#include "kernels/decode.h"

namespace kvplan::kernels::cuda {

/// The GPU the bench runs on (device 0) and its datasheet-style ceiling.
struct CudaDevice {
  std::string name;
  int ordinal = 0;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  uint64_t l2_bytes = 0;
  uint64_t memory_bytes = 0;
  int64_t memory_clock_khz = 0;  // cudaDevAttrMemoryClockRate
  int64_t bus_width_bits = 0;    // cudaDevAttrGlobalMemoryBusWidth
  double peak_gbps = 0;          // PeakBandwidthGBps(clock, bus)
};

/// Opens device 0. Throws kvplan::Error "no CUDA device: <reason>" when the
/// driver is missing or reports no device.
CudaDevice OpenCudaDevice();

/// Device-to-device cudaMemcpy bandwidth in GB/s, counting bytes read plus
/// bytes written (2 x size / time), median of `repeats` copies of a buffer
/// of max(512 MiB, 8 x L2).
double MeasureCopyGBps(const CudaDevice& device, int repeats);

/// One shape of the sweep.
struct CudaCase {
  DecodeShape shape;
  int64_t context = 0;            // tokens of every sequence, unless seq_lens is set
  std::vector<int64_t> seq_lens;  // per-sequence lengths (size batch), optional
  KvDtype dtype = KvDtype::kFp16;
  KvLayoutKind layout = KvLayoutKind::kContiguous;
  int64_t block_tokens = 16;  // paged: tokens per block (vLLM's default)
  int64_t chunk_tokens = 0;   // split size; 0: ChooseSplits decides
};

struct CudaCaseResult {
  uint64_t cache_bytes = 0;    // DecodeCacheBytes: K, V and scales read per step
  double tolerance_ratio = 0;  // worst ToleranceRatio over the validated runs (<= 1 passes)
  int repeats = 0;             // timed runs (0: validated only)
  double median_us = 0;
  double min_us = 0;
  double gbps = 0;  // cache_bytes / median
  SplitPlan plan;
  int blocks_per_sm = 0;
  int64_t cache_copies = 0;  // rotation copies on the device
};

/// Validates the case against the float64 reference (twice: first run and
/// last timed run), then times `repeats` runs. Throws kvplan::Error when the
/// output is outside ToleranceFor(dtype) or a CUDA call fails.
CudaCaseResult RunCudaCase(const CudaCase& c, const CudaDevice& device, int repeats, uint64_t seed);

}  // namespace kvplan::kernels::cuda
