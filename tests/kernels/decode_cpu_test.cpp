// The CPU decode kernel against the float64 reference: random shapes, every
// dtype, both layouts, both SIMD paths, split-K across odd thread counts.
// Data is random with a fixed seed (never zeros), scales non-trivial.
#include "kernels/cpu/decode_cpu.h"

#include <doctest/doctest.h>
#include <xmmintrin.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "kernels/decode.h"
#include "kernels/fp_convert.h"
#include "kernels/kv_cache.h"
#include "kernels/reference.h"
#include "util/error.h"

using namespace kvplan::kernels;

namespace {

const KvDtype kAllDtypes[] = {KvDtype::kFp32, KvDtype::kFp16, KvDtype::kBf16, KvDtype::kInt8,
                              KvDtype::kFp8E4M3};

std::vector<SimdPath> Paths() {
  std::vector<SimdPath> p = {SimdPath::kScalar};
  if (CpuHasAvx2()) p.push_back(SimdPath::kAvx2);
  if (CpuHasAvx512()) p.push_back(SimdPath::kAvx512);
  return p;
}

struct Case {
  DecodeShape shape;
  std::vector<int64_t> lens;
  KvDtype dtype = KvDtype::kFp16;
  bool paged = false;
  int64_t block_tokens = 16;
  float q_gain = 1.0f;  // > 1 makes the softmax peaky
};

// Builds the cache by appending tokens one at a time (the O(1) path a server
// takes), values ~ N(0, 1) with a few heads scaled up so per-head scales differ.
KvCache Build(const Case& c, std::mt19937& rng) {
  const DecodeShape& s = c.shape;
  int64_t max_len = 1;
  for (int64_t n : c.lens) max_len = std::max(max_len, n);
  KvCache cache = c.paged
                      ? KvCache::Paged(s.batch, s.kv_heads, s.head_dim, c.block_tokens,
                                       s.batch * ((max_len + c.block_tokens - 1) / c.block_tokens),
                                       max_len, c.dtype, /*shuffle_seed=*/rng())
                      : KvCache::Contiguous(s.batch, s.kv_heads, s.head_dim, max_len + 3, c.dtype);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> k(static_cast<size_t>(s.kv_heads * s.head_dim)), v(k.size());
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t t = 0; t < c.lens[b]; ++t) {
      for (size_t i = 0; i < k.size(); ++i) {
        const float gain = 1.0f + static_cast<float>((i / s.head_dim + t) % 4);
        k[i] = nd(rng) * gain;
        v[i] = nd(rng) * gain + 0.25f;
      }
      cache.Append(b, k.data(), v.data());
    }
  }
  return cache;
}

// One step over `cache` at its current lengths; q and out hold batch x
// q_heads x head_dim floats.
DecodeArgs StepArgs(const KvCache& cache, const DecodeShape& shape, const float* q, float* out) {
  DecodeArgs a;
  a.shape = shape;
  a.seq_lens = cache.Lengths().data();
  a.q = q;
  a.cache = cache.View();
  a.out = out;
  return a;
}

// The SIMD paths count fp8 subnormal codes as 0 (tile_avx512.cpp, Widen).
bool FlushesFp8Subnormals(SimdPath p, KvDtype dt) {
  return p != SimdPath::kScalar && dt == KvDtype::kFp8E4M3;
}

// Sets every fp8 subnormal code (exponent 0, mantissa not) in the rows the
// step reads to 0: the cache the SIMD paths compute with.
void ZeroSubnormalCodes(const DecodeArgs& a) {
  const DecodeShape& s = a.shape;
  for (const void* base : {a.cache.k, a.cache.v}) {
    auto* bytes = static_cast<uint8_t*>(const_cast<void*>(base));
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t h = 0; h < s.kv_heads; ++h) {
        for (int64_t t = 0; t < a.seq_lens[b]; ++t) {
          uint8_t* row = bytes + a.cache.layout.Row(b, h, t, s.kv_heads) * s.head_dim;
          for (int64_t i = 0; i < s.head_dim; ++i) {
            if ((row[i] & 0x78) == 0) row[i] = 0;
          }
        }
      }
    }
  }
}

// Runs the kernel on `c` with `opt` and returns the worst tolerance ratio
// against the reference under `tol`.
struct Outcome {
  double dtype_ratio;  // vs ToleranceFor(dtype): the shared contract
  double fp32_ratio;   // vs ToleranceFor(fp32): the CPU kernel dequantizes exactly
                       // (SIMD fp8: against the cache with subnormals zeroed)
  std::vector<float> out;
};

Outcome RunCase(const Case& c, const CpuDecodeOptions& opt, uint32_t seed) {
  std::mt19937 rng(seed);
  KvCache cache = Build(c, rng);
  const DecodeShape& s = c.shape;
  std::normal_distribution<float> nd(0.0f, c.q_gain);
  std::vector<float> q(static_cast<size_t>(s.batch * s.q_heads * s.head_dim));
  for (float& x : q) x = nd(rng);
  std::vector<float> out(q.size(), std::nanf(""));
  DecodeArgs args = StepArgs(cache, s, q.data(), out.data());
  DecodeAttentionCpu(args, opt);
  const std::vector<double> ref = DecodeAttentionReference(args);
  const Tolerance td = ToleranceFor(c.dtype), tf = ToleranceFor(KvDtype::kFp32);
  const double dtype_ratio = ToleranceRatio(out.data(), ref, td.abs_tol, td.rel_tol);
  if (FlushesFp8Subnormals(ResolveSimd(opt.simd, s.head_dim), c.dtype)) {
    ZeroSubnormalCodes(args);
    const std::vector<double> flushed = DecodeAttentionReference(args);
    return {dtype_ratio, ToleranceRatio(out.data(), flushed, tf.abs_tol, tf.rel_tol), out};
  }
  return {dtype_ratio, ToleranceRatio(out.data(), ref, tf.abs_tol, tf.rel_tol), out};
}

std::string Describe(const Case& c, const CpuDecodeOptions& o) {
  std::string lens;
  for (int64_t n : c.lens) lens += std::to_string(n) + " ";
  return "dtype " + std::string(KvDtypeName(c.dtype)) +
         (c.paged ? " paged/" + std::to_string(c.block_tokens) : " contiguous") + " batch " +
         std::to_string(c.shape.batch) + " qh " + std::to_string(c.shape.q_heads) + " kvh " +
         std::to_string(c.shape.kv_heads) + " d " + std::to_string(c.shape.head_dim) + " lens " +
         lens + "simd " + std::string(SimdName(o.simd)) + " threads " + std::to_string(o.threads);
}

void Expect(const Case& c, const CpuDecodeOptions& o, uint32_t seed) {
  const Outcome r = RunCase(c, o, seed);
  INFO(Describe(c, o), " ratios ", r.dtype_ratio, " ", r.fp32_ratio);
  CHECK(r.dtype_ratio <= 1.0);
  CHECK(r.fp32_ratio <= 1.0);
}

}  // namespace

TEST_CASE("reference: hand-checked values") {
  // One token: the output is that token's value, whatever the query.
  KvCache one = KvCache::Contiguous(1, 1, 4, 8, KvDtype::kFp32);
  const float k0[4] = {1, 2, 3, 4}, v0[4] = {0.5f, -1, 2, 8};
  one.Append(0, k0, v0);
  const float q[4] = {3, -1, 0.5f, 2};
  float out[4];
  DecodeArgs a = StepArgs(one, DecodeShape{1, 1, 1, 4}, q, out);
  std::vector<double> ref = DecodeAttentionReference(a);
  CHECK(ref == std::vector<double>{0.5, -1, 2, 8});
  // Two tokens: scores (q.k)/sqrt(4) = (3 - 2 + 1.5 + 8)/2 = 5.25 and 0; weights 1/(1+e^-4.75) and
  // the rest.
  const float k1[4] = {0, 0, 0, 0}, v1[4] = {1, 1, 1, 1};
  one.Append(0, k1, v1);
  ref = DecodeAttentionReference(a);
  const double w = 1.0 / (1.0 + std::exp(-5.25));
  CHECK(ref[0] == doctest::Approx(w * 0.5 + (1 - w)).epsilon(1e-12));
  CHECK(ref[3] == doctest::Approx(w * 8 + (1 - w)).epsilon(1e-12));
  for (SimdPath p : Paths()) {
    DecodeAttentionCpu(a, {p, 1});
    CHECK(out[3] == doctest::Approx(w * 8 + (1 - w)).epsilon(1e-6));
  }
}

TEST_CASE("cpu kernel: every dtype x head_dim x GQA ratio, both layouts and paths") {
  uint32_t seed = 1;
  for (KvDtype dt : kAllDtypes) {
    // 192: 128 + 64 p.V columns on AVX-512; 32: two 512-bit vectors a row;
    // 48 and 80: AVX-512 fp8 widens a pair of vectors, then a single one.
    for (int64_t d : {32, 48, 64, 80, 96, 128, 192, 256}) {
      // Every chunking: AVX2 11 = 4 + 4 + 2 + 1; AVX-512 11 = 8 + 2 + 1 and
      // 15 = 8 + 4 + 2 + 1 (eights, then fours), 16 = 8 + 8.
      for (int64_t group : {1, 2, 3, 4, 5, 6, 7, 8, 11, 15, 16}) {
        for (bool paged : {false, true}) {
          Case c;
          c.dtype = dt;
          c.paged = paged;
          c.block_tokens = d == 80 ? 13 : 16;  // 13: not a multiple of the vector width
          c.shape = {3, 2 * group, 2, d};
          c.lens = {1, 37 + group, 70};  // 1 token; lengths off every tile size
          c.q_gain = group % 2 ? 1.0f : 3.0f;
          for (SimdPath p : Paths()) Expect(c, {p, 3}, seed++);
        }
      }
    }
  }
}

TEST_CASE("cpu kernel: split-K across threads, long and uneven sequences") {
  uint32_t seed = 100;
  for (KvDtype dt : kAllDtypes) {
    for (int threads : {1, 2, 5, 8}) {
      Case c;
      c.dtype = dt;
      c.shape = {4, 8, 1, 128};    // MQA-like group of 8
      c.lens = {1000, 3, 517, 0};  // a zero-length sequence, too
      c.paged = threads % 2 == 0;
      c.block_tokens = 32;
      c.q_gain = 4.0f;
      for (SimdPath p : Paths()) Expect(c, {p, threads}, seed++);
    }
  }
  // Paged with several KV heads: a stream per sequence, every head of a block
  // before the next block, cut between threads at token-head counts that fall
  // inside a token (3 heads, 2-7 threads) and inside a block.
  for (int threads : {2, 3, 4, 7}) {
    Case c;
    c.dtype = kAllDtypes[static_cast<size_t>(threads) % 5];
    c.shape = {3, 6, 3, 64};
    c.lens = {301, 0, 45};
    c.paged = true;
    c.block_tokens = 16;
    c.q_gain = 3.0f;
    for (SimdPath p : Paths()) Expect(c, {p, threads}, seed++);
  }
  // The automatic thread count on a long single sequence.
  Case c;
  c.shape = {1, 4, 4, 64};
  c.lens = {4099};
  for (SimdPath p : Paths()) Expect(c, {p, 0}, seed++);
}

TEST_CASE("cpu kernel: chunk cuts, static for small steps, guided for long ones") {
  // Small: one chunk per thread, the static split.
  CHECK(ChunkCuts(100, 1, 1) == std::vector<int64_t>{0, 100});
  CHECK(ChunkCuts(10, 3, 1) == std::vector<int64_t>{0, 3, 6, 10});
  CHECK(ChunkCuts(79, 2, 10) == std::vector<int64_t>{0, 39, 79});  // 79 / 8 < 10
  CHECK(ChunkCuts(5, 8, 1) == std::vector<int64_t>{0, 0, 1, 1, 2, 3, 3, 4, 5});
  // Long: a quarter of what is left (2 threads), rounded up, down to the
  // smallest chunk; the last takes a remainder (13) rather than leave a
  // sliver (3).
  CHECK(ChunkCuts(80, 2, 10) == std::vector<int64_t>{0, 20, 35, 47, 57, 67, 80});
  // A 256 MiB fp16 step, 8 KV heads x 128 (K and V: 512 B per token-head,
  // 1 MiB chunks = 2048 token-heads): covers it, ascending, every chunk but the
  // last >= the smallest, about 20 of them, none more than a quarter.
  const int64_t total = int64_t{65536} * 8, min_chunk = 2048;
  for (int threads : {2, 3, 16}) {
    const std::vector<int64_t> cuts = ChunkCuts(total, threads, min_chunk);
    INFO("threads ", threads, " chunks ", cuts.size() - 1);
    CHECK(cuts.front() == 0);
    CHECK(cuts.back() == total);
    CHECK(cuts.size() - 1 > static_cast<size_t>(threads));
    CHECK(cuts.size() - 1 < static_cast<size_t>(threads) * 40);
    for (size_t i = 1; i < cuts.size(); ++i) {
      CHECK(cuts[i] - cuts[i - 1] >= min_chunk);
      CHECK(cuts[i] - cuts[i - 1] <= total / (2 * threads) + 1);
    }
  }
  // A huge smallest chunk never overflows into a negative comparison.
  CHECK(ChunkCuts(total, 4, int64_t{1} << 62) ==
        std::vector<int64_t>{0, total / 4, total / 2, 3 * total / 4, total});
}

TEST_CASE("cpu kernel: many chunks taken in turn, merged in token order, deterministic") {
  // chunk_bytes small enough that every case below is cut into many guided
  // chunks, at token-heads inside blocks and across sequences.
  uint32_t seed = 900;
  for (KvDtype dt : kAllDtypes) {
    for (int threads : {2, 3}) {
      Case c;
      c.dtype = dt;
      c.shape = {4, 8, 2, 64};
      c.lens = {1000, 3, 517, 0};
      c.paged = threads == 3;
      c.block_tokens = 16;
      // A flat softmax (every token weighs ~1/1000, so one lost or doubled
      // at a cut shows) and a peaky one.
      c.q_gain = threads == 2 ? 0.3f : 4.0f;
      CpuDecodeOptions o;
      o.threads = threads;
      o.chunk_bytes = 2 * 64 * 4 * 7;  // 7 fp32 token-heads, 28 int8
      for (SimdPath p : Paths()) {
        o.simd = p;
        Expect(c, o, seed++);
      }
    }
  }
  // The same step again and again (the cache rebuilt from the same seed):
  // bit-identical, whichever thread took which chunk.
  Case c;
  c.shape = {2, 12, 3, 128};
  c.lens = {2000, 777};
  c.paged = true;
  c.block_tokens = 32;
  c.q_gain = 2.0f;
  CpuDecodeOptions o;
  o.threads = 3;
  o.chunk_bytes = 4096;
  const Outcome first = RunCase(c, o, 5);
  CHECK(first.fp32_ratio <= 1.0);
  for (int i = 0; i < 5; ++i) CHECK(RunCase(c, o, 5).out == first.out);
}

TEST_CASE("cpu kernel: the far prefetch changes no result; auto is off on AMD, on elsewhere") {
  using Far = CpuDecodeOptions::FarPrefetch;
  CHECK(FarPrefetchOn(Far::kOn));
  CHECK_FALSE(FarPrefetchOn(Far::kOff));
  // Auto against the vendor /proc/cpuinfo names (not the kernel's own check).
  const std::string vendor = kvplan::test::CpuVendorId();
  CAPTURE(vendor);
  if (!vendor.empty()) CHECK(FarPrefetchOn(Far::kAuto) == (vendor != "AuthenticAMD"));
  // Runs long enough (16 KiB and more per head) for the far requests to be
  // made, contiguous and in paged blocks of 128 rows (whose later heads they
  // reach); the same bits either way, on every path, validated as above.
  uint32_t seed = 4000;
  for (KvDtype dt : {KvDtype::kFp32, KvDtype::kFp16, KvDtype::kInt8}) {
    for (bool paged : {false, true}) {
      Case c;
      c.dtype = dt;
      c.shape = {2, 8, 2, 128};
      c.lens = {1500, 700};
      c.paged = paged;
      c.block_tokens = 128;
      for (SimdPath p : Paths()) {
        CpuDecodeOptions on{p, 2};
        on.far_prefetch = Far::kOn;
        CpuDecodeOptions off = on;
        off.far_prefetch = Far::kOff;
        Expect(c, on, seed);
        CHECK(RunCase(c, on, seed).out == RunCase(c, off, seed).out);
        ++seed;
      }
    }
  }
}

TEST_CASE("cpu kernel: random shapes") {
  std::mt19937 rng(2024);
  auto pick = [&](std::vector<int64_t> v) { return v[rng() % v.size()]; };
  for (int i = 0; i < 60; ++i) {
    Case c;
    c.dtype = kAllDtypes[rng() % 5];
    const int64_t kvh = pick({1, 2, 3, 4});
    c.shape = {pick({1, 2, 5}), kvh * pick({1, 2, 3, 4, 5, 6, 7, 8}), kvh,
               pick({8, 24, 64, 80, 96, 128, 256, 20})};  // 20: scalar-only head size
    for (int64_t b = 0; b < c.shape.batch; ++b)
      c.lens.push_back(1 + static_cast<int64_t>(rng() % 300));
    c.paged = rng() % 2;
    c.block_tokens = pick({1, 7, 16, 64});
    c.q_gain = rng() % 2 ? 1.0f : 5.0f;
    for (SimdPath p : Paths()) Expect(c, {p, static_cast<int>(1 + rng() % 4)}, rng());
  }
}

TEST_CASE("cpu kernel: the SIMD paths agree with the scalar path") {
  if (!CpuHasAvx2()) {
    MESSAGE("skipped: this CPU has no AVX2 (the scalar path is tested above)");
    return;
  }
  if (!CpuHasAvx512())
    MESSAGE("the AVX-512 path is not compared: this CPU has no avx512f/avx512bw");
  for (SimdPath path : Paths()) {
    if (path == SimdPath::kScalar) continue;
    for (KvDtype dt : kAllDtypes) {
      for (int64_t group : {1, 4, 8}) {
        KvCache cache = KvCache::Contiguous(2, 2, 128, 600, dt);
        cache.FillRandom({555, 129}, 9);
        std::vector<float> q(static_cast<size_t>(2 * 2 * group * 128));
        std::mt19937 rng(3);
        std::normal_distribution<float> nd(0.0f, 2.0f);
        for (float& x : q) x = nd(rng);
        std::vector<float> o1(q.size()), o2(q.size());
        DecodeArgs a = StepArgs(cache, DecodeShape{2, 2 * group, 2, 128}, q.data(), o1.data());
        DecodeAttentionCpu(a, {SimdPath::kScalar, 2});
        a.out = o2.data();
        DecodeAttentionCpu(a, {path, 2});
        double worst = 0;
        for (size_t i = 0; i < o1.size(); ++i)
          worst = std::max(worst, std::fabs(double(o1[i]) - o2[i]));
        CAPTURE(KvDtypeName(dt));
        CAPTURE(SimdName(path));
        CAPTURE(group);
        CHECK(worst < 1e-5);
        CHECK(worst >= 0);
      }
    }
  }
}

TEST_CASE("KVPLAN_SIMD forces a path; bad values are errors") {
  ::setenv("KVPLAN_SIMD", "scalar", 1);
  CHECK(ResolveSimd(SimdPath::kAuto, 128) == SimdPath::kScalar);
  ::setenv("KVPLAN_SIMD", "sse9", 1);
  CHECK_THROWS_WITH_AS(ResolveSimd(SimdPath::kAuto, 128),
                       "unknown SIMD path 'sse9' (known: auto, scalar, avx2, avx512)",
                       kvplan::Error);
  ::unsetenv("KVPLAN_SIMD");
  const SimdPath widest = CpuHasAvx512() ? SimdPath::kAvx512
                          : CpuHasAvx2() ? SimdPath::kAvx2
                                         : SimdPath::kScalar;
  CHECK(ResolveSimd(SimdPath::kAuto, 128) == widest);
  CHECK(ResolveSimd(SimdPath::kScalar, 128) == SimdPath::kScalar);
  CHECK(ParseSimdPath("avx512") == SimdPath::kAvx512);
  CHECK(SimdName(SimdPath::kAvx512) == "avx512");
  if (CpuHasAvx2()) {
    CHECK(ResolveSimd(SimdPath::kAvx2, 20) == SimdPath::kScalar);
    // A head size AVX-512 cannot step through (24 % 16) takes AVX2.
    CHECK(ResolveSimd(SimdPath::kAuto, 24) == SimdPath::kAvx2);
  }
  if (CpuHasAvx512()) {
    CHECK(ResolveSimd(SimdPath::kAvx512, 80) == SimdPath::kAvx512);
    CHECK(ResolveSimd(SimdPath::kAvx512, 24) == SimdPath::kAvx2);
    CHECK(ResolveSimd(SimdPath::kAvx512, 20) == SimdPath::kScalar);
  } else {
    CHECK_THROWS_WITH_AS(ResolveSimd(SimdPath::kAvx512, 128),
                         "the AVX-512 path was requested but this CPU lacks avx512f or avx512bw "
                         "(or avx2, fma, f16c)",
                         kvplan::Error);
  }
}

TEST_CASE("KvCache: append writes in place, never reallocates; paged takes blocks at boundaries") {
  KvCache c = KvCache::Contiguous(2, 2, 8, 5, KvDtype::kInt8);
  const void* k_before = c.View().k;
  std::vector<float> row(16, 0.5f);
  for (int i = 0; i < 5; ++i) c.Append(1, row.data(), row.data());
  CHECK(c.View().k == k_before);
  CHECK(c.Lengths() == std::vector<int64_t>{0, 5});
  CHECK_THROWS_WITH_AS(c.Append(1, row.data(), row.data()),
                       "kv cache: sequence 1 is full (5 tokens)", kvplan::Error);
  CHECK(c.AllocatedBytes() == 2 * (2 * 2 * 5 * 8) + 2 * (2 * 2 * 5 * 4));

  KvCache p = KvCache::Paged(2, 1, 8, 4, 3, 100, KvDtype::kFp16);
  for (int i = 0; i < 5; ++i) p.Append(0, row.data(), row.data());  // blocks 0, 1
  for (int i = 0; i < 4; ++i) p.Append(1, row.data(), row.data());  // block 2
  CHECK_THROWS_WITH_AS(p.Append(1, row.data(), row.data()),
                       "kv cache: no free block left for sequence 1", kvplan::Error);
  const KvCacheView v = p.View();
  CHECK(v.layout.block_table[0] == 0);
  CHECK(v.layout.block_table[1] == 1);
  CHECK(v.layout.block_table[v.layout.max_blocks_per_seq] == 2);
  CHECK(v.layout.Row(0, 0, 4, 1) == 4);  // token 4 = block 1, slot 0
}

TEST_CASE("decode args: validation errors and hand-counted bytes and FLOPs") {
  const int64_t lens[3] = {10, 0, 7};
  const DecodeShape s{3, 32, 8, 128};
  CHECK(DecodeCacheBytes(s, lens, KvDtype::kFp16) == 17ull * 8 * 2 * 128 * 2);
  CHECK(DecodeCacheBytes(s, lens, KvDtype::kInt8) == 17ull * 8 * 2 * (128 + 4));
  CHECK(DecodeCacheBytes(s, lens, KvDtype::kFp32) == 17ull * 8 * 2 * 128 * 4);
  CHECK(DecodeFlops(s, lens) == 17ull * 32 * 4 * 128);

  KvCache c = KvCache::Contiguous(1, 2, 16, 4, KvDtype::kFp8E4M3);
  c.FillRandom({4}, 1);
  std::vector<float> q(3 * 16), out(q.size());
  DecodeArgs a = StepArgs(c, DecodeShape{1, 3, 2, 16}, q.data(), out.data());
  CHECK_THROWS_WITH_AS(DecodeAttentionCpu(a), "decode shape: kv_heads 2 does not divide q_heads 3",
                       kvplan::Error);
  a.shape.q_heads = 4;
  const int64_t too_long = 5;
  a.seq_lens = &too_long;
  CHECK_THROWS_WITH_AS(DecodeAttentionCpu(a), "decode args: seq_lens[0] = 5 is outside 0..4",
                       kvplan::Error);
  a.seq_lens = c.Lengths().data();
  a.cache.k_scale = nullptr;
  CHECK_THROWS_WITH_AS(DecodeAttentionCpu(a), "decode args: a fp8 cache needs k_scale and v_scale",
                       kvplan::Error);
  CHECK_THROWS_WITH_AS(ParseKvDtype("fp4"),
                       "unknown kernel cache dtype 'fp4' (known: fp32, fp16, bf16, int8, fp8)",
                       kvplan::Error);
}

TEST_CASE("FillRandom: deterministic, non-zero, independent of the layout") {
  for (KvDtype dt : kAllDtypes) {
    KvCache a = KvCache::Contiguous(2, 3, 32, 50, dt);
    KvCache b = KvCache::Paged(2, 3, 32, 8, 20, 50, dt, 77);
    a.FillRandom({50, 11}, 5);
    b.FillRandom({50, 11}, 5);
    const KvCacheView va = a.View(), vb = b.View();
    const int64_t es = static_cast<int64_t>(ElementBytes(dt));
    bool all_equal = true, any_zero = false;
    for (int64_t s = 0; s < 2; ++s) {
      for (int64_t h = 0; h < 3; ++h) {
        for (int64_t t = 0; t < a.Lengths()[s]; ++t) {
          const int64_t ra = va.layout.Row(s, h, t, 3), rb = vb.layout.Row(s, h, t, 3);
          for (int64_t i = 0; i < 32; ++i) {
            const float x = DecodeElement(static_cast<const char*>(va.v) + ra * 32 * es, i, dt);
            const float y = DecodeElement(static_cast<const char*>(vb.v) + rb * 32 * es, i, dt);
            all_equal = all_equal && x == y && !std::isnan(x);
          }
          if (HasScales(dt)) {
            all_equal = all_equal && va.k_scale[ra] == vb.k_scale[rb];
            any_zero = any_zero || va.k_scale[ra] <= 0;
          }
          if (!HasScales(dt)) {  // int8/fp8 codes may be 0; their scales may not
            any_zero = any_zero ||
                       DecodeElement(static_cast<const char*>(va.k) + ra * 32 * es, 0, dt) == 0.0f;
          }
        }
      }
    }
    CAPTURE(KvDtypeName(dt));
    CHECK(all_equal);
    CHECK_FALSE(any_zero);
  }
}

TEST_CASE("the SIMD fp8 paths leave the caller's MXCSR modes as they were") {
  // It turns denormals-are-zero and flush-to-zero on for the step (tile.h,
  // FlushDenormals); one thread runs the step on the calling thread, where
  // a mode left on would change the caller's arithmetic.
  KvCache c = KvCache::Contiguous(1, 1, 128, 40, KvDtype::kFp8E4M3);
  c.FillRandom({40}, 3);
  std::vector<float> q(128, 0.1f), out(128);
  DecodeArgs a = StepArgs(c, DecodeShape{1, 1, 1, 128}, q.data(), out.data());
  const unsigned before = _mm_getcsr();
  for (SimdPath path : Paths()) {
    for (unsigned preset : {0u, 0x8040u}) {
      CAPTURE(SimdName(path));
      CAPTURE(preset);
      _mm_setcsr(before | preset);
      DecodeAttentionCpu(a, {path, 1});
      CHECK(_mm_getcsr() == (before | preset));
      _mm_setcsr(before);
    }
  }
  CHECK((before & 0x8040u) == 0);  // the test process runs with neither mode
}

TEST_CASE("every int8 and fp8 code widens exactly on every path") {
  // One cached token: its softmax weight is exactly 1, so the output is the
  // V row times its scale, one fp32 rounding from the true product. The row
  // holds all 256 codes (fp8's two NaN codes replaced by 0), so every sign,
  // exponent and subnormal goes through each path's widening. The SIMD
  // paths count fp8 subnormals as exactly 0 (tile_avx512.cpp, Widen).
  for (KvDtype dt : {KvDtype::kInt8, KvDtype::kFp8E4M3}) {
    for (SimdPath path : Paths()) {
      CAPTURE(KvDtypeName(dt));
      CAPTURE(SimdName(path));
      KvCache c = KvCache::Contiguous(1, 1, 256, 1, dt);
      c.FillRandom({1}, 5);
      const KvCacheView view = c.View();
      auto* v = static_cast<uint8_t*>(const_cast<void*>(view.v));
      for (int code = 0; code < 256; ++code) {
        const bool nan = dt == KvDtype::kFp8E4M3 && (code & 0x7F) == 0x7F;
        v[code] = nan ? 0 : static_cast<uint8_t>(code);
      }
      std::vector<float> q(256, 0.01f), out(256);
      DecodeArgs a = StepArgs(c, DecodeShape{1, 1, 1, 256}, q.data(), out.data());
      DecodeAttentionCpu(a, {path, 1});
      for (int code = 0; code < 256; ++code) {
        CAPTURE(code);
        const double value = dt == KvDtype::kInt8
                                 ? static_cast<double>(static_cast<int8_t>(v[code]))
                                 : static_cast<double>(Fp8E4M3ToFloat(v[code]));
        const bool subnormal = (code & 0x78) == 0 && (code & 0x07) != 0;
        const double want = FlushesFp8Subnormals(path, dt) && subnormal
                                ? 0.0
                                : value * static_cast<double>(view.v_scale[0]);
        CHECK(std::fabs(static_cast<double>(out[code]) - want) <= 1e-6 * std::fabs(want) + 1e-30);
      }
    }
  }
}
