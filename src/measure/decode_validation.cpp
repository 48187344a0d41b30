#include "measure/decode_validation.h"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

#include "kernels/cpu/decode_cpu.h"
#include "kernels/cpu/gemv.h"
#include "kernels/fp_convert.h"
#include "kernels/kv_cache.h"
#include "measure/ceilings.h"
#include "measure/harness.h"
#include "plan/latency.h"
#include "spec/cache_dtype.h"
#include "util/units.h"

namespace kvplan::kernels {
namespace {

// Random fp16 weights in +-1/sqrt(cols), from a splitmix64 stream, in a
// buffer on huge pages like the KV cache and the bench's read-ceiling buffer
// (on 4 KiB pages a VM's nested page walks slow the weight stream, which no
// bandwidth curve measured on huge pages can predict).
kernels::AlignedBuffer RandomHalf(int64_t rows, int64_t cols, uint64_t seed) {
  kernels::AlignedBuffer buf(static_cast<uint64_t>(rows * cols) * sizeof(uint16_t));
  auto* w = static_cast<uint16_t*>(buf.data());
  const float scale = 1.0f / std::sqrt(static_cast<float>(cols));
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(r) * 0xD1B54A32D192ED03ull;
    for (int64_t c = 0; c < cols; ++c) {
      uint64_t z = (s += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      const float u = static_cast<float>(static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0);
      w[static_cast<size_t>(r * cols + c)] = kernels::FloatToHalf(u * scale);
    }
  }
  return buf;
}

const uint16_t* Half(const kernels::AlignedBuffer& b) {
  return static_cast<const uint16_t*>(b.data());
}

double Now(TimingMode mode) {
  if (mode.SingleThreadCpuClock()) {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void RmsNorm(const float* x, int64_t d, float* y) {
  double ss = 0;
  for (int64_t i = 0; i < d; ++i) ss += static_cast<double>(x[i]) * x[i];
  const float inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(d) + 1e-6));
  for (int64_t i = 0; i < d; ++i) y[i] = x[i] * inv;
}

struct Layer {
  kernels::AlignedBuffer wqkv;      // [(q_heads + 2 kv_heads) * head_dim][hidden] fp16
  kernels::AlignedBuffer wo;        // [hidden][q_heads * head_dim]
  kernels::AlignedBuffer wgate_up;  // [2 * intermediate][hidden]
  kernels::AlignedBuffer wdown;     // [hidden][intermediate]
};

// The model's weights and one KV cache per layer, and one decode step.
class SyntheticDecoder {
 public:
  SyntheticDecoder(const SyntheticModel& m, const ValidationShape& s, TimingMode mode)
      : m_(m), s_(s), mode_(mode), threads_(mode.threads) {
    const int64_t qd = m.q_heads * m.head_dim, kvd = m.kv_heads * m.head_dim;
    uint64_t seed = 1;
    for (int64_t l = 0; l < m.layers; ++l) {
      Layer L;
      L.wqkv = RandomHalf(qd + 2 * kvd, m.hidden, seed++);
      L.wo = RandomHalf(m.hidden, qd, seed++);
      L.wgate_up = RandomHalf(2 * m.intermediate, m.hidden, seed++);
      L.wdown = RandomHalf(m.hidden, m.intermediate, seed++);
      layers_.push_back(std::move(L));
      caches_.push_back(kernels::KvCache::Contiguous(s.batch, m.kv_heads, m.head_dim,
                                                     s.context + 64, kernels::KvDtype::kFp16));
      caches_.back().FillRandom(std::vector<int64_t>(static_cast<size_t>(s.batch), s.context),
                                seed++);
    }
    lm_head_ = RandomHalf(m.vocab, m.hidden, seed++);
    x_.assign(static_cast<size_t>(s.batch * m.hidden), 0.0f);
    for (size_t i = 0; i < x_.size(); ++i) x_[i] = std::sin(static_cast<float>(i) * 0.37f);
  }

  // One decode step for the whole batch; returns a checksum of the logits
  // so the work cannot be optimised away.
  double Step() {
    attention_s_ = 0;
    const int64_t B = s_.batch, H = m_.hidden;
    const int64_t qd = m_.q_heads * m_.head_dim, kvd = m_.kv_heads * m_.head_dim;
    const int64_t rq = qd + 2 * kvd;
    h_.resize(static_cast<size_t>(B * H));
    qkv_.resize(static_cast<size_t>(B * rq));
    q_.resize(static_cast<size_t>(B * qd));
    attn_.resize(static_cast<size_t>(B * qd));
    tmp_.resize(static_cast<size_t>(B * std::max(H, 2 * m_.intermediate)));
    act_.resize(static_cast<size_t>(B * m_.intermediate));
    for (size_t l = 0; l < layers_.size(); ++l) {
      const Layer& L = layers_[l];
      kernels::KvCache& cache = caches_[l];
      for (int64_t b = 0; b < B; ++b) RmsNorm(&x_[b * H], H, &h_[b * H]);
      GemvF16(Half(L.wqkv), rq, H, h_.data(), B, qkv_.data(), threads_);
      for (int64_t b = 0; b < B; ++b) {
        // GemvF16 writes [B][rows]: row b holds q | k | v of sequence b.
        const float* row = &qkv_[b * rq];
        std::copy(row, row + qd, &q_[b * qd]);
        cache.Append(b, row + qd, row + qd + kvd);  // O(1): one row written in place
      }
      kernels::DecodeArgs args;
      args.shape = {B, m_.q_heads, m_.kv_heads, m_.head_dim};
      args.seq_lens = cache.Lengths().data();
      args.q = q_.data();
      args.cache = cache.View();
      args.out = attn_.data();
      kernels::CpuDecodeOptions opt;
      opt.threads = threads_;
      const double t0 = Now(mode_);
      kernels::DecodeAttentionCpu(args, opt);
      attention_s_ += Now(mode_) - t0;
      GemvF16(Half(L.wo), H, qd, attn_.data(), B, tmp_.data(), threads_);
      for (int64_t i = 0; i < B * H; ++i) x_[i] += 0.1f * tmp_[i];
      for (int64_t b = 0; b < B; ++b) RmsNorm(&x_[b * H], H, &h_[b * H]);
      GemvF16(Half(L.wgate_up), 2 * m_.intermediate, H, h_.data(), B, tmp_.data(), threads_);
      for (int64_t b = 0; b < B; ++b) {
        const float* g = &tmp_[b * 2 * m_.intermediate];
        const float* u = g + m_.intermediate;
        for (int64_t i = 0; i < m_.intermediate; ++i) {
          act_[b * m_.intermediate + i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];  // SiLU(g) * u
        }
      }
      GemvF16(Half(L.wdown), H, m_.intermediate, act_.data(), B, tmp_.data(), threads_);
      for (int64_t i = 0; i < B * H; ++i) x_[i] += 0.1f * tmp_[i];
    }
    for (int64_t b = 0; b < B; ++b) RmsNorm(&x_[b * H], H, &h_[b * H]);
    logits_.resize(static_cast<size_t>(B * m_.vocab));
    GemvF16(Half(lm_head_), m_.vocab, H, h_.data(), B, logits_.data(), threads_);
    double sum = 0;
    for (float v : logits_) sum += v;
    return sum;
  }

  /// Time the last Step() spent in decode attention.
  double AttentionSeconds() const { return attention_s_; }

 private:
  SyntheticModel m_;
  ValidationShape s_;
  TimingMode mode_;
  int threads_ = 0;
  double attention_s_ = 0;
  std::vector<Layer> layers_;
  std::vector<kernels::KvCache> caches_;
  kernels::AlignedBuffer lm_head_;
  std::vector<float> x_, h_, qkv_, q_, attn_, tmp_, act_, logits_;
};

}  // namespace

ModelSpec SyntheticModelSpec(const SyntheticModel& m) {
  ModelSpec s;
  s.name = "synthetic-llama";
  s.origin = "kvplan latency --validate";
  s.source = "synthetic";
  s.architecture = "LlamaForCausalLM";
  s.layers = static_cast<uint64_t>(m.layers);
  s.hidden_size = static_cast<uint64_t>(m.hidden);
  s.query_heads = static_cast<uint64_t>(m.q_heads);
  s.kv_heads = static_cast<uint64_t>(m.kv_heads);
  s.head_dim = static_cast<uint64_t>(m.head_dim);
  s.v_head_dim = s.head_dim;
  s.max_context = 1 << 20;
  s.vocab_size = static_cast<uint64_t>(m.vocab);
  s.intermediate_size = static_cast<uint64_t>(m.intermediate);
  s.weight_dtype = "fp16";
  const uint64_t qd = s.query_heads * s.head_dim, kvd = s.kv_heads * s.head_dim;
  s.params = s.layers * ((qd + 2 * kvd) * s.hidden_size + s.hidden_size * qd +
                         3 * s.intermediate_size * s.hidden_size + 2 * s.hidden_size) +
             2 * s.vocab_size * s.hidden_size + s.hidden_size;
  ValidateModel(s);
  return s;
}

// A pass over at least the whole last-level cache (a streaming read of a
// buffer no smaller than the cache finds none of it cached: each half evicts
// the other), at least 256 MiB, at most 1 GiB: it runs beside every timing,
// so it is kept as short as that allows.
DriftProbe::DriftProbe(TimingMode mode, uint64_t bytes, double reference)
    : meter_(bytes > 0 ? bytes
                       : std::clamp<uint64_t>(kernels::LastLevelCacheBytes(), 256 * kMiB, kGiB),
             mode.threads, [mode] { return Now(mode); }),
      reference_(reference > 0 ? reference : meter_.Measure(5)) {}

namespace {

constexpr int64_t kWeightsCols = 2048;  // the weights curve's GEMV: matrices of 2048 columns

// One point of the weights curve: the GEMV over a `bytes` fp16 matrix for
// `batch` vectors, caches flushed, median of 7; with a `probe`, the ceiling
// read before each timing and the point stated at the probe's reference.
BandwidthPoint MeasureWeightsPoint(uint64_t bytes, int64_t batch, TimingMode mode,
                                   kernels::CacheFlusher& flusher, DriftProbe* probe) {
  constexpr int64_t kWarmRows = 16;
  static const kernels::AlignedBuffer warm_w = RandomHalf(kWarmRows, kWeightsCols, 99);
  const int64_t rows = static_cast<int64_t>(bytes / (kWeightsCols * sizeof(uint16_t)));
  const kernels::AlignedBuffer w = RandomHalf(rows, kWeightsCols, bytes);
  const std::vector<float> x(static_cast<size_t>(batch * kWeightsCols), 0.25f);
  std::vector<float> y(static_cast<size_t>(batch * rows));
  GemvF16(Half(w), rows, kWeightsCols, x.data(), batch, y.data(), mode.threads);  // warm-up
  std::vector<double> times;
  for (int r = 0; r < 7; ++r) {
    const double ceiling = probe != nullptr ? probe->Read() : 0;
    flusher.Flush();
    // Warm the GEMV's code and threads on the small separate matrix, as
    // the bench warms the attention kernel (kernels::kWarmTokens).
    GemvF16(Half(warm_w), kWarmRows, kWeightsCols, x.data(), batch, y.data(), mode.threads);
    const double t0 = Now(mode);
    GemvF16(Half(w), rows, kWeightsCols, x.data(), batch, y.data(), mode.threads);
    times.push_back(Now(mode) - t0);
    if (probe != nullptr) times.back() = probe->AtReference(times.back(), ceiling);
  }
  BandwidthPoint p{bytes, static_cast<double>(bytes) / kernels::Median(times) / 1e9};
  p.batch = static_cast<uint64_t>(batch);
  return p;
}

// The bench's curve shape (fp16 attention, 8 KV heads x 128, batch 1) at
// `context` and `group`: the attention curve's point there, every step
// stated at the probe's reference.
kernels::BenchShape CurveShape(int64_t context, int64_t group) {
  kernels::BenchShape shape;
  shape.context = context;
  shape.group = group;
  return shape;
}

BandwidthPoint MeasureAttentionPoint(int64_t context, int64_t group, TimingMode mode,
                                     DriftProbe& probe) {
  // All threads on the wall clock, or one thread on its own CPU clock.
  kernels::TimingOptions topt;
  topt.cpu.threads = mode.threads;
  if (mode.SingleThreadCpuClock()) topt.clock = [mode] { return Now(mode); };
  topt.beside = [&probe] { return probe.Read(); };
  const kernels::StepTiming t = kernels::TimeDecodeStep(CurveShape(context, group), topt);
  std::vector<double> at_reference;
  for (size_t i = 0; i < t.samples.size(); ++i) {
    at_reference.push_back(probe.AtReference(t.samples[i], t.beside[i]));
  }
  return {t.bytes_read, static_cast<double>(t.bytes_read) / kernels::Median(at_reference) / 1e9,
          static_cast<uint64_t>(group)};
}

// The points of `hw`'s two curves that the prediction of one decode step
// reads (CurvePointsRead at the attention pass, WeightsCurvePointsRead at
// every weight matrix's size), measured again now, in place. An attention point whose size is no
// context of the curve shape (a profile from elsewhere) is left as it is.
void RemeasurePointsRead(HardwareSpec& hw, const ModelCost& cost, const StepEstimate& e,
                         uint64_t batch, TimingMode mode, kernels::CacheFlusher& flusher,
                         DriftProbe& probe) {
  const uint64_t group = cost.attention_group;
  MeasuredProfile& m = *hw.measured;
  const uint64_t per_token = CurveShape(1, 1).CacheBytes();
  for (size_t i : CurvePointsRead(hw, e.attention.pass_bytes, group)) {
    BandwidthPoint& p = m.curve[i];
    const int64_t context = static_cast<int64_t>(p.bytes / per_token);
    if (CurveShape(context, static_cast<int64_t>(p.group)).CacheBytes() != p.bytes) continue;
    p = MeasureAttentionPoint(context, static_cast<int64_t>(p.group), mode, probe);
  }
  // Every weight matrix's size reads its own points; each point once.
  std::vector<size_t> points;
  for (uint64_t bytes : WeightPassBytes(cost, e.weight_bytes, batch)) {
    for (size_t i : WeightsCurvePointsRead(hw, bytes, batch)) {
      if (std::find(points.begin(), points.end(), i) == points.end()) points.push_back(i);
    }
  }
  for (size_t i : points) {
    BandwidthPoint& p = m.weights_curve[i];
    if (p.bytes % (kWeightsCols * sizeof(uint16_t)) != 0) continue;
    p = MeasureWeightsPoint(p.bytes, static_cast<int64_t>(p.batch), mode, flusher, &probe);
  }
}

}  // namespace

std::vector<ValidationPoint> ValidateDecodeModel(
    const SyntheticModel& m, const std::vector<ValidationShape>& shapes, const HardwareSpec& hw,
    int repeats, TimingMode mode, const std::function<void(const std::string&)>& progress,
    bool remeasure) {
  const ModelSpec spec = SyntheticModelSpec(m);
  const CacheDtype& fp16 = FindCacheDtype("fp16");
  const ModelCost cost = ComputeModelCost(spec, fp16, FindWeightFormat("fp16"), 1);
  kernels::CacheFlusher flusher;
  DriftProbe probe(mode, 0, hw.measured ? hw.measured->read_ceiling_gbps : 0);
  std::vector<ValidationPoint> out;
  for (const ValidationShape& s : shapes) {
    if (progress) progress(fmt::format("decode step: context {}, batch {}", s.context, s.batch));
    // The profile the prediction reads: `hw`, or a copy with the points
    // this step's prediction reads measured again right before its steps.
    HardwareSpec now = hw;
    if (remeasure && HasMeasuredCurve(hw)) {
      if (progress) {
        progress(fmt::format("decode step: context {}, batch {}: its curve points again", s.context,
                             s.batch));
      }
      RemeasurePointsRead(now, cost,
                          EstimateDecodeStep(cost, hw, static_cast<uint64_t>(s.context),
                                             static_cast<uint64_t>(s.batch)),
                          static_cast<uint64_t>(s.batch), mode, flusher, probe);
      if (progress) progress(fmt::format("decode step: context {}, batch {}", s.context, s.batch));
    }
    SyntheticDecoder dec(m, s, mode);
    std::vector<double> times, attention, ceilings, adjusted, adjusted_attention;
    volatile double sink = dec.Step();  // warm-up: page in, spin up the threads
    for (int r = 0; r < repeats; ++r) {
      ceilings.push_back(probe.Read());
      flusher.Flush();
      const double t0 = Now(mode);
      sink = sink + dec.Step();
      times.push_back(Now(mode) - t0);
      attention.push_back(dec.AttentionSeconds());
      adjusted.push_back(probe.AtReference(times.back(), ceilings.back()));
      adjusted_attention.push_back(probe.AtReference(attention.back(), ceilings.back()));
    }
    ValidationPoint p;
    p.shape = s;
    p.measured_s = kernels::Median(times);
    p.measured_attention_s = kernels::Median(attention);
    p.ceiling_gbps = kernels::Median(ceilings);
    p.adjusted_measured_s = kernels::Median(adjusted);
    p.adjusted_attention_s = kernels::Median(adjusted_attention);
    const StepEstimate e = EstimateDecodeStep(cost, now, static_cast<uint64_t>(s.context),
                                              static_cast<uint64_t>(s.batch));
    p.predicted_s = e.seconds;
    p.predicted_attention_s = e.attention.seconds;
    p.bytes = e.weight_bytes + e.kv_bytes;
    out.push_back(p);
  }
  return out;
}

std::vector<BandwidthPoint> MeasureWeightsCurve(TimingMode mode, uint64_t max_bytes,
                                                DriftProbe* probe) {
  std::vector<BandwidthPoint> curve;
  kernels::CacheFlusher flusher;
  for (const int64_t batch : {1, 2, 4}) {
    for (const uint64_t bytes : {2 * kMiB, 8 * kMiB, 32 * kMiB, 128 * kMiB}) {
      if (bytes > max_bytes) break;
      curve.push_back(MeasureWeightsPoint(bytes, batch, mode, flusher, probe));
    }
  }
  return curve;
}

HardwareSpec MeasureProfileNow(const std::vector<int64_t>& curve_contexts,
                               const std::vector<int64_t>& groups, TimingMode mode,
                               const std::function<void(const std::string&)>& progress) {
  HardwareSpec h;
  h.name = "this-machine";
  h.display_name = kernels::MachineDescription();
  h.vendor = "cpu";
  h.origin = mode.SingleThreadCpuClock() ? "measured now (1 thread, CPU time)"
                                         : "measured now (all threads, wall time)";
  h.source = "kvplan latency --validate: measured before the validation";
  if (progress) progress("measuring the read ceiling");
  MeasuredProfile p;
  p.device = "cpu";
  p.machine = h.display_name;
  p.threads = static_cast<uint64_t>(mode.threads > 0 ? mode.threads : omp_get_max_threads());
  DriftProbe probe(mode);
  p.read_ceiling_gbps = probe.reference();
  const kernels::SimdPath simd = kernels::ResolveSimd(kernels::SimdPath::kAuto, 128);
  const double fma = kernels::MeasureFmaPeakFlops(simd, mode.threads);
  for (const char* t : {"fp32", "fp16", "bf16"}) h.flops[t] = fma;
  h.memory_bandwidth_gbps = p.read_ceiling_gbps;
  for (int64_t group : groups) {
    for (int64_t n : curve_contexts) {
      if (progress) progress(fmt::format("bandwidth curve: {}", CurveShape(n, group).Label()));
      p.curve.push_back(MeasureAttentionPoint(n, group, mode, probe));
    }
  }
  std::sort(p.curve.begin(), p.curve.end(), [](const BandwidthPoint& a, const BandwidthPoint& b) {
    return a.group != b.group ? a.group < b.group : a.bytes < b.bytes;
  });
  if (progress) progress("weights curve: fp16 GEMV, batch 1, 2 and 4");
  p.weights_curve = MeasureWeightsCurve(mode, UINT64_MAX, &probe);
  h.measured = p;
  return h;
}

}  // namespace kvplan::kernels
