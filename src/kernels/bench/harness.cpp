#include "kernels/bench/harness.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "kernels/bench/ceilings.h"
#include "kernels/kv_cache.h"
#include "kernels/reference.h"
#include "util/error.h"
#include "util/units.h"

namespace kvplan::kernels {

namespace {

constexpr int64_t kValidateBatch = 2;
constexpr int64_t kValidateTokens = 2053;  // odd: ends mid-tile and mid-block

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

uint64_t BenchShape::CacheBytes() const {
  const std::vector<int64_t> lens(static_cast<size_t>(batch), context);
  return DecodeCacheBytes(Decode(), lens.data(), dtype);
}

uint64_t BenchShape::Flops() const {
  const std::vector<int64_t> lens(static_cast<size_t>(batch), context);
  return DecodeFlops(Decode(), lens.data());
}

std::string BenchShape::Label() const {
  std::string s = fmt::format("{} ctx {} b{} kvh{} g{} d{}", KvDtypeName(dtype),
                              WithCommas(static_cast<uint64_t>(context)),
                              batch, kv_heads, group, head_dim);
  if (block_tokens > 0) s += fmt::format(" paged{}", block_tokens);
  return s;
}

StepTiming TimeDecodeStep(const BenchShape& shape, const TimingOptions& options) {
  const DecodeShape ds = shape.Decode();
  KvCache cache = shape.block_tokens > 0
                      ? KvCache::Paged(shape.batch, shape.kv_heads, shape.head_dim, shape.block_tokens,
                                       shape.batch * ((shape.context + shape.block_tokens - 1) / shape.block_tokens),
                                       shape.context, shape.dtype)
                      : KvCache::Contiguous(shape.batch, shape.kv_heads, shape.head_dim, shape.context,
                                            shape.dtype);
  cache.FillRandom(std::vector<int64_t>(static_cast<size_t>(shape.batch), shape.context), options.seed);
  std::vector<float> q(static_cast<size_t>(ds.batch * ds.q_heads * ds.head_dim));
  std::mt19937 rng(static_cast<uint32_t>(options.seed));
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (float& x : q) x = nd(rng);
  std::vector<float> out(q.size());

  DecodeArgs args;
  args.shape = ds;
  args.seq_lens = cache.Lengths().data();
  args.q = q.data();
  args.cache = cache.View();
  args.out = out.data();

  // Validate first, on a prefix of the very same cache (same layout, dtype,
  // options): the first sequences, cut to kValidateTokens.
  const auto kernel = [&](const DecodeArgs& a) {
    if (options.kernel) {
      options.kernel(a);
    } else {
      DecodeAttentionCpu(a, options.cpu);
    }
  };
  StepTiming timing;
  {
    DecodeArgs sub = args;
    sub.shape.batch = std::min(shape.batch, kValidateBatch);
    std::vector<int64_t> lens(static_cast<size_t>(sub.shape.batch),
                              std::min(shape.context, kValidateTokens));
    sub.seq_lens = lens.data();
    kernel(sub);
    const std::vector<double> ref = DecodeAttentionReference(sub);
    const Tolerance tol = ToleranceFor(shape.dtype);
    timing.validation_ratio = ToleranceRatio(sub.out, ref, tol.abs_tol, tol.rel_tol);
    if (!(timing.validation_ratio <= 1.0)) {
      Fail("kernel output differs from the float64 reference on {} (worst error {:.3g} x the "
           "tolerance); refusing to time it",
           shape.Label(), timing.validation_ratio);
    }
  }

  CacheFlusher flusher;
  kernel(args);  // warm-up: page tables, thread pool
  for (int r = 0; r < std::max(1, options.repeats); ++r) {
    if (options.flush) flusher.Flush();
    const double t0 = Now();
    kernel(args);
    timing.samples.push_back(Now() - t0);
  }
  timing.seconds = Median(timing.samples);
  timing.bytes_read = shape.CacheBytes();
  timing.flops = shape.Flops();
  return timing;
}

ShapeResult RunShape(const BenchShape& shape, const Ceilings& ceilings, const TimingOptions& options) {
  ShapeResult r;
  r.shape = shape;
  r.timing = TimeDecodeStep(shape, options);
  const double bytes = static_cast<double>(r.timing.bytes_read);
  r.gbps = bytes / r.timing.seconds / 1e9;
  r.gflops = static_cast<double>(r.timing.flops) / r.timing.seconds / 1e9;
  r.flop_per_byte = static_cast<double>(r.timing.flops) / bytes;
  r.compute_ceiling_gbps = ceilings.fma_flops / r.flop_per_byte / 1e9;
  r.compute_bound = r.compute_ceiling_gbps < ceilings.read_gbps;
  r.ceiling_gbps = std::min(ceilings.read_gbps, r.compute_ceiling_gbps);
  r.fraction_of_ceiling = r.gbps / r.ceiling_gbps;
  r.fraction_of_read_ceiling = r.gbps / ceilings.read_gbps;
  return r;
}

std::vector<BenchShape> BenchSweep(bool quick) {
  std::vector<BenchShape> s;
  auto add = [&](int64_t context, int64_t batch, int64_t kvh, int64_t group, int64_t d, KvDtype t,
                 int64_t block = 0) { s.push_back({context, batch, kvh, group, d, t, block}); };
  // The bandwidth curve: fp16, 8 KV heads x 128, group 1 (4 KiB per token).
  const std::vector<int64_t> curve = quick ? std::vector<int64_t>{1024, 8192, 65536}
                                           : std::vector<int64_t>{256, 1024, 4096, 16384, 65536, 131072};
  for (int64_t n : curve) add(n, 1, 8, 1, 128, KvDtype::kFp16);
  // Every dtype at about 256 MiB.
  add(32768, 1, 8, 1, 128, KvDtype::kFp32);
  add(65536, 1, 8, 1, 128, KvDtype::kBf16);
  add(131072, 1, 8, 1, 128, KvDtype::kInt8);
  add(131072, 1, 8, 1, 128, KvDtype::kFp8E4M3);
  // GQA group: from bandwidth- to compute-bound.
  add(65536, 1, 8, 4, 128, KvDtype::kFp16);
  add(65536, 1, 8, 8, 128, KvDtype::kFp16);
  if (quick) return s;
  add(32768, 1, 8, 8, 128, KvDtype::kFp32);
  add(131072, 1, 8, 8, 128, KvDtype::kInt8);
  // Batch, KV heads, head_dim, paged.
  add(16384, 4, 8, 1, 128, KvDtype::kFp16);
  add(4096, 16, 8, 4, 128, KvDtype::kFp16);
  add(65536, 1, 1, 8, 128, KvDtype::kFp16);
  add(16384, 1, 32, 1, 128, KvDtype::kFp16);
  add(131072, 1, 8, 1, 64, KvDtype::kFp16);
  add(32768, 1, 8, 1, 256, KvDtype::kFp16);
  add(65536, 1, 8, 1, 128, KvDtype::kFp16, 16);
  return s;
}

bool IsCurveShape(const BenchShape& s) {
  return s.dtype == KvDtype::kFp16 && s.group == 1 && s.batch == 1 && s.kv_heads == 8 &&
         s.head_dim == 128 && s.block_tokens == 0;
}

}  // namespace kvplan::kernels
