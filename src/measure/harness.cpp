#include "measure/harness.h"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <random>

#include "kernels/fp_convert.h"
#include "kernels/kv_cache.h"
#include "kernels/reference.h"
#include "measure/ceilings.h"
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
  std::string s =
      fmt::format("{} ctx {} b{} kvh{} g{} d{}", KvDtypeName(dtype),
                  WithCommas(static_cast<uint64_t>(context)), batch, kv_heads, group, head_dim);
  if (block_tokens > 0) s += fmt::format(" paged{}", block_tokens);
  return s;
}

namespace {

// A random cache of `shape`'s layout and dtype holding `context` tokens per sequence.
KvCache RandomCache(const BenchShape& shape, int64_t context, uint64_t seed) {
  KvCache cache =
      shape.block_tokens > 0
          ? KvCache::Paged(shape.batch, shape.kv_heads, shape.head_dim, shape.block_tokens,
                           shape.batch * ((context + shape.block_tokens - 1) / shape.block_tokens),
                           context, shape.dtype)
          : KvCache::Contiguous(shape.batch, shape.kv_heads, shape.head_dim, context, shape.dtype);
  cache.FillRandom(std::vector<int64_t>(static_cast<size_t>(shape.batch), context), seed);
  return cache;
}

// A standard normal query for every head of `ds`, from `seed`.
std::vector<float> RandomQuery(const DecodeShape& ds, uint64_t seed) {
  std::vector<float> q(static_cast<size_t>(ds.batch * ds.q_heads * ds.head_dim));
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (float& x : q) x = nd(rng);
  return q;
}

// One step of the kernel under test: options.kernel, else the CPU kernel.
void RunKernel(const TimingOptions& options, const DecodeArgs& a) {
  if (options.kernel) {
    options.kernel(a);
  } else {
    DecodeAttentionCpu(a, options.cpu);
  }
}

double Clock(const TimingOptions& options) {
  return options.clock ? options.clock() : Now();
}

// The kernel on `shape` cut to InCacheContext, its cache left in the CPU's
// caches: Sample() times as many back-to-back steps as read about 64 MiB.
class InCacheProbe {
 public:
  InCacheProbe(const BenchShape& shape, const TimingOptions& options)
      : options_(options),
        small_(Small(shape, options)),
        cache_(RandomCache(small_, small_.context, options.seed + 2)),
        q_(RandomQuery(small_.Decode(), options.seed + 2)),
        out_(q_.size()) {
    args_.shape = small_.Decode();
    args_.seq_lens = cache_.Lengths().data();
    args_.q = q_.data();
    args_.cache = cache_.View();
    args_.out = out_.data();
    bytes_ = small_.CacheBytes();
    // Back to back, so each step's thread start is a small part of the time.
    steps_ = std::clamp<int64_t>(static_cast<int64_t>((uint64_t{64} << 20) / bytes_), 1, 4096);
    for (int i = 0; i < 2; ++i) RunKernel(options_, args_);  // into the caches
  }
  // GB/s of one batch of steps.
  double Sample() {
    const double t0 = Clock(options_);
    for (int64_t i = 0; i < steps_; ++i) RunKernel(options_, args_);
    return static_cast<double>(bytes_) * static_cast<double>(steps_) / (Clock(options_) - t0) / 1e9;
  }

 private:
  static BenchShape Small(const BenchShape& shape, const TimingOptions& options) {
    BenchShape small = shape;
    small.context = InCacheContext(
        shape, options.cpu.threads > 0 ? options.cpu.threads : omp_get_max_threads());
    return small;
  }
  const TimingOptions& options_;
  BenchShape small_;
  KvCache cache_;
  std::vector<float> q_, out_;
  DecodeArgs args_;
  uint64_t bytes_ = 0;
  int64_t steps_ = 1;
};

}  // namespace

int64_t InCacheContext(const BenchShape& shape, int threads) {
  BenchShape one = shape;
  one.context = 1;
  const uint64_t per_token = one.CacheBytes();
  const int64_t fit =
      static_cast<int64_t>(kInCacheBytesPerThread * static_cast<uint64_t>(std::max(1, threads)) /
                           std::max<uint64_t>(1, per_token));
  return std::min(shape.context, std::max({fit, int64_t{16}, shape.block_tokens}));
}

StepTiming TimeDecodeStep(const BenchShape& shape, const TimingOptions& options) {
  const DecodeShape ds = shape.Decode();
  KvCache cache = RandomCache(shape, shape.context, options.seed);
  // A separate 16-token cache of the same shape, run between the flush and
  // the timed step (see kWarmTokens).
  KvCache twin =
      RandomCache(shape, std::min<int64_t>(shape.context, kWarmTokens), options.seed + 1);
  std::vector<float> q = RandomQuery(ds, options.seed);
  std::vector<float> out(q.size());

  DecodeArgs args;
  args.shape = ds;
  args.seq_lens = cache.Lengths().data();
  args.q = q.data();
  args.cache = cache.View();
  args.out = out.data();

  // Validate first, on a prefix of the very same cache (same layout, dtype,
  // options): the first sequences, cut to kValidateTokens.
  const auto kernel = [&](const DecodeArgs& a) { RunKernel(options, a); };
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
      Fail(
          "kernel output differs from the float64 reference on {} (worst error {:.3g} x the "
          "tolerance); refusing to time it",
          shape.Label(), timing.validation_ratio);
    }
  }

  std::optional<CacheFlusher> flusher;
  if (options.flush) flusher.emplace();
  kernel(args);  // warm-up: page tables, thread pool
  DecodeArgs warm = args;
  warm.seq_lens = twin.Lengths().data();
  warm.cache = twin.View();
  std::optional<InCacheProbe> in_cache;
  if (options.in_cache) in_cache.emplace(shape, options);
  for (int r = 0; r < std::max(1, options.repeats); ++r) {
    if (options.beside) timing.beside.push_back(options.beside());
    if (flusher) {
      flusher->Flush();
      kernel(warm);
    }
    const double t0 = Clock(options);
    kernel(args);
    timing.samples.push_back(Clock(options) - t0);
    // Right after the step, so both see the machine at the same moment.
    if (in_cache) timing.in_cache_gbps.push_back(in_cache->Sample());
  }
  timing.seconds = Median(timing.samples);
  timing.bytes_read = shape.CacheBytes();
  timing.flops = shape.Flops();
  return timing;
}

double TimeConcatStep(const BenchShape& shape, const TimingOptions& options) {
  if (shape.block_tokens > 0) Fail("concat-per-step is timed on contiguous caches only");
  // Sequence b of the old cache: [kv_heads][n][d]; the new one has n + 1 rows per head.
  const int64_t n = shape.context, d = shape.head_dim, h = shape.kv_heads;
  KvCache cache = KvCache::Contiguous(shape.batch, h, d, n, shape.dtype);
  cache.FillRandom(std::vector<int64_t>(static_cast<size_t>(shape.batch), n), options.seed);
  const DecodeShape ds = shape.Decode();
  std::vector<float> q(static_cast<size_t>(ds.batch * ds.q_heads * d), 0.5f), out(q.size());
  std::vector<float> k_new(static_cast<size_t>(d), 0.25f);
  const uint64_t row = static_cast<uint64_t>(d) * ElementBytes(shape.dtype);
  const uint64_t rows_old = static_cast<uint64_t>(shape.batch * h * n);
  const uint64_t rows_new = static_cast<uint64_t>(shape.batch * h * (n + 1));
  const KvCacheView old = cache.View();
  std::optional<CacheFlusher> flusher;
  if (options.flush) flusher.emplace();
  std::vector<double> samples;
  for (int r = 0; r < std::max(1, options.repeats) + 1; ++r) {
    if (flusher) flusher->Flush();
    const double t0 = Now();
    // What `torch.cat` / np.concatenate per step does: a new buffer, every row copied.
    std::unique_ptr<unsigned char[]> k(new unsigned char[rows_new * row]);
    std::unique_ptr<unsigned char[]> v(new unsigned char[rows_new * row]);
    std::unique_ptr<float[]> ks, vs;
    if (HasScales(shape.dtype)) {
      ks.reset(new float[rows_new]);
      vs.reset(new float[rows_new]);
    }
    for (uint64_t i = 0; i < rows_old / static_cast<uint64_t>(n); ++i) {  // each (sequence, head)
      const uint64_t src = i * static_cast<uint64_t>(n), dst = i * static_cast<uint64_t>(n + 1);
      std::memcpy(k.get() + dst * row, static_cast<const unsigned char*>(old.k) + src * row,
                  n * row);
      std::memcpy(v.get() + dst * row, static_cast<const unsigned char*>(old.v) + src * row,
                  n * row);
      float scale = 1;
      QuantizeRow(k_new.data(), d, shape.dtype, k.get() + (dst + n) * row, &scale);
      QuantizeRow(k_new.data(), d, shape.dtype, v.get() + (dst + n) * row, &scale);
      if (ks) {
        std::memcpy(ks.get() + dst, old.k_scale + src, n * sizeof(float));
        std::memcpy(vs.get() + dst, old.v_scale + src, n * sizeof(float));
        ks[dst + n] = vs[dst + n] = scale;
      }
    }
    DecodeArgs args;
    args.shape = ds;
    const std::vector<int64_t> lens(static_cast<size_t>(shape.batch), n + 1);
    args.seq_lens = lens.data();
    args.q = q.data();
    args.cache.dtype = shape.dtype;
    args.cache.layout.capacity = n + 1;
    args.cache.k = k.get();
    args.cache.v = v.get();
    args.cache.k_scale = ks.get();
    args.cache.v_scale = vs.get();
    args.out = out.data();
    if (options.kernel) {
      options.kernel(args);
    } else {
      DecodeAttentionCpu(args, options.cpu);
    }
    const double dt = Now() - t0;
    if (r > 0) samples.push_back(dt);  // the first pass warms up the allocator
  }
  return Median(samples);
}

double TimeInCache(const BenchShape& shape, const TimingOptions& options) {
  InCacheProbe probe(shape, options);
  std::vector<double> samples;
  for (int r = 0; r < std::max(1, options.repeats); ++r) samples.push_back(probe.Sample());
  return Median(samples);
}

BenchShape ParseBenchShape(std::string_view spec) {
  BenchShape s;
  std::string_view rest = spec;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) Fail("--shape {}: expected key=value, got '{}'", spec, item);
    const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "dtype") {
      s.dtype = ParseKvDtype(value);
      continue;
    }
    const int64_t v = static_cast<int64_t>(ParseTokens(value, fmt::format("--shape {}", key)));
    if (key == "context") {
      s.context = v;
    } else if (key == "batch") {
      s.batch = v;
    } else if (key == "kv_heads") {
      s.kv_heads = v;
    } else if (key == "group") {
      s.group = v;
    } else if (key == "head_dim") {
      s.head_dim = v;
    } else if (key == "block") {
      s.block_tokens = v;
    } else {
      Fail(
          "--shape: unknown key '{}' (known: dtype, context, batch, kv_heads, group, head_dim, "
          "block)",
          key);
    }
  }
  if (s.context < 1 || s.batch < 1 || s.kv_heads < 1 || s.group < 1 || s.head_dim < 1) {
    Fail("--shape {}: context, batch, kv_heads, group and head_dim must be >= 1", spec);
  }
  // Bounds before any work (docs/reliability.md): a shape past them would
  // allocate more than any machine holds, found only after the minutes of
  // measuring the ceilings that come first.
  struct Bound {
    const char* key;
    int64_t value, max;
  };
  for (const Bound& b :
       {Bound{"context", s.context, int64_t{1} << 24}, Bound{"batch", s.batch, 4096},
        Bound{"kv_heads", s.kv_heads, 1024}, Bound{"group", s.group, 256},
        Bound{"head_dim", s.head_dim, 1024}, Bound{"block", s.block_tokens, int64_t{1} << 20}}) {
    if (b.value < 0 || b.value > b.max) {
      Fail("--shape {}: {} must be at most {}", spec, b.key, b.max);
    }
  }
  return s;
}

ShapeResult RunShape(const BenchShape& shape, const Ceilings& ceilings,
                     const TimingOptions& options) {
  ShapeResult r;
  r.shape = shape;
  r.timing = TimeDecodeStep(shape, options);
  const double bytes = static_cast<double>(r.timing.bytes_read);
  r.gbps = bytes / r.timing.seconds / 1e9;
  r.gflops = static_cast<double>(r.timing.flops) / r.timing.seconds / 1e9;
  r.flop_per_byte = static_cast<double>(r.timing.flops) / bytes;
  r.compute_ceiling_gbps = ceilings.fma_flops / r.flop_per_byte / 1e9;
  r.read_ceiling_gbps = ceilings.read_gbps;
  r.fraction_of_read_ceiling = r.gbps / ceilings.read_gbps;
  const std::vector<double>& beside = r.timing.beside;
  if (!beside.empty() && beside.size() == r.timing.samples.size()) {
    // Pairs: each step against the ceiling read just before it, so a drift
    // of the shared machine between steps moves both sides of each ratio.
    std::vector<double> ratios;
    for (size_t i = 0; i < beside.size(); ++i) {
      ratios.push_back(bytes / r.timing.samples[i] / 1e9 / beside[i]);
    }
    r.read_ceiling_gbps = Median(beside);
    r.fraction_of_read_ceiling = Median(ratios);
  }
  r.compute_bound = r.compute_ceiling_gbps < r.read_ceiling_gbps;
  r.ceiling_gbps = std::min(r.read_ceiling_gbps, r.compute_ceiling_gbps);
  r.fraction_of_ceiling =
      r.compute_bound ? r.gbps / r.compute_ceiling_gbps : r.fraction_of_read_ceiling;
  if (!r.timing.in_cache_gbps.empty()) {
    const std::vector<double>& in_cache = r.timing.in_cache_gbps;
    r.in_cache_gbps = Median(in_cache);
    r.in_cache_fraction = r.in_cache_gbps / r.read_ceiling_gbps;
    if (beside.size() == in_cache.size()) {
      std::vector<double> ratios;
      for (size_t i = 0; i < in_cache.size(); ++i) ratios.push_back(in_cache[i] / beside[i]);
      r.in_cache_fraction = Median(ratios);
    }
  }
  return r;
}

std::vector<BenchShape> BenchSweep(bool quick) {
  std::vector<BenchShape> s;
  auto add = [&](int64_t context, int64_t batch, int64_t kvh, int64_t group, int64_t d, KvDtype t,
                 int64_t block = 0) {
    s.push_back({context, batch, kvh, group, d, t, block});
  };
  // The bandwidth curve: fp16, 8 KV heads x 128, group 1 (4 KiB per token).
  const std::vector<int64_t> curve =
      quick ? std::vector<int64_t>{1024, 8192, 65536}
            : std::vector<int64_t>{256, 1024, 4096, 16384, 65536, 131072};
  for (int64_t n : curve) add(n, 1, 8, 1, 128, KvDtype::kFp16);
  // The same curve at GQA groups 4 and 8 (at 64K below), so a profile
  // predicts a Llama-3-style model's attention at its own group.
  for (int64_t n : quick ? std::vector<int64_t>{8192} : std::vector<int64_t>{1024, 8192}) {
    add(n, 1, 8, 4, 128, KvDtype::kFp16);
    add(n, 1, 8, 8, 128, KvDtype::kFp16);
  }
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
  return s.dtype == KvDtype::kFp16 && s.batch == 1 && s.kv_heads == 8 && s.head_dim == 128 &&
         s.block_tokens == 0;
}

}  // namespace kvplan::kernels
