// The CUDA decode kernel. Host-side arithmetic (split plan, peak bandwidth,
// the kernel's row index, shared-memory sizes) is tested everywhere; the
// test suite "gpu" runs the kernel against the float64 reference and skips,
// printing "SKIPPED: no CUDA device: ...", where there is no GPU or no CUDA
// build (ctest entry kvplan_gpu_tests, label gpu).
#include <doctest/doctest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "kernels/cuda/decode_plan.h"
#include "kernels/decode.h"
#include "kernels/kv_cache.h"

#if defined(KVPLAN_HAVE_CUDA)
#include "measure/cuda_bench.h"
#include "util/error.h"
#endif

using namespace kvplan::kernels;
using namespace kvplan::kernels::cuda;

TEST_CASE("cuda plan: DRAM peak from the memory clock and bus width attributes") {
  // A100 40GB: 1215 MHz x 5120 bits = 1555.2 GB/s, its datasheet figure.
  CHECK(PeakBandwidthGBps(1215000, 5120) == doctest::Approx(1555.2).epsilon(1e-12));
  // H100 SXM5: 2619 MHz x 5120 bits = 3352.32 GB/s (datasheet 3.35 TB/s).
  CHECK(PeakBandwidthGBps(2619000, 5120) == doctest::Approx(3352.32).epsilon(1e-12));
  // H200: 3201 MHz x 6144 bits = 4916.736 GB/s (datasheet 4.8 TB/s).
  CHECK(PeakBandwidthGBps(3201000, 6144) == doctest::Approx(4916.736).epsilon(1e-12));
  CHECK(PeakBandwidthGBps(0, 6144) == 0.0);
}

TEST_CASE("cuda plan: split-KV sizes for the sweep's shapes on 132 SMs x 2 blocks") {
  // batch 1 x 32k, 8 KV heads: 262,144 head-tokens over 264 slots -> 993 ->
  // 1024-token splits, 32 per head, 256 blocks: one wave.
  SplitPlan p = ChooseSplits({32768}, 8, 132, 2);
  CHECK(p.chunk_tokens == 1024);
  CHECK(p.max_splits == 32);
  CHECK(p.blocks == 256);
  // batch 64 x 1k: the batch alone fills the GPU; one split, no merge.
  p = ChooseSplits(std::vector<int64_t>(64, 1024), 8, 132, 2);
  CHECK(p.chunk_tokens == 1024);
  CHECK(p.max_splits == 1);
  CHECK(p.blocks == 512);
  // batch 1 x 4k: ceil(32768 / 264) = 125 -> 128-token splits.
  p = ChooseSplits({4096}, 8, 132, 2);
  CHECK(p.chunk_tokens == 128);
  CHECK(p.max_splits == 32);
  CHECK(p.blocks == 256);
  // Ragged batch with an empty sequence: the longest caps the chunk.
  p = ChooseSplits({0, 1, 100}, 1, 1, 1);
  CHECK(p.chunk_tokens == 128);
  CHECK(p.max_splits == 1);
  CHECK(p.blocks == 2);
  // All empty: still one (zero-writing) split.
  p = ChooseSplits({0, 0}, 4, 132, 2);
  CHECK(p.max_splits == 1);
  CHECK(p.blocks == 0);
}

TEST_CASE("cuda plan: every split plan covers each sequence and stays near one wave") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    const int64_t batch = 1 + static_cast<int64_t>(rng() % 70);
    std::vector<int64_t> lens(static_cast<size_t>(batch));
    const int64_t scale = int64_t{1} << (rng() % 18);
    for (int64_t& n : lens) n = static_cast<int64_t>(rng() % static_cast<uint64_t>(scale + 1));
    const int64_t head_blocks = 1 + static_cast<int64_t>(rng() % 64);
    const int sms = 1 + static_cast<int>(rng() % 160);
    const int per_sm = 1 + static_cast<int>(rng() % 4);
    const SplitPlan p = ChooseSplits(lens, head_blocks, sms, per_sm);
    REQUIRE(p.chunk_tokens % kSplitGranule == 0);
    REQUIRE(p.chunk_tokens >= kSplitGranule);
    int64_t blocks = 0;
    int64_t most = 0;
    for (int64_t n : lens) {
      const int64_t splits = (n + p.chunk_tokens - 1) / p.chunk_tokens;
      REQUIRE(splits * p.chunk_tokens >= n);                       // covers the sequence
      if (splits > 0) REQUIRE((splits - 1) * p.chunk_tokens < n);  // no empty split
      blocks += splits * head_blocks;
      most = std::max(most, splits);
    }
    REQUIRE(p.blocks == blocks);
    REQUIRE(p.max_splits == std::max<int64_t>(most, 1));
    // At most one wave plus one partial split per (sequence, head block).
    REQUIRE(p.blocks <= int64_t{sms} * per_sm + batch * head_blocks);
  }
}

TEST_CASE("cuda plan: query heads per block and blocks per KV head") {
  CHECK(GroupPerBlock(1) == 1);
  CHECK(GroupPerBlock(2) == 2);
  CHECK(GroupPerBlock(3) == 4);
  CHECK(GroupPerBlock(8) == 8);
  CHECK(GroupPerBlock(12) == 8);
  CHECK(GroupChunks(8) == 1);
  CHECK(GroupChunks(12) == 2);
  CHECK(GroupChunks(71) == 9);  // Falcon-7B: 71 query heads on one KV head
}

TEST_CASE("cuda plan: tile geometry and shared memory of every instantiation fit an SM") {
  CHECK(TileTokens(64) == 64);
  CHECK(TileTokens(128) == 32);
  CHECK(TileTokens(256) == 16);
  // fp16 x 128, 8 heads: 4 stages x (K + V) x 32 rows x 256 B = 64 KiB.
  CHECK(DecodeSharedBytes(128, 2, false, 8) == 65536);
  // fp8 x 128: 4 x 2 x (32 x 128 B + 32 scales x 4 B) = 33,792 B, above the
  // merge area 8 row groups x 8 heads x 130 x 4 B = 33,280 B.
  CHECK(DecodeSharedBytes(128, 1, true, 8) == 33792);
  for (int d : {64, 128, 256}) {
    for (int gp : {1, 2, 4, 8}) {
      for (int elem : {1, 2}) {
        const int64_t bytes = DecodeSharedBytes(d, elem, elem == 1, gp);
        CHECK(bytes <= 227 * 1024);  // sm_90's per-block opt-in limit
        CHECK(bytes <= 163 * 1024);  // sm_80's
        CHECK(bytes % 16 == 0);
        CHECK(StageBytes(d, elem, elem == 1) % 16 == 0);  // cp.async 16-byte alignment
      }
    }
  }
}

TEST_CASE("cuda plan: rotation copies keep every timed run out of L2") {
  CHECK(RotationCopies(128ull << 20, 60ull << 20) == 2);
  CHECK(RotationCopies(16ull << 20, 50ull << 20) == 10);  // ceil(150 / 16)
  CHECK(RotationCopies(0, 50ull << 20) == 2);
}

TEST_CASE("cuda plan: the kernel's row index equals decode.h's KvLayout::Row") {
  const int64_t batch = 3, kv_heads = 2, head_dim = 8;
  const std::vector<int64_t> lens = {5, 0, 40};
  SUBCASE("contiguous") {
    KvCache cache = KvCache::Contiguous(batch, kv_heads, head_dim, 40, KvDtype::kFp16);
    cache.FillRandom(lens, 1);
    const KvLayout l = cache.View().layout;
    DeviceLayout dl{nullptr, static_cast<int32_t>(l.capacity), 0, static_cast<int32_t>(kv_heads)};
    for (int32_t b = 0; b < batch; ++b)
      for (int32_t h = 0; h < kv_heads; ++h)
        for (int32_t t = 0; t < lens[b]; ++t)
          REQUIRE(KvRowIndex(dl, b, h, t) == l.Row(b, h, t, kv_heads));
  }
  SUBCASE("paged, scattered blocks of 7 tokens") {
    KvCache cache = KvCache::Paged(batch, kv_heads, head_dim, 7, 10, 40, KvDtype::kFp8E4M3, 99);
    cache.FillRandom(lens, 1);
    const KvLayout l = cache.View().layout;
    DeviceLayout dl{l.block_table, static_cast<int32_t>(l.block_tokens),
                    static_cast<int32_t>(l.max_blocks_per_seq), static_cast<int32_t>(kv_heads)};
    for (int32_t b = 0; b < batch; ++b)
      for (int32_t h = 0; h < kv_heads; ++h)
        for (int32_t t = 0; t < lens[b]; ++t)
          REQUIRE(KvRowIndex(dl, b, h, t) == l.Row(b, h, t, kv_heads));
  }
}

TEST_CASE("kvplan bench --device cuda without a usable GPU is one error line, exit 2") {
#if defined(KVPLAN_HAVE_CUDA)
  try {
    OpenCudaDevice();
    std::printf(
        "cuda_test: a CUDA device is present; the no-device message is not testable here\n");
    return;  // with a GPU this command would run the whole sweep (gpu-check.sh does)
  } catch (const kvplan::Error&) {
  }
  const std::string prefix = "kvplan: error: no CUDA device: ";
#else
  const std::string prefix = "kvplan: error: --device cuda: this kvplan was built without CUDA";
#endif
  const kvplan::test::CliResult r = kvplan::test::RunKvplan("bench --device cuda --quick");
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind(prefix, 0) == 0);
  CHECK(kvplan::test::LineCount(r.err) == 1);
}

#if defined(KVPLAN_HAVE_CUDA)
namespace {

// Opens the device, or prints the skip line ctest looks for and returns false.
bool DeviceOrSkip(CudaDevice& device) {
  try {
    device = OpenCudaDevice();
    return true;
  } catch (const kvplan::Error& e) {
    std::printf("SKIPPED: %s\n", e.what());  // e.what() starts "no CUDA device: "
    return false;
  }
}

}  // namespace
#endif

TEST_SUITE("gpu") {
  TEST_CASE("cuda kernel matches the float64 reference for every dtype, layout, head_dim, group") {
#if !defined(KVPLAN_HAVE_CUDA)
    std::printf("SKIPPED: no CUDA device: kvplan was built without CUDA (KVPLAN_CUDA)\n");
#else
    CudaDevice device;
    if (!DeviceOrSkip(device)) return;
    // Ragged lengths: empty, one token, a partial tile, several tiles and splits.
    const std::vector<int64_t> lens = {0, 1, 37, 300, 129};
    for (KvDtype dtype : {KvDtype::kFp16, KvDtype::kBf16, KvDtype::kFp8E4M3}) {
      for (KvLayoutKind layout : {KvLayoutKind::kContiguous, KvLayoutKind::kPaged}) {
        for (int64_t head_dim : {64, 128, 256}) {
          for (int64_t group : {1, 3, 8, 12}) {
            for (int64_t chunk : {0, 64}) {  // the heuristic's splits, and many forced splits
              CudaCase c;
              c.shape = DecodeShape{static_cast<int64_t>(lens.size()), 2 * group, 2, head_dim};
              c.seq_lens = lens;
              c.dtype = dtype;
              c.layout = layout;
              c.block_tokens = 16;
              c.chunk_tokens = chunk;
              CAPTURE(KvDtypeName(dtype));
              CAPTURE(static_cast<int>(layout));
              CAPTURE(head_dim);
              CAPTURE(group);
              CAPTURE(chunk);
              const CudaCaseResult r = RunCudaCase(c, device, 0, 11);
              CHECK(r.tolerance_ratio <= 1.0);
              if (chunk == 64) CHECK(r.plan.max_splits == 5);  // 300 tokens / 64
            }
          }
        }
      }
    }
#endif
  }

  TEST_CASE("cuda kernel rejects what it is not built for, in one line") {
#if !defined(KVPLAN_HAVE_CUDA)
    std::printf("SKIPPED: no CUDA device: kvplan was built without CUDA (KVPLAN_CUDA)\n");
#else
    CudaDevice device;
    if (!DeviceOrSkip(device)) return;
    CudaCase c;
    c.shape = DecodeShape{1, 8, 8, 128};
    c.context = 10;
    c.dtype = KvDtype::kInt8;
    CHECK_THROWS_WITH(RunCudaCase(c, device, 0, 1),
                      "the CUDA decode kernel supports fp16, bf16 and fp8 caches, not int8");
    c.dtype = KvDtype::kFp16;
    c.shape.head_dim = 96;
    CHECK_THROWS_WITH(RunCudaCase(c, device, 0, 1),
                      "the CUDA decode kernel supports head_dim 64, 128 and 256, not 96");
#endif
  }
}
