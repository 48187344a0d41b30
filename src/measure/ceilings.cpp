#include "measure/ceilings.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace kvplan::kernels {

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int Threads(int threads) {
  return threads > 0 ? threads : omp_get_max_threads();
}

// Sum of a slice of 64-bit words with eight independent chains (the compiler
// vectorises it with the baseline SSE2; integer adds keep it exact and cheap).
uint64_t SumSlice(const uint64_t* p, uint64_t n) {
  uint64_t s[8] = {};
  uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) s[j] += p[i + j];
  }
  for (; i < n; ++i) s[0] += p[i];
  return s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
}

// The portable FMA-peak loop: a*b+c chains the compiler may pack into SSE.
double FmaLoopScalar(int64_t iterations, float* sink) {
  float a[16];
  for (int j = 0; j < 16; ++j) a[j] = 0.1f + 0.01f * static_cast<float>(j);
  const float m = 0.9999999f, c = 1e-7f;
  for (int64_t i = 0; i < iterations; ++i) {
    for (int j = 0; j < 16; ++j) a[j] = a[j] * m + c;
  }
  float s = 0;
  for (float x : a) s += x;
  *sink += s;
  return static_cast<double>(iterations) * 16 * 2;
}

}  // namespace

std::string_view ReadLoopName(ReadLoop loop) {
  switch (loop) {
    case ReadLoop::kSse2:
      return "sse2";
    case ReadLoop::kAvx2:
      return "avx2";
    case ReadLoop::kAvx2Prefetch:
      return "avx2+prefetch";
    case ReadLoop::kAvx512:
      return "avx512";
    case ReadLoop::kAvx512Prefetch:
      return "avx512+prefetch";
  }
  return "?";
}

std::vector<ReadLoop> SupportedReadLoops() {
  std::vector<ReadLoop> loops = {ReadLoop::kSse2};
  if (CpuHasAvx2()) loops.insert(loops.end(), {ReadLoop::kAvx2, ReadLoop::kAvx2Prefetch});
  if (CpuHasAvx512()) loops.insert(loops.end(), {ReadLoop::kAvx512, ReadLoop::kAvx512Prefetch});
  return loops;
}

uint64_t SumWords(ReadLoop loop, const uint64_t* p, uint64_t n) {
  switch (loop) {
    case ReadLoop::kSse2:
      return SumSlice(p, n);
    case ReadLoop::kAvx2:
      return detail::SumSliceAvx2(p, n, false);
    case ReadLoop::kAvx2Prefetch:
      return detail::SumSliceAvx2(p, n, true);
    case ReadLoop::kAvx512:
      return detail::SumSliceAvx512(p, n, false);
    case ReadLoop::kAvx512Prefetch:
      return detail::SumSliceAvx512(p, n, true);
  }
  return 0;
}

namespace {

// One pass of `loop` over p[0..words) on `threads` threads; seconds.
double TimedPass(ReadLoop loop, const uint64_t* p, uint64_t words, int threads,
                 const std::function<double()>& clock, volatile uint64_t& sink) {
  uint64_t total = 0;
  const double t0 = clock();
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
    const uint64_t i = static_cast<uint64_t>(omp_get_thread_num());
    const uint64_t n = static_cast<uint64_t>(omp_get_num_threads());
    const uint64_t lo = words * i / n, hi = words * (i + 1) / n;
    total += SumWords(loop, p + lo, hi - lo);
  }
  const double dt = clock() - t0;
  sink = sink + total;
  return dt;
}

}  // namespace

ReadLoop FastestReadLoop(int threads) {
  static std::mutex mu;
  static std::map<int, ReadLoop> chosen;
  const int nt = Threads(threads);
  const std::lock_guard<std::mutex> lock(mu);
  if (const auto it = chosen.find(nt); it != chosen.end()) return it->second;
  const std::vector<ReadLoop> loops = SupportedReadLoops();
  ReadLoop best = loops.back();
  if (loops.size() > 1) {
    // Far larger than the last-level cache, as the ceiling's own buffer is,
    // so the choice is made on reads from memory.
    AlignedBuffer buffer(std::clamp<uint64_t>(2 * LastLevelCacheBytes(), 256ull << 20, 1ull << 30));
    const uint64_t words = buffer.size() / sizeof(uint64_t);
    auto* p = static_cast<uint64_t*>(buffer.data());
#pragma omp parallel for num_threads(nt) schedule(static)
    for (uint64_t i = 0; i < words; ++i) p[i] = i;
    volatile uint64_t sink = 0;
    const std::function<double()> clock = Now;
    std::vector<std::vector<double>> seconds(loops.size());
    TimedPass(loops[0], p, words, nt, clock, sink);  // page tables, thread pool
    for (int round = 0; round < 5; ++round) {
      for (size_t k = 0; k < loops.size(); ++k) {
        seconds[k].push_back(TimedPass(loops[k], p, words, nt, clock, sink));
      }
    }
    double best_s = 0;
    for (size_t k = 0; k < loops.size(); ++k) {
      const double s = Median(seconds[k]);
      if (best_s == 0 || s < best_s) {
        best_s = s;
        best = loops[k];
      }
    }
  }
  chosen[nt] = best;
  return best;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

uint64_t LastLevelCacheBytes() {
  // The larger of what sysfs and the C library report: in a VM the guest's
  // sysfs may show one CCX's L3 (32 MiB) while the vCPUs roam over a chip
  // with more, and a line left in any of it is not a read from memory.
  uint64_t bytes = 0;
  for (int index = 4; index >= 0 && bytes == 0; --index) {
    std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    std::string s;
    if (f >> s && !s.empty()) {
      uint64_t v = std::strtoull(s.c_str(), nullptr, 10);
      if (s.back() == 'K') v <<= 10;
      if (s.back() == 'M') v <<= 20;
      bytes = v;
    }
  }
#ifdef _SC_LEVEL3_CACHE_SIZE
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0) bytes = std::max(bytes, static_cast<uint64_t>(l3));
#endif
  return bytes > 0 ? bytes : 32ull << 20;
}

std::string MachineDescription() {
  std::ifstream f("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(colon + 2);
      break;
    }
  }
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return model + ", " + std::to_string(cpus) + (cpus == 1 ? " core" : " cores");
}

ReadCeilingMeter::ReadCeilingMeter(uint64_t bytes, int threads, std::function<double()> clock)
    : loop_(FastestReadLoop(threads)),  // first: its buffer is freed before ours is taken
      buffer_(bytes / sizeof(uint64_t) * sizeof(uint64_t)),
      threads_(Threads(threads)),
      clock_(clock ? std::move(clock) : std::function<double()>(Now)) {
  const uint64_t words = buffer_.size() / sizeof(uint64_t);
  auto* p = static_cast<uint64_t*>(buffer_.data());
#pragma omp parallel for num_threads(threads_) schedule(static)
  for (uint64_t i = 0; i < words; ++i) p[i] = i * 0x9E3779B97F4A7C15ull;
}

double ReadCeilingMeter::MeasureOnce() {
  const uint64_t words = buffer_.size() / sizeof(uint64_t);
  const auto* p = static_cast<const uint64_t*>(buffer_.data());
  const double dt = TimedPass(loop_, p, words, threads_, clock_, sink_);
  return static_cast<double>(words * sizeof(uint64_t)) / dt / 1e9;
}

double ReadCeilingMeter::Measure(int repeats) {
  MeasureOnce();  // warms up: page tables, thread pool
  std::vector<double> gbps;
  for (int r = 0; r < repeats; ++r) gbps.push_back(MeasureOnce());
  return Median(gbps);
}

double MeasureReadCeilingGbps(uint64_t bytes, int threads, int repeats) {
  ReadCeilingMeter meter(bytes, threads);
  return meter.Measure(repeats);
}

double MeasureFmaPeakFlops(SimdPath path, int threads) {
  const int nt = Threads(threads);
  const bool scalar = path != SimdPath::kAvx2 && path != SimdPath::kAvx512;
  const int64_t iterations = scalar ? 10'000'000 : 20'000'000;
  std::vector<double> samples;
  float sink = 0;
  for (int r = 0; r < 4; ++r) {
    double flops = 0;
    const double t0 = Now();
#pragma omp parallel num_threads(nt) reduction(+ : flops)
    {
      float local = 0;
      flops += path == SimdPath::kAvx512 ? detail::FmaLoopAvx512(iterations, &local)
               : path == SimdPath::kAvx2 ? detail::FmaLoopAvx2(iterations, &local)
                                         : FmaLoopScalar(iterations, &local);
      if (local == 12345.0f) flops += 1;  // keeps the result alive
    }
    const double dt = Now() - t0;
    sink += static_cast<float>(flops);
    if (r > 0) samples.push_back(flops / dt);
  }
  return sink > 0 ? Median(samples) : 0;
}

CacheFlusher::CacheFlusher()
    : buffer_(std::clamp<uint64_t>(2 * LastLevelCacheBytes(), 64ull << 20, 512ull << 20)) {}

void CacheFlusher::Flush() {
  // Write the first half (written lines surely displace whatever the caches
  // held), then read the second half (so those dirty lines are written back
  // now, not during the timed step, which would be charged for them).
  ++round_;
  auto* p = static_cast<unsigned char*>(buffer_.data());
  const uint64_t half = buffer_.size() / 2 / sizeof(uint64_t) * sizeof(uint64_t);
  const auto* q = reinterpret_cast<const uint64_t*>(p + half);
  const uint64_t words = half / sizeof(uint64_t);
  const unsigned char value = round_;
  uint64_t total = 0;
#pragma omp parallel reduction(+ : total)
  {
    const uint64_t i = static_cast<uint64_t>(omp_get_thread_num());
    const uint64_t t = static_cast<uint64_t>(omp_get_num_threads());
    std::memset(p + half * i / t, value, half * (i + 1) / t - half * i / t);
#pragma omp barrier
    total += SumSlice(q + words * i / t, words * (i + 1) / t - words * i / t);
  }
  sink_ = sink_ + total;
}

double MeasureNoiseFloor(ReadCeilingMeter& ceiling, uint64_t step_bytes, int threads, int repeats) {
  ReadCeilingMeter step(step_bytes, threads);
  CacheFlusher flusher;
  step.MeasureOnce();  // page tables and the thread pool, as a warm-up
  std::vector<double> ratios;
  for (int r = 0; r < repeats; ++r) {
    const double beside = ceiling.MeasureOnce();
    flusher.Flush();
    ratios.push_back(step.MeasureOnce() / beside);
  }
  return Median(ratios);
}

}  // namespace kvplan::kernels
