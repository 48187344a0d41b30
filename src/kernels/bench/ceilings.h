// The machine's two roofline ceilings, measured (not looked up): the
// STREAM-style read bandwidth over a buffer far larger than the last-level
// cache, and the FMA peak of the SIMD path the kernel uses. Also the cache
// flusher the harness runs before every timed step.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/cpu/decode_cpu.h"
#include "kernels/kv_cache.h"

namespace kvplan::kernels {

/// Median of `samples` (the mean of the middle two for an even count); 0 if empty.
double Median(std::vector<double> samples);

/// Bytes of the last-level cache: the larger of sysfs and sysconf (32 MiB
/// when neither knows).
uint64_t LastLevelCacheBytes();

/// "AMD EPYC, 2 cores" from /proc/cpuinfo (model name) and the online CPU count.
std::string MachineDescription();

/// Read bandwidth in GB/s (10^9 B/s): `threads` threads (0 = all) each sum
/// one contiguous slice of a `bytes` buffer (256-bit loads where the CPU has
/// AVX2, whatever path the kernel takes: the ceiling is the machine's);
/// median of `repeats` passes.
double MeasureReadCeilingGbps(uint64_t bytes, int threads, int repeats);

/// The same read over a buffer allocated once, so the ceiling can be
/// measured again right beside each timing: on a shared machine the memory
/// system drifts between minutes, and a ratio is only meaningful when both
/// sides were measured in the same minute.
class ReadCeilingMeter {
 public:
  /// `clock`: seconds by which a pass is timed (empty: the wall clock; one
  /// thread's CPU clock pairs it with steps timed on that clock).
  ReadCeilingMeter(uint64_t bytes, int threads, std::function<double()> clock = {});
  /// Median GB/s of `repeats` passes (after one warm-up pass).
  double Measure(int repeats);
  /// GB/s of one pass, no warm-up (for a measurement beside each timed step).
  double MeasureOnce();
  uint64_t bytes() const { return buffer_.size(); }

 private:
  AlignedBuffer buffer_;
  int threads_;
  std::function<double()> clock_;
  volatile uint64_t sink_ = 0;
};

/// Peak fp32 FLOP/s of `path` (kAvx2: 256-bit FMAs, 10 chains per thread;
/// kScalar: the portable loop the compiler makes of a*b+c), all threads.
double MeasureFmaPeakFlops(SimdPath path, int threads);

/// Evicts the caches so the next timing reads its data from memory: writes
/// one LLC-sized half of a buffer, then reads the other half (64 to 512 MiB
/// in all), from all threads.
class CacheFlusher {
 public:
  CacheFlusher();
  void Flush();

 private:
  AlignedBuffer buffer_;
  unsigned char round_ = 0;
  volatile uint64_t sink_ = 0;
};

/// What a kernel streaming exactly as fast as the ceiling loop would score
/// as '% read ceiling': the loop itself over `step_bytes`, timed as a kernel
/// step is (`ceiling` read beside it, the caches flushed, then the step),
/// `repeats` times; the median of the per-step ratios. On a shared host it
/// is not 1: on the build machine it ranged 0.90-1.10 from one run to the
/// next (docs/perf.md, "The noise floor").
double MeasureNoiseFloor(ReadCeilingMeter& ceiling, uint64_t step_bytes, int threads, int repeats);

/// The noise floor's step, as `kvplan bench` and bench/ceiling_noise.cpp
/// time it: far larger than any last-level cache, and the smallest cache the
/// bench's 90 % target is about.
inline constexpr uint64_t kNoiseFloorStepBytes = 256ull << 20;

namespace detail {
/// The AVX2 FMA loop: FLOPs done by one thread in `iterations` steps.
double FmaLoopAvx2(int64_t iterations, float* sink);
/// The sum of p[0..n) with 256-bit loads (the read ceiling's loop).
uint64_t SumSliceAvx2(const uint64_t* p, uint64_t n);
}  // namespace detail

}  // namespace kvplan::kernels
