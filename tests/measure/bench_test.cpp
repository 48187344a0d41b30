// The bench harness and `kvplan bench`: hand-counted bytes, validation
// before timing (a wrong kernel is refused), the JSON keys, and the saved
// profile reading back. Nothing here asserts a speed.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include "cli_runner.h"
#include "kernels/cpu/decode_cpu.h"
#include "measure/ceilings.h"
#include "measure/harness.h"
#include "spec/hardware_spec.h"
#include "util/error.h"

using namespace kvplan;
using namespace kvplan::kernels;

TEST_CASE("bench: median, shape bytes and FLOPs by hand") {
  CHECK(Median({3, 1, 2}) == 2);
  CHECK(Median({4, 1, 3, 2}) == 2.5);
  CHECK(Median({}) == 0);
  BenchShape s{65536, 1, 8, 1, 128, KvDtype::kFp16, 0};
  CHECK(s.CacheBytes() == 256ull << 20);  // 65,536 x 8 x 128 x 2 (K, V) x 2 B
  CHECK(s.Flops() == 65536ull * 8 * 128 * 4);
  BenchShape i8{131072, 2, 8, 4, 128, KvDtype::kInt8, 16};
  CHECK(i8.CacheBytes() == 2ull * 131072 * 8 * 2 * (128 + 4));
  CHECK(i8.Label() == "int8 ctx 131,072 b2 kvh8 g4 d128 paged16");
}

TEST_CASE("bench: the sweeps cover every dtype, group 1..8 and a >= 256 MiB curve") {
  for (bool quick : {true, false}) {
    const std::vector<BenchShape> sweep = BenchSweep(quick);
    for (KvDtype t :
         {KvDtype::kFp32, KvDtype::kFp16, KvDtype::kBf16, KvDtype::kInt8, KvDtype::kFp8E4M3}) {
      bool found = false;
      for (const BenchShape& s : sweep) found = found || s.dtype == t;
      CHECK(found);
    }
    // The curve: at each group (1, 4, 8), at least two distinct sizes; group
    // 1 reaches 256 MiB. A profile is keyed by (group, bytes), so no two
    // curve shapes may share both.
    std::map<int64_t, std::set<uint64_t>> curve;
    int groups = 0;
    for (const BenchShape& s : sweep) {
      if (s.group == 8) ++groups;
      if (!IsCurveShape(s)) continue;
      CHECK(curve[s.group].insert(s.CacheBytes()).second);
    }
    CHECK(groups >= 1);
    for (int64_t g : {1, 4, 8}) CHECK(curve[g].size() >= 2);
    CHECK(*curve[1].rbegin() >= 256ull << 20);
  }
  CHECK(BenchSweep(true).size() < BenchSweep(false).size());
}

TEST_CASE("bench: TimeDecodeStep validates, then times the requested repeats") {
  for (int64_t block : {0, 16}) {
    BenchShape s{3000, 3, 2, 4, 64, KvDtype::kBf16, block};
    TimingOptions o;
    o.repeats = 3;
    o.flush = false;  // not under test here, and a 512 MiB flush buffer is slow to build
    o.cpu.threads = 2;
    const StepTiming t = TimeDecodeStep(s, o);
    CHECK(t.samples.size() == 3);
    CHECK(t.seconds > 0);
    CHECK(t.bytes_read == 3ull * 3000 * 2 * 2 * 64 * 2);
    CHECK(t.flops == 3ull * 3000 * 8 * 4 * 64);
    CHECK(t.validation_ratio <= 1.0);
  }
}

TEST_CASE("bench: the in-cache timing, a cut of the shape that stays in the CPU's caches") {
  // About 1 MiB of cache per thread: fp16, 8 KV heads x 128 is 4 KiB a token.
  const BenchShape s{65536, 1, 8, 1, 128, KvDtype::kFp16, 0};
  CHECK(InCacheContext(s, 2) == 512);
  CHECK(InCacheContext(s, 1) == 256);
  CHECK(InCacheContext(s, 0) == 256);  // as one thread
  CHECK(InCacheContext({100, 1, 8, 1, 128, KvDtype::kFp16, 0}, 2) ==
        100);  // never longer than the shape
  // 4 MiB a token: at least 16 tokens, or one whole block when paged.
  CHECK(InCacheContext({4096, 1024, 8, 1, 128, KvDtype::kFp16, 0}, 2) == 16);
  CHECK(InCacheContext({4096, 1024, 8, 1, 128, KvDtype::kFp16, 32}, 2) == 32);
  CHECK(InCacheContext({20, 1024, 8, 1, 128, KvDtype::kFp16, 32}, 2) == 20);

  // Beside each timed step, one in-cache sample on the cut cache, run by the
  // same kernel (counted here) as many times as read about 64 MiB.
  BenchShape small{3000, 1, 2, 4, 64, KvDtype::kFp16, 0};  // 1.5 MiB: not cut at 16 threads
  TimingOptions o;
  o.repeats = 3;
  o.flush = false;
  o.cpu.threads = 16;
  o.in_cache = true;
  int64_t calls = 0;
  o.kernel = [&](const DecodeArgs& a) {
    ++calls;
    DecodeAttentionCpu(a, o.cpu);
  };
  const StepTiming t = TimeDecodeStep(small, o);
  REQUIRE(t.in_cache_gbps.size() == 3);
  for (double g : t.in_cache_gbps) CHECK(g > 0);
  const int64_t per_sample = (int64_t{64} << 20) / static_cast<int64_t>(small.CacheBytes());  // 42
  // validation, warm-up, 2 to warm the cut cache, then per repeat the step and a sample
  CHECK(calls == 1 + 1 + 2 + 3 * (1 + per_sample));
  o.in_cache = false;
  calls = 0;
  CHECK(TimeDecodeStep(small, o).in_cache_gbps.empty());
  CHECK(calls == 1 + 1 + 3);
  CHECK(TimeInCache(small, o) > 0);
}

TEST_CASE("bench: a wrong kernel is refused before it is timed") {
  BenchShape s{500, 1, 2, 2, 64, KvDtype::kFp16, 0};
  TimingOptions o;
  int calls = 0;
  o.kernel = [&](const DecodeArgs& a) {
    ++calls;
    DecodeAttentionCpu(a);
    a.out[5] += 0.01f;  // one element off by 1%
  };
  CHECK_THROWS_WITH_AS(TimeDecodeStep(s, o),
                       doctest::Contains("kernel output differs from the float64 reference on fp16 "
                                         "ctx 500 b1 kvh2 g2 d64"),
                       kvplan::Error);
  CHECK(calls == 1);  // validation only: never timed
}

TEST_CASE("bench: every read loop sums exactly; the fastest is one this CPU runs, chosen once") {
  // 64 MiB plus 13 words: a tail no loop's vector step covers.
  const uint64_t words = (uint64_t{64} << 20) / 8 + 13;
  std::vector<uint64_t> w(words);
  uint64_t expected = 0;
  for (uint64_t i = 0; i < words; ++i) expected += (w[i] = i * 0x9E3779B97F4A7C15ull);
  const std::vector<ReadLoop> loops = SupportedReadLoops();
  REQUIRE(!loops.empty());
  CHECK(loops.front() == ReadLoop::kSse2);
  CHECK((std::find(loops.begin(), loops.end(), ReadLoop::kAvx512) != loops.end()) ==
        CpuHasAvx512());
  CHECK((std::find(loops.begin(), loops.end(), ReadLoop::kAvx2Prefetch) != loops.end()) ==
        CpuHasAvx2());
  for (ReadLoop loop : loops) {
    CAPTURE(ReadLoopName(loop));
    CHECK(SumWords(loop, w.data(), words) == expected);
    CHECK(SumWords(loop, w.data() + 1, 40) ==
          std::accumulate(w.begin() + 1, w.begin() + 41, uint64_t{0}));
  }
  const ReadLoop fastest = FastestReadLoop(2);
  CHECK(std::find(loops.begin(), loops.end(), fastest) != loops.end());
  CHECK(FastestReadLoop(2) == fastest);  // remembered, not measured again
  CHECK(ReadCeilingMeter(1 << 20, 2).loop() == fastest);
  CHECK(ReadLoopName(ReadLoop::kAvx512Prefetch) == "avx512+prefetch");
}

TEST_CASE("kvplan bench: json keys, a profile that reads back, --force") {
  const std::string dir = test::TempDir();
  const std::string args = "bench --quick --max-cache 4MiB --repeats 1 --threads 2";
  test::CliResult r = test::RunKvplan(args + " --format json --save prof.yaml", dir);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"read_ceiling_gbps\": ") != std::string::npos);
  {
    // The SIMD paths' far prefetch: off on AMD CPUs, on elsewhere; never
    // on the scalar path, which has none.
    const bool simd =
        kernels::ResolveSimd(kernels::SimdPath::kAuto, 128) != kernels::SimdPath::kScalar;
    const bool far =
        simd && test::CpuVendorId() != "AuthenticAMD";  // /proc/cpuinfo's, not kvplan's
    CHECK(r.out.find(std::string("\"far_prefetch\": ") + (far ? "true" : "false")) !=
          std::string::npos);
    test::CliResult t =
        test::RunKvplan("bench --quick --max-cache 4MiB --repeats 1 --threads 1", dir);
    REQUIRE(t.exit_code == 0);
    CHECK(t.out.find(!simd ? " path)\n"
                     : far ? ", far prefetch on)\n"
                           : ", far prefetch off on AMD)\n") != std::string::npos);
  }
  {
    // The loop that process chose (measured there, so not necessarily this one's).
    const std::string key = "\"read_loop\": \"";
    const size_t at = r.out.find(key);
    REQUIRE(at != std::string::npos);
    const std::string name =
        r.out.substr(at + key.size(), r.out.find('"', at + key.size()) - at - key.size());
    const std::vector<ReadLoop> loops = SupportedReadLoops();
    CAPTURE(name);
    CHECK(std::any_of(loops.begin(), loops.end(),
                      [&](ReadLoop l) { return ReadLoopName(l) == name; }));
  }
  CHECK(r.out.find("\"results\": [") != std::string::npos);
  // --max-cache 4MiB: no room for the noise floor's 256 MiB step.
  CHECK(r.out.find("\"noise_floor_fraction\": null") != std::string::npos);
  CHECK(r.out.find("\"bytes_read\": 4194304,") != std::string::npos);  // 1,024 x 8 x 128 x 2 x 2 B
  CHECK(r.out.find("\"gbps\": ") != std::string::npos);
  CHECK(r.out.find("\"fraction_of_ceiling\": ") != std::string::npos);
  CHECK(r.out.find("\"bound\": \"bandwidth\"") != std::string::npos);
  CHECK(r.out.find("\"in_cache_gbps\": ") != std::string::npos);
  CHECK(r.out.find("\"in_cache_fraction_of_read_ceiling\": ") != std::string::npos);
  CHECK(r.out.find("\"kernel_limited\": ") != std::string::npos);
  // The ceiling measured beside the shape, and the run's median of two
  // measurements (before the sweep, beside the one shape).
  CHECK(r.out.find("\"results\": [\n    {") != std::string::npos);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') > 10);
  CHECK(r.out.find("\"fraction_of_read_ceiling\": ") < r.out.rfind("\"read_ceiling_gbps\": "));
  CHECK(r.err.find("[1/1] fp16 ctx 1,024 b1 kvh8 g1 d128") != std::string::npos);  // progress

  const HardwareSpec h = ParseHardwareYaml(test::ReadFile(dir + "/prof.yaml"), "prof.yaml");
  CHECK(h.name == "prof");
  REQUIRE(h.measured.has_value());
  CHECK(h.measured->device == "cpu");
  CHECK(h.measured->threads == 2);  // --threads 2
  CHECK(h.measured->read_ceiling_gbps > 0);
  REQUIRE(h.measured->curve.size() == 1);
  CHECK(h.measured->curve[0].bytes == 4194304);
  CHECK(h.measured->curve[0].gbps > 0);
  // The point is stated at the run's median ceiling: the shape's median
  // ratio to the ceiling beside its steps, times the run's ceiling.
  const auto first_number = [&](const std::string& key) {
    const size_t at = r.out.find("\"" + key + "\": ");
    REQUIRE(at != std::string::npos);
    return std::stod(r.out.substr(at + key.size() + 4));
  };
  const double fraction = first_number("fraction_of_read_ceiling");
  const double run_ceiling = first_number("read_ceiling_gbps");  // the run's, printed first
  CHECK(h.measured->read_ceiling_gbps == doctest::Approx(run_ceiling).epsilon(1e-6));
  CHECK(h.measured->curve[0].gbps == doctest::Approx(fraction * run_ceiling).epsilon(1e-6));
  CHECK(h.PeakFlops("fp32") > 0);

  r = test::RunKvplan(args + " --save prof.yaml", dir);
  CHECK(r.exit_code == 2);
  CHECK(r.err == "kvplan: error: prof.yaml: file exists (use --force to overwrite)\n");
  r = test::RunKvplan(args + " --save prof.yaml --force --hardware h100-sxm --format csv", dir);
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("shape,bytes_read,seconds,gbps,read_ceiling_gbps,fraction_of_read_ceiling,"
                    "bound,fraction_of_ceiling,gflops,in_cache_gbps,fraction_of_datasheet\n",
                    0) == 0);
  const HardwareSpec again = ParseHardwareYaml(test::ReadFile(dir + "/prof.yaml"), "prof.yaml");
  CHECK(again.memory_bandwidth_gbps == 3350);  // the datasheet figure of --hardware is kept
  CHECK(again.measured.has_value());
}

TEST_CASE("kvplan bench: the noise floor, the ceiling loop timed as a step") {
  // Without a small --max-cache the run times the read loop itself over
  // 256 MiB as a step and states it against the ceiling beside it: near
  // 100 % (90-110 % on the build machine); loose bounds, as it is a timing
  // (0.29 once while three compilers shared the two cores).
  const std::string dir = test::TempDir();
  test::CliResult r =
      test::RunKvplan("bench --quick --repeats 1 --shape dtype=fp16,context=1K --format json", dir);
  REQUIRE(r.exit_code == 0);
  const std::string key = "\"noise_floor_fraction\": ";
  const size_t at = r.out.find(key);
  REQUIRE(at != std::string::npos);
  const double floor = std::stod(r.out.substr(at + key.size()));
  CHECK(floor > 0.1);
  CHECK(floor < 10.0);
  r = test::RunKvplan("bench --quick --repeats 1 --shape dtype=fp16,context=1K", dir);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\nnoise floor   ") != std::string::npos);
  CHECK(r.err.find("measuring the noise floor") != std::string::npos);  // progress
}

TEST_CASE("kvplan bench: bad input is one error line") {
  const std::string dir = test::TempDir();
  test::CliResult r = test::RunKvplan("bench --max-cache 1KiB", dir);
  CHECK(r.exit_code == 2);
  CHECK(r.err == "kvplan: error: --max-cache 1KiB: no shape of the sweep is that small\n");
  r = test::RunKvplan("bench --device tpu", dir);  // --device cuda: tests/kernels/cuda_test.cpp
  CHECK(r.exit_code == 2);
  CHECK(r.err == "kvplan: error: --device tpu: expected cpu or cuda\n");
}

TEST_CASE("bench: the FMA-peak loops run independent chains (distinct starts, none merged)") {
  // From equal starting values GCC proved the chains equal and kept one
  // (until 2026-12-01 the peak read 1.25-1.5x too high). After one
  // iteration the sink holds sum_j (start_j * m + c) (times 16 lanes for
  // AVX-512), starts 0.10, 0.11, ...: equal starts would give another sum.
  const auto expect = [](int chains, int lanes) {
    double s = 0;
    for (int j = 0; j < chains; ++j) s += (0.10 + 0.01 * j) * 0.9999999 + 1e-7;
    return s * lanes;
  };
  if (CpuHasAvx2()) {
    float sink = 0;
    CHECK(detail::FmaLoopAvx2(1, &sink) == 10 * 8 * 2);
    CHECK(sink == doctest::Approx(expect(10, 1)).epsilon(1e-5));  // lane 0 only
  }
  if (CpuHasAvx512()) {
    float sink = 0;
    CHECK(detail::FmaLoopAvx512(1, &sink) == 12 * 16 * 2);
    CHECK(sink == doctest::Approx(expect(12, 16)).epsilon(1e-5));
  }
}
