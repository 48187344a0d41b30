// The machine's two roofline ceilings, measured (not looked up): the
// STREAM-style read bandwidth over a buffer far larger than the last-level
// cache, and the FMA peak of the SIMD path the kernel uses. Also the cache
// flusher the harness runs before every timed step.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
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

/// The read loops the ceiling can use: each sums one contiguous slice of
/// 64-bit words, with SSE2 (the baseline), 256-bit loads (AVX2) or 512-bit
/// loads (AVX-512), the wide ones also with a T0 software prefetch 4 KiB
/// ahead. Which reads fastest depends on the machine: on an AMD Zen 3 256-bit
/// loads beat SSE2 and a prefetch adds nothing; on an Intel Xeon 512-bit
/// loads with the prefetch read fastest, and a kernel that prefetches could
/// beat a ceiling read with 256-bit loads alone. A ceiling a kernel can beat
/// is no ceiling, so the bench reads it with the fastest of them
/// (docs/perf.md, "Method").
enum class ReadLoop { kSse2, kAvx2, kAvx2Prefetch, kAvx512, kAvx512Prefetch };

/// "sse2", "avx2", "avx2+prefetch", "avx512", "avx512+prefetch".
std::string_view ReadLoopName(ReadLoop loop);

/// The loops this CPU can run, narrowest first.
std::vector<ReadLoop> SupportedReadLoops();

/// The loop that reads fastest on this machine with `threads` threads (0 =
/// all): each supported loop over twice the last-level cache (256 MiB to 1
/// GiB), turn about, 5 rounds, the best median. Measured once per process
/// and thread count (~0.5-1 s), then remembered: the ceiling is the fastest read this machine does,
/// whatever path the kernel takes.
ReadLoop FastestReadLoop(int threads);

/// The sum of the words p[0..n) by `loop` (every loop returns the same sum).
uint64_t SumWords(ReadLoop loop, const uint64_t* p, uint64_t n);

/// Read bandwidth in GB/s (10^9 B/s): `threads` threads (0 = all) each sum
/// one contiguous slice of a `bytes` buffer with FastestReadLoop(threads);
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
  /// Reads with FastestReadLoop(threads).
  ReadCeilingMeter(uint64_t bytes, int threads, std::function<double()> clock = {});
  /// Median GB/s of `repeats` passes (after one warm-up pass).
  double Measure(int repeats);
  /// GB/s of one pass, no warm-up (for a measurement beside each timed step).
  double MeasureOnce();
  uint64_t bytes() const { return buffer_.size(); }
  ReadLoop loop() const { return loop_; }

 private:
  ReadLoop loop_;
  AlignedBuffer buffer_;
  int threads_;
  std::function<double()> clock_;
  volatile uint64_t sink_ = 0;
};

/// Peak fp32 FLOP/s of `path` (kAvx512: 512-bit FMAs, 12 chains per thread;
/// kAvx2: 256-bit FMAs, 10 chains per thread; kScalar: the portable loop the
/// compiler makes of a*b+c), all threads.
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
/// is not 1, and it moves from one run to the next (docs/perf.md, "The
/// noise floor").
double MeasureNoiseFloor(ReadCeilingMeter& ceiling, uint64_t step_bytes, int threads, int repeats);

/// The noise floor's step, as `kvplan bench` and bench/ceiling_noise.cpp
/// time it: far larger than any last-level cache, and the smallest cache the
/// bench's 90 % target is about.
inline constexpr uint64_t kNoiseFloorStepBytes = 256ull << 20;

namespace detail {
/// The AVX2 FMA loop: FLOPs done by one thread in `iterations` steps.
double FmaLoopAvx2(int64_t iterations, float* sink);
/// The same with 512-bit FMAs (ceilings_avx512.cpp).
double FmaLoopAvx512(int64_t iterations, float* sink);
/// The sum of p[0..n) with 256-bit loads, prefetching 4 KiB ahead or not.
uint64_t SumSliceAvx2(const uint64_t* p, uint64_t n, bool prefetch);
/// The same with 512-bit loads (ceilings_avx512.cpp).
uint64_t SumSliceAvx512(const uint64_t* p, uint64_t n, bool prefetch);
/// How far ahead the prefetching read loops request lines.
inline constexpr uint64_t kReadPrefetchBytes = 4096;
}  // namespace detail

}  // namespace kvplan::kernels
