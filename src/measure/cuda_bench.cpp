#include "measure/cuda_bench.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <utility>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/decode_cuda.h"
#include "kernels/kv_cache.h"
#include "kernels/reference.h"
#include "util/error.h"

namespace kvplan::kernels::cuda {
namespace {

// Device memory freed on scope exit (errors on free are ignored: a
// destructor must not throw, and the process is ending or moving on).
class DeviceBuffer {
 public:
  explicit DeviceBuffer(uint64_t bytes) : bytes_(bytes) {
    if (bytes > 0) KVPLAN_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(other.bytes_) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;

  template <typename T = void>
  T* get() const {
    return static_cast<T*>(ptr_);
  }
  uint64_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  uint64_t bytes_ = 0;
};

class Event {
 public:
  Event() { KVPLAN_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

class Stream {
 public:
  Stream() { KVPLAN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Milliseconds between two recorded events (waits for the second).
float ElapsedMs(const Event& start, const Event& stop) {
  KVPLAN_CUDA_CHECK(cudaEventSynchronize(stop.get()));
  float ms = 0;
  KVPLAN_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms;
}

// Rows (head vectors) the cache arrays hold: [blocks][kv_heads][block_tokens].
int64_t CacheRows(const CudaCase& c, int64_t capacity, int64_t num_blocks) {
  return c.layout == KvLayoutKind::kContiguous ? c.shape.batch * c.shape.kv_heads * capacity
                                               : num_blocks * c.shape.kv_heads * c.block_tokens;
}

}  // namespace

CudaDevice OpenCudaDevice() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error state
    Fail("no CUDA device: {} ({})", cudaGetErrorString(err), cudaGetErrorName(err));
  }
  if (count == 0) Fail("no CUDA device: the driver reports 0 devices");
  CudaDevice d;
  d.ordinal = 0;
  KVPLAN_CUDA_CHECK(cudaSetDevice(d.ordinal));
  cudaDeviceProp prop{};
  KVPLAN_CUDA_CHECK(cudaGetDeviceProperties(&prop, d.ordinal));
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sm_count = prop.multiProcessorCount;
  d.l2_bytes = static_cast<uint64_t>(prop.l2CacheSize);
  d.memory_bytes = prop.totalGlobalMem;
  int clock_khz = 0;
  int bus_bits = 0;
  KVPLAN_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, d.ordinal));
  KVPLAN_CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, d.ordinal));
  d.memory_clock_khz = clock_khz;
  d.bus_width_bits = bus_bits;
  d.peak_gbps = PeakBandwidthGBps(clock_khz, bus_bits);
  return d;
}

double MeasureCopyGBps(const CudaDevice& device, int repeats) {
  const uint64_t bytes = std::max<uint64_t>(uint64_t{512} << 20, 8 * device.l2_bytes);
  DeviceBuffer src(bytes);
  DeviceBuffer dst(bytes);
  KVPLAN_CUDA_CHECK(cudaMemset(src.get(), 1, bytes));
  KVPLAN_CUDA_CHECK(cudaMemset(dst.get(), 0, bytes));
  Stream stream;
  Event start;
  Event stop;
  std::vector<double> seconds;
  const int warmup = 2;
  for (int i = 0; i < warmup + std::max(1, repeats); ++i) {
    KVPLAN_CUDA_CHECK(cudaEventRecord(start.get(), stream.get()));
    KVPLAN_CUDA_CHECK(
        cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream.get()));
    KVPLAN_CUDA_CHECK(cudaEventRecord(stop.get(), stream.get()));
    const float ms = ElapsedMs(start, stop);
    if (i >= warmup) seconds.push_back(ms * 1e-3);
  }
  return 2.0 * static_cast<double>(bytes) / Median(seconds) / 1e9;
}

CudaCaseResult RunCudaCase(const CudaCase& c, const CudaDevice& device, int repeats,
                           uint64_t seed) {
  const DecodeShape& s = c.shape;
  std::vector<int64_t> lens =
      c.seq_lens.empty() ? std::vector<int64_t>(s.batch, c.context) : c.seq_lens;
  if (static_cast<int64_t>(lens.size()) != s.batch) {
    Fail("cuda bench: {} sequence lengths for batch {}", lens.size(), s.batch);
  }
  if (s.batch < 1 || s.kv_heads < 1 || s.q_heads % s.kv_heads != 0) {
    Fail("cuda bench: batch {} / q_heads {} / kv_heads {} is not a valid GQA shape", s.batch,
         s.q_heads, s.kv_heads);
  }
  const int64_t longest = std::max<int64_t>(1, *std::max_element(lens.begin(), lens.end()));
  if (longest >= INT32_MAX || s.batch > 65535 || s.q_heads > INT32_MAX) {
    Fail("cuda bench: shape too large for the CUDA kernel's 32-bit token indices");
  }
  const PreparedDecode prepared = PrepareDecode(c.dtype, s.head_dim, s.Group());

  // The cache on the host, random and valid, then the reference.
  int64_t num_blocks = 0;
  for (int64_t n : lens) num_blocks += (n + c.block_tokens - 1) / c.block_tokens;
  num_blocks = std::max<int64_t>(num_blocks, 1);
  KvCache cache = c.layout == KvLayoutKind::kContiguous
                      ? KvCache::Contiguous(s.batch, s.kv_heads, s.head_dim, longest, c.dtype)
                      : KvCache::Paged(s.batch, s.kv_heads, s.head_dim, c.block_tokens, num_blocks,
                                       longest, c.dtype, seed + 1);
  cache.FillRandom(lens, seed);
  const KvCacheView view = cache.View();

  std::vector<float> q(static_cast<size_t>(s.batch * s.q_heads * s.head_dim));
  std::mt19937_64 rng(seed ^ 0x9E3779B97F4A7C15ull);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& x : q) x = uniform(rng);
  std::vector<float> out(q.size());

  DecodeArgs host;
  host.shape = s;
  host.seq_lens = lens.data();
  host.q = q.data();
  host.cache = view;
  host.out = out.data();
  ValidateDecodeArgs(host);
  const std::vector<double> reference = DecodeAttentionReference(host);
  const Tolerance tol = ToleranceFor(c.dtype);

  // The device copies: `copies` replicas of K, V (and scales), rotated
  // between timed runs so that each run reads its cache from DRAM.
  const int64_t rows = CacheRows(c, longest, num_blocks);
  const uint64_t elem_bytes = static_cast<uint64_t>(rows) * s.head_dim * ElementBytes(c.dtype);
  const uint64_t scale_bytes = HasScales(c.dtype) ? static_cast<uint64_t>(rows) * sizeof(float) : 0;
  CudaCaseResult result;
  result.cache_bytes = DecodeCacheBytes(s, lens.data(), c.dtype);
  result.cache_copies =
      repeats > 0 ? RotationCopies(2 * (elem_bytes + scale_bytes), device.l2_bytes) : 1;
  std::vector<DeviceBuffer> k_copies;
  std::vector<DeviceBuffer> v_copies;
  std::vector<DeviceBuffer> ks_copies;
  std::vector<DeviceBuffer> vs_copies;
  for (int64_t i = 0; i < result.cache_copies; ++i) {
    k_copies.emplace_back(elem_bytes);
    v_copies.emplace_back(elem_bytes);
    KVPLAN_CUDA_CHECK(
        cudaMemcpy(k_copies.back().get(), view.k, elem_bytes, cudaMemcpyHostToDevice));
    KVPLAN_CUDA_CHECK(
        cudaMemcpy(v_copies.back().get(), view.v, elem_bytes, cudaMemcpyHostToDevice));
    ks_copies.emplace_back(scale_bytes);
    vs_copies.emplace_back(scale_bytes);
    if (scale_bytes > 0) {
      KVPLAN_CUDA_CHECK(
          cudaMemcpy(ks_copies.back().get(), view.k_scale, scale_bytes, cudaMemcpyHostToDevice));
      KVPLAN_CUDA_CHECK(
          cudaMemcpy(vs_copies.back().get(), view.v_scale, scale_bytes, cudaMemcpyHostToDevice));
    }
  }

  std::vector<int32_t> lens32(lens.begin(), lens.end());
  DeviceBuffer d_lens(lens32.size() * sizeof(int32_t));
  KVPLAN_CUDA_CHECK(
      cudaMemcpy(d_lens.get(), lens32.data(), d_lens.bytes(), cudaMemcpyHostToDevice));
  DeviceBuffer d_q(q.size() * sizeof(float));
  KVPLAN_CUDA_CHECK(cudaMemcpy(d_q.get(), q.data(), d_q.bytes(), cudaMemcpyHostToDevice));
  DeviceBuffer d_out(out.size() * sizeof(float));

  const KvLayout& hl = view.layout;
  const uint64_t table_bytes = c.layout == KvLayoutKind::kPaged
                                   ? static_cast<uint64_t>(s.batch * hl.max_blocks_per_seq) * 4
                                   : 0;
  DeviceBuffer d_table(table_bytes);
  if (table_bytes > 0) {
    KVPLAN_CUDA_CHECK(
        cudaMemcpy(d_table.get(), hl.block_table, table_bytes, cudaMemcpyHostToDevice));
  }

  SplitPlan plan = PlanSplits(prepared, lens, s.kv_heads);
  if (c.chunk_tokens > 0) {  // a forced split size (tests of the merge path)
    plan.chunk_tokens = c.chunk_tokens;
    plan.max_splits = 1;
    for (int64_t n : lens)
      plan.max_splits = std::max(plan.max_splits, (n + c.chunk_tokens - 1) / c.chunk_tokens);
  }
  result.plan = plan;
  result.blocks_per_sm = prepared.blocks_per_sm;
  const uint64_t partial_heads = static_cast<uint64_t>(s.batch * s.q_heads * plan.max_splits);
  DeviceBuffer d_partial_o(plan.max_splits > 1 ? partial_heads * s.head_dim * sizeof(float) : 0);
  DeviceBuffer d_partial_lse(plan.max_splits > 1 ? partial_heads * sizeof(float) : 0);

  DeviceDecodeArgs args;
  args.q = d_q.get<float>();
  args.seq_lens = d_lens.get<int32_t>();
  args.out = d_out.get<float>();
  args.partial_o = d_partial_o.get<float>();
  args.partial_lse = d_partial_lse.get<float>();
  args.layout.block_table = d_table.get<int32_t>();
  args.layout.block_tokens =
      static_cast<int32_t>(c.layout == KvLayoutKind::kPaged ? c.block_tokens : hl.capacity);
  args.layout.table_stride = static_cast<int32_t>(hl.max_blocks_per_seq);
  args.layout.kv_heads = static_cast<int32_t>(s.kv_heads);
  args.batch = static_cast<int32_t>(s.batch);
  args.q_heads = static_cast<int32_t>(s.q_heads);
  args.kv_heads = static_cast<int32_t>(s.kv_heads);
  args.head_dim = static_cast<int32_t>(s.head_dim);
  args.chunk_tokens = static_cast<int32_t>(plan.chunk_tokens);
  args.max_splits = static_cast<int32_t>(plan.max_splits);
  args.softmax_scale = host.Scale();

  Stream stream;
  auto run = [&](int64_t copy) {
    args.k = k_copies[copy].get();
    args.v = v_copies[copy].get();
    args.k_scale = ks_copies[copy].get<float>();
    args.v_scale = vs_copies[copy].get<float>();
    LaunchDecode(prepared, args, s.Group(), stream.get());
  };
  auto poison = [&] {  // 0xFF.. is a NaN in float: an unwritten output fails validation
    KVPLAN_CUDA_CHECK(cudaMemsetAsync(d_out.get(), 0xFF, d_out.bytes(), stream.get()));
  };
  auto validate = [&] {
    KVPLAN_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    KVPLAN_CUDA_CHECK(cudaMemcpy(out.data(), d_out.get(), d_out.bytes(), cudaMemcpyDeviceToHost));
    const double ratio = ToleranceRatio(out.data(), reference, tol.abs_tol, tol.rel_tol);
    result.tolerance_ratio = std::max(result.tolerance_ratio, ratio);
    if (!(ratio <= 1.0)) {
      Fail(
          "cuda bench: {} {} batch {} x {} tokens: output differs from the float64 reference "
          "(worst error {:.3g} x tolerance abs {} + rel {})",
          KvDtypeName(c.dtype), c.layout == KvLayoutKind::kPaged ? "paged" : "contiguous", s.batch,
          longest, ratio, tol.abs_tol, tol.rel_tol);
    }
  };

  for (int64_t copy = 0; copy < result.cache_copies; ++copy) {  // every replica is correct
    poison();
    run(copy);
    validate();
  }
  if (repeats <= 0) return result;

  Event start;
  Event stop;
  for (int i = 0; i < 3; ++i) run(i % result.cache_copies);  // warm-up: clocks, instruction cache
  std::vector<double> us;
  for (int i = 0; i < repeats; ++i) {
    // ~100 us of spinning covers the host's enqueueing of what follows, so
    // the events time the kernels alone (a 4K-token step is a few us).
    KVPLAN_CUDA_CHECK(EnqueueSpin(200000, stream.get()));
    poison();
    KVPLAN_CUDA_CHECK(cudaEventRecord(start.get(), stream.get()));
    run(i % result.cache_copies);
    KVPLAN_CUDA_CHECK(cudaEventRecord(stop.get(), stream.get()));
    us.push_back(ElapsedMs(start, stop) * 1e3);
  }
  validate();  // the last timed run's output
  result.repeats = repeats;
  result.median_us = Median(us);
  result.min_us = *std::min_element(us.begin(), us.end());
  result.gbps = static_cast<double>(result.cache_bytes) / (result.median_us * 1e-6) / 1e9;
  return result;
}

}  // namespace kvplan::kernels::cuda
