// The bench harness: for each shape, build a random cache, validate the
// kernel against the float64 reference, and only then time it (caches
// flushed before every step, median of repeats, bytes counted by hand from
// the shape). Also TimeDecodeStep(), one timed decode step for other code
// (the latency model's synthetic validation) to call.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cpu/decode_cpu.h"
#include "kernels/decode.h"
#include "measure/ceilings.h"

namespace kvplan::kernels {

/// One point of the sweep: `batch` sequences of `context` tokens each.
struct BenchShape {
  int64_t context = 4096;
  int64_t batch = 1;
  int64_t kv_heads = 8;
  int64_t group = 1;  // query heads per KV head
  int64_t head_dim = 128;
  KvDtype dtype = KvDtype::kFp16;
  int64_t block_tokens = 0;  // 0: contiguous; else paged with this block size

  DecodeShape Decode() const { return {batch, kv_heads * group, kv_heads, head_dim}; }
  /// Bytes of K, V and scales one step reads (DecodeCacheBytes).
  uint64_t CacheBytes() const;
  /// FLOPs of one step (DecodeFlops).
  uint64_t Flops() const;
  /// "fp16 ctx 65,536 b1 kvh8 g1 d128" (+ " paged16").
  std::string Label() const;
};

/// Tokens per sequence of the small separate cache the kernel runs on right
/// after each flush, before the timed step. The flush evicts the kernel's
/// code and leaves the branch predictors and the thread team on the
/// flusher's loops; a serving engine's decode loop never starts a kernel
/// that cold. Warming on a separate cache brings none of the timed cache's
/// bytes into any cache level: the timed step still streams all of them
/// from memory. A warmed step runs as fast as one after a full-size pass
/// over another cache, which is what a step of a real model does between
/// layers; a cold one is slower the smaller the cache, and the latency
/// model would predict the attention phase too slow from it.
constexpr int64_t kWarmTokens = 16;

struct TimingOptions {
  CpuDecodeOptions cpu;
  /// The kernel to validate and time; empty = DecodeAttentionCpu(args, cpu).
  std::function<void(const DecodeArgs&)> kernel;
  int repeats = 7;
  bool flush = true;  // flush the caches before each timed step (then warm on a kWarmTokens twin)
  /// The clock steps are timed by, in seconds; empty = the wall clock.
  std::function<double()> clock;
  uint64_t seed = 1;
  /// When set, called right before each timed step (before the flush) and
  /// its value kept in StepTiming::beside: the read ceiling measured beside
  /// every step, so each step has its own ceiling from the same moment.
  std::function<double()> beside;
  /// Also time the shape in cache (as TimeInCache does) right after each
  /// timed step: StepTiming::in_cache_gbps.
  bool in_cache = false;
};

struct StepTiming {
  double seconds = 0;           // median over the repeats
  std::vector<double> samples;  // every timed step, seconds
  std::vector<double> beside;   // TimingOptions::beside before each step, when set
  uint64_t bytes_read = 0;      // BenchShape::CacheBytes()
  uint64_t flops = 0;
  double validation_ratio = 0;        // worst error / tolerance on the validated sub-problem (<= 1)
  std::vector<double> in_cache_gbps;  // TimingOptions::in_cache: one sample after each step
};

/// Builds a random cache for `shape`, validates the kernel on it, then times
/// `repeats` decode steps. Validation runs the same kernel options on the
/// same cache cut to its first 2 sequences and 2,053 tokens (the float64
/// reference of a 1 GB cache would take minutes); throws kvplan::Error and
/// times nothing when the kernel is outside ToleranceFor(dtype).
StepTiming TimeDecodeStep(const BenchShape& shape, const TimingOptions& options);

/// The naive alternative to an O(1) append, for comparison: each step
/// concatenates the cache with the new token into a freshly allocated
/// buffer (copying all of it, as `cat` per step does), then runs the same
/// kernel on the copy. Median seconds per step, caches flushed before each.
double TimeConcatStep(const BenchShape& shape, const TimingOptions& options);

/// Cache per thread that TimeInCache keeps resident: within a 2 MiB L2 per
/// core (Intel Xeons), in L2 and L3 where L2 is 512 KiB (AMD Zen 3).
constexpr uint64_t kInCacheBytesPerThread = uint64_t{1} << 20;

/// The context TimeInCache cuts `shape` to: about kInCacheBytesPerThread of
/// cache per thread, at least 16 tokens (one block when paged, if larger),
/// at most the shape's own context.
int64_t InCacheContext(const BenchShape& shape, int threads);

/// The kernel's own speed on `shape`, memory taken out: GB/s of a decode
/// step over the same shape cut to InCacheContext, a cache that stays in
/// the CPU's caches (never flushed; the steps run back to back, each
/// sample timing as many as read about 64 MiB; median of options.repeats
/// samples).
/// Where it is below the read ceiling, the kernel's instructions, not
/// memory, keep the streaming step from the ceiling, whatever the FLOP
/// roofline says (docs/perf.md, "What is measured"). Cut for
/// options.cpu.threads threads (0: all).
double TimeInCache(const BenchShape& shape, const TimingOptions& options);

/// Parses a --shape spec: comma-separated key=value, keys dtype, context
/// (4K/4k accepted), batch, kv_heads, group, head_dim, block (0 =
/// contiguous); missing keys keep BenchShape's defaults. Throws kvplan::Error.
BenchShape ParseBenchShape(std::string_view spec);

/// The machine's ceilings, measured once per run.
struct Ceilings {
  double read_gbps = 0;  // STREAM-style read, all threads
  double fma_flops = 0;  // FLOP/s of the kernel's SIMD path
  uint64_t read_buffer_bytes = 0;
  ReadLoop read_loop = ReadLoop::kSse2;  // the loop the read ceiling uses
};

/// One measured shape, placed on the roofline.
struct ShapeResult {
  BenchShape shape;
  StepTiming timing;
  double gbps = 0;  // bytes_read / seconds / 1e9
  double gflops = 0;
  double flop_per_byte = 0;         // arithmetic intensity
  double compute_ceiling_gbps = 0;  // fma_flops / intensity, in GB/s of cache read
  bool compute_bound = false;       // compute ceiling below the read ceiling
  double ceiling_gbps = 0;          // the lower of the two
  double fraction_of_ceiling = 0;   // gbps / ceiling_gbps
  /// gbps / read ceiling; with a ceiling beside every step, the median of
  /// the per-step ratios (each step against the ceiling measured just before it)
  double fraction_of_read_ceiling = 0;
  double read_ceiling_gbps = 0;  // the read ceiling this shape was compared with (median)
  double concat_seconds = 0;     // TimeConcatStep, when asked for
  double in_cache_gbps = 0;      // median of StepTiming::in_cache_gbps (0: not measured)
  /// in cache / read ceiling: the median of the ratios of each in-cache
  /// sample to the ceiling read beside its step, when both were measured
  double in_cache_fraction = 0;
};

/// Times `shape` and places it against `ceilings`; when options.beside
/// measures the read ceiling beside each step, against those instead; with
/// options.in_cache, also in cache, each sample against the same ceiling.
ShapeResult RunShape(const BenchShape& shape, const Ceilings& ceilings,
                     const TimingOptions& options);

/// The sweep `kvplan bench` runs: quick (< 30 s on 2 cores) or default
/// (< 2 min): contexts 256..128K tokens (the bandwidth curve), every dtype,
/// batch, KV heads, head_dim, GQA group 1..8, one paged layout.
std::vector<BenchShape> BenchSweep(bool quick);

/// The shapes of the sweep that make the bandwidth curve: fp16, 8 KV heads x
/// 128, batch 1, contiguous, at growing contexts and GQA groups.
bool IsCurveShape(const BenchShape& shape);

}  // namespace kvplan::kernels
