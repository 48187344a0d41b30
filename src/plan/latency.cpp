#include "plan/latency.h"

#include <algorithm>
#include <cmath>

#include "util/checked.h"

namespace kvplan {
namespace {

// The FLOPs key a weight format computes in: 16-bit for weight-only formats
// (W4A16 dequantizes to fp16/bf16 before the matmul), its own for the rest.
std::string ComputeDtype(const std::string& weight_dtype) {
  if (weight_dtype == "fp32" || weight_dtype == "fp16" || weight_dtype == "bf16" ||
      weight_dtype == "fp8" || weight_dtype == "int8") {
    return weight_dtype;
  }
  if (weight_dtype == "nvfp4" || weight_dtype == "mxfp4") return "fp4";
  return "bf16";
}

// The FLOPs key attention computes in. Attention multiplies activations
// (q, and k/v as the engine holds them) in the model's 16-bit type whatever
// the weights are stored in: fp8 or int4 weights change the weight GEMMs,
// not q.k and p.v. An fp8 KV cache is dequantized to 16 bits inside the
// attention kernel by vLLM's default backends; FlashAttention-3 can run fp8
// attention on Hopper, which this leaves out (a pessimistic prefill).
std::string AttentionDtype(const std::string& weight_dtype) {
  return weight_dtype == "fp32" ? "fp32" : "bf16";
}

// The matrices an engine multiplies as one: q, k and v (vLLM's
// QKVParallelLinear), and MLA's two down-projections of the hidden state
// (fused_qkv_a_proj). gate and up are one tensor already.
std::string_view FusedPass(std::string_view name) {
  if (name == "q_proj" || name == "k_proj" || name == "v_proj") return "qkv_proj";
  if (name == "q_a_proj" || name == "kv_a_proj_with_mqa") return "fused_qkv_a_proj";
  return name;
}

// The weight passes of one decode step: per layer, one per matrix (fused as
// FusedPass says; the routed experts' gate+up and down one each, as a fused
// MoE kernel streams the touched experts' stacked weights in one launch) and
// one for the layer's small tensors (norms, biases, the router); the lm_head
// (or tied embedding) and the final norm. Lookup tables are not read whole
// and are left out.
std::vector<ModelCost::WeightPass> BuildWeightPasses(const ModelTensors& tensors,
                                                     const WeightFormat& format, uint64_t tp,
                                                     bool untied_embedding) {
  std::vector<ModelCost::WeightPass> passes;
  auto add = [&passes](uint64_t bytes, uint64_t total, bool expert) {
    if (total == 0) return;
    for (ModelCost::WeightPass& p : passes) {
      if (p.bytes == bytes && p.expert == expert) {
        p.total = CheckedAdd(p.total, total);
        return;
      }
    }
    passes.push_back({bytes, total, expert});
  };
  for (const std::vector<WeightTensor>& layer : tensors.layers) {
    std::vector<std::pair<std::string_view, uint64_t>> matrices;  // fused name, bytes
    uint64_t vectors = 0;
    for (const WeightTensor& w : layer) {
      const uint64_t bytes = TensorBytes(w, format, tp);
      if (w.part == TensorPart::kExperts && w.copies > 1) {
        add(bytes, bytes, true);
      } else if (!w.linear) {
        vectors = CheckedAdd(vectors, bytes);
      } else {
        const std::string_view name = FusedPass(w.name);
        auto it = std::find_if(matrices.begin(), matrices.end(),
                               [name](const auto& m) { return m.first == name; });
        if (it == matrices.end()) {
          matrices.emplace_back(name, bytes);
        } else {
          it->second = CheckedAdd(it->second, bytes);
        }
      }
    }
    for (const auto& [name, bytes] : matrices) add(bytes, bytes, false);
    add(vectors, vectors, false);
  }
  for (const WeightTensor& w : tensors.model) {
    if (w.part == TensorPart::kPositions ||
        (w.part == TensorPart::kEmbedding && untied_embedding)) {
      continue;
    }
    const uint64_t bytes = TensorBytes(w, format, tp);
    add(bytes, bytes, false);
  }
  std::sort(passes.begin(), passes.end(), [](const auto& a, const auto& b) {
    return a.bytes != b.bytes ? a.bytes < b.bytes : a.expert < b.expert;
  });
  return passes;
}

}  // namespace

// Sum over prompt positions i = 1..P of min(i, window): the keys each query
// attends to in causal prefill (window = 0: none).
double CausalPairs(uint64_t prompt, uint64_t window) {
  const double p = static_cast<double>(prompt);
  if (window == 0 || window >= prompt) return p * (p + 1) / 2;
  const double w = static_cast<double>(window);
  return w * (w + 1) / 2 + (p - w) * w;
}

ModelCost AttentionCost(const ModelSpec& model, uint64_t tp) {
  ModelCost c;
  c.tp = tp;
  // Attention FLOPs per cached token a query attends to, on one rank: q.k
  // and p.v are 2 FLOPs per element per query head. MLA decode (absorbed)
  // scores against the latent + rope part and sums values in the latent.
  const double q_heads = static_cast<double>(model.query_heads) / static_cast<double>(tp);
  for (const LayerGroup& g : model.groups) {
    double per_layer = 0;
    if (g.kind == LayerKind::kMla && model.mla && model.mla->index_topk != 0) {
      // Sparse attention (DeepSeek-V3.2): the indexer scores every cached
      // token, then each query attends to the top index_topk latents only.
      const MlaSpec& mla = *model.mla;
      c.attention_flops_per_token_ctx += 2.0 * static_cast<double>(mla.index_heads) *
                                         static_cast<double>(mla.index_head_dim) *
                                         static_cast<double>(g.layers);
      c.windowed.push_back(
          {mla.index_topk, 2 * q_heads * static_cast<double>(mla.LatentDim() + mla.kv_lora_rank) *
                               static_cast<double>(g.layers)});
      continue;
    }
    if (g.kind == LayerKind::kMla && model.mla) {
      per_layer =
          2 * q_heads * static_cast<double>(model.mla->LatentDim() + model.mla->kv_lora_rank);
    } else if (g.HoldsTokens() || g.kind == LayerKind::kShared) {
      per_layer = 2 * q_heads * static_cast<double>(g.head_dim + g.v_head_dim);
    }
    const double flops = per_layer * static_cast<double>(g.layers);
    if (flops == 0) continue;
    if ((g.kind == LayerKind::kSliding || g.kind == LayerKind::kChunked ||
         g.kind == LayerKind::kShared) &&
        g.window != 0) {
      c.windowed.push_back({g.window, flops});
    } else {
      c.attention_flops_per_token_ctx += flops;
    }
  }
  return c;
}

double PrefillAttentionFlops(const ModelCost& cost, uint64_t prompt) {
  double attention = cost.attention_flops_per_token_ctx * CausalPairs(prompt, 0);
  for (const ModelCost::WindowedGroup& g : cost.windowed) {
    attention += g.flops_per_token_ctx * CausalPairs(prompt, g.window);
  }
  return attention;
}

ModelCost ComputeModelCost(const ModelSpec& model, const CacheDtype& dtype,
                           const WeightFormat& format, uint64_t tp) {
  ModelCost c = AttentionCost(model, tp);
  c.kv = ComputeKvCost(model, dtype, tp);
  c.layers = model.layers;
  c.attention_group = model.mla ? std::max<uint64_t>(1, model.query_heads / tp)
                                : std::max<uint64_t>(1, model.query_heads / model.kv_heads);
  for (const LayerGroup& g : model.groups) {
    if (g.kind != LayerKind::kShared && g.kind != LayerKind::kNone) c.cache_layers += g.layers;
  }
  c.weight_dtype = format.name;
  c.weight_format = WeightFormatLabel(format);
  // Weights quantized in some parts only (gpt-oss: MXFP4 experts) run the
  // rest in 16 bits: the weight matmuls take the 16-bit peak.
  c.compute_dtype = format.parts.empty() ? ComputeDtype(format.name) : "bf16";
  c.attention_dtype = AttentionDtype(format.name);

  const ModelTensors tensors = BuildModelTensors(model);
  const bool lm_head =
      std::any_of(tensors.model.begin(), tensors.model.end(),
                  [](const WeightTensor& w) { return w.part == TensorPart::kLmHead; });
  double params = 0, lookup_params = 0, expert_params = 0;
  for (const WeightTensor& w : tensors.model) {
    params += static_cast<double>(w.Params());
    // An untied embedding (and a learned position table) is a lookup: a step
    // reads one row per token. A tied one is also the lm_head matmul.
    if (w.part == TensorPart::kPositions || (w.part == TensorPart::kEmbedding && lm_head)) {
      lookup_params += static_cast<double>(w.Params());
      c.lookup_weight_bytes = CheckedAdd(c.lookup_weight_bytes, TensorBytes(w, format, tp));
    }
  }
  for (const std::vector<WeightTensor>& layer : tensors.layers) {
    for (const WeightTensor& w : layer) {
      params += static_cast<double>(w.Params());
      if (w.part == TensorPart::kExperts) {
        expert_params += static_cast<double>(w.Params());
        c.expert_weight_bytes = CheckedAdd(c.expert_weight_bytes, TensorBytes(w, format, tp));
      }
    }
  }
  uint64_t all = StageWeightBytes(tensors, format, tp, 0, tensors.layers.size(), true, true);
  c.weights_from = WeightBytesSource(model, tensors, format);
  // The checkpoint's exact bytes, where they apply, spread as the architecture spreads them.
  const uint64_t arch = UsesCheckpointBytes(model, format) ? ModelWeightBytes(tensors, format) : 0;
  const auto exact = [&](uint64_t b) {
    return arch != 0 ? ScaleToCheckpoint(b, arch, model.checkpoint_bytes) : b;
  };
  all = exact(all);
  c.lookup_weight_bytes = std::min(all, exact(c.lookup_weight_bytes));
  c.expert_weight_bytes = std::min(all - c.lookup_weight_bytes, exact(c.expert_weight_bytes));
  c.dense_weight_bytes = all - c.lookup_weight_bytes - c.expert_weight_bytes;
  if (model.moe && model.moe->experts != 0) {
    c.experts = model.moe->experts;
    c.experts_per_token = model.moe->experts_per_token;
  }
  const double used =
      c.experts != 0 ? static_cast<double>(c.experts_per_token) / static_cast<double>(c.experts)
                     : 1.0;
  c.active_params = params - lookup_params - expert_params * (1.0 - used);
  if (tensors.from_architecture) {
    c.weight_passes = BuildWeightPasses(tensors, format, tp, lm_head);
    for (ModelCost::WeightPass& p : c.weight_passes) {
      p.bytes = exact(p.bytes);
      p.total = exact(p.total);
    }
  }
  return c;
}

double ExpertsTouchedFraction(uint64_t experts, uint64_t experts_per_token, uint64_t tokens) {
  if (experts == 0 || experts_per_token >= experts) return 1.0;
  const double miss = 1.0 - static_cast<double>(experts_per_token) / static_cast<double>(experts);
  return 1.0 - std::pow(miss, static_cast<double>(tokens));
}

namespace {

// A curve's value at a point is a weighted sum of at most four of its
// points: each index with its weight.
using Terms = std::vector<std::pair<size_t, double>>;

// The curve of one group (a run [first, last) of points sorted by bytes) at
// `bytes`: linearly in log(bytes) between the two nearest, clamped to the
// first and last.
Terms CurveTerms(const std::vector<BandwidthPoint>& c, size_t first, size_t last, uint64_t bytes) {
  if (bytes <= c[first].bytes) return {{first, 1.0}};
  if (bytes >= c[last - 1].bytes) return {{last - 1, 1.0}};
  size_t hi = first + 1;
  while (c[hi].bytes <= bytes) ++hi;
  const size_t lo = hi - 1;
  const double t =
      (std::log(static_cast<double>(bytes)) - std::log(static_cast<double>(c[lo].bytes))) /
      (std::log(static_cast<double>(c[hi].bytes)) - std::log(static_cast<double>(c[lo].bytes)));
  return {{lo, 1.0 - t}, {hi, t}};
}

// A curve with a second axis (`axis` of each point: its GQA group or its
// batch; the reader keeps each value's points contiguous and sorted) at
// (x, bytes): each measured value's curve at `bytes`, then linearly in log(x)
// between the two nearest values, clamped to the smallest and largest.
Terms CurveTerms2(const std::vector<BandwidthPoint>& c, uint64_t BandwidthPoint::*axis, uint64_t x,
                  uint64_t bytes) {
  struct Run {
    uint64_t x;
    size_t first, last;
  };
  std::vector<Run> runs;
  for (size_t i = 0; i < c.size();) {
    size_t end = i + 1;
    while (end < c.size() && c[end].*axis == c[i].*axis) ++end;
    runs.push_back({c[i].*axis, i, end});
    i = end;
  }
  if (x <= runs.front().x) return CurveTerms(c, runs.front().first, runs.front().last, bytes);
  if (x >= runs.back().x) return CurveTerms(c, runs.back().first, runs.back().last, bytes);
  size_t i = 1;
  while (runs[i].x < x) ++i;
  const Run& lo = runs[i - 1];
  const Run& hi = runs[i];
  const double t = (std::log(static_cast<double>(x)) - std::log(static_cast<double>(lo.x))) /
                   (std::log(static_cast<double>(hi.x)) - std::log(static_cast<double>(lo.x)));
  Terms out;
  for (auto [j, w] : CurveTerms(c, lo.first, lo.last, bytes)) out.emplace_back(j, w * (1.0 - t));
  for (auto [j, w] : CurveTerms(c, hi.first, hi.last, bytes)) out.emplace_back(j, w * t);
  return out;
}

double CurveAt2(const std::vector<BandwidthPoint>& c, uint64_t BandwidthPoint::*axis, uint64_t x,
                uint64_t bytes) {
  double v = 0;
  for (auto [j, w] : CurveTerms2(c, axis, x, bytes)) v += w * c[j].gbps;
  return v;
}

std::vector<size_t> Indices(const Terms& terms) {
  std::vector<size_t> out;
  for (auto [j, w] : terms) {
    if (w != 0 && std::find(out.begin(), out.end(), j) == out.end()) out.push_back(j);
  }
  return out;
}

}  // namespace

double StepBandwidthGbps(const HardwareSpec& hw, uint64_t bytes, uint64_t group) {
  if (!HasMeasuredCurve(hw)) return hw.memory_bandwidth_gbps * kDatasheetBandwidthEfficiency;
  return CurveAt2(hw.measured->curve, &BandwidthPoint::group, group, bytes);
}

double WeightsBandwidthGbps(const HardwareSpec& hw, uint64_t bytes, uint64_t batch) {
  if (hw.measured && !hw.measured->weights_curve.empty()) {
    return CurveAt2(hw.measured->weights_curve, &BandwidthPoint::batch, batch, bytes);
  }
  return StepBandwidthGbps(hw, bytes, 1);
}

std::vector<size_t> CurvePointsRead(const HardwareSpec& hw, uint64_t bytes, uint64_t group) {
  if (!HasMeasuredCurve(hw)) return {};
  return Indices(CurveTerms2(hw.measured->curve, &BandwidthPoint::group, group, bytes));
}

std::vector<size_t> WeightsCurvePointsRead(const HardwareSpec& hw, uint64_t bytes, uint64_t batch) {
  if (!hw.measured || hw.measured->weights_curve.empty()) return {};
  return Indices(CurveTerms2(hw.measured->weights_curve, &BandwidthPoint::batch, batch, bytes));
}

namespace {

// The bytes of one of `passes` passes that share `bytes` (at least 1).
uint64_t PassBytes(uint64_t bytes, uint64_t passes) {
  return std::max<uint64_t>(1, bytes / std::max<uint64_t>(1, passes));
}

// The bytes a pass reads, where the curve is read: a routed-expert pass, the
// touched experts' share of the layer's stacked experts.
uint64_t PassLookupBytes(const ModelCost::WeightPass& p, double touched) {
  if (!p.expert) return p.bytes;
  return std::max<uint64_t>(
      1, static_cast<uint64_t>(std::llround(static_cast<double>(p.bytes) * touched)));
}

}  // namespace

std::vector<uint64_t> WeightPassBytes(const ModelCost& cost, uint64_t weight_bytes,
                                      uint64_t batch) {
  std::vector<uint64_t> out;
  if (cost.weight_passes.empty()) {
    if (weight_bytes != 0) out.push_back(PassBytes(weight_bytes, cost.layers));
    return out;
  }
  const double touched = ExpertsTouchedFraction(cost.experts, cost.experts_per_token, batch);
  for (const ModelCost::WeightPass& p : cost.weight_passes) {
    out.push_back(PassLookupBytes(p, touched));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

const char* BoundName(Bound b) {
  return b == Bound::kCompute ? "compute" : "bandwidth";
}

double PeakFlopsFor(const HardwareSpec& hw, const std::string& compute_dtype) {
  double peak = hw.PeakFlops(compute_dtype);
  if (peak == 0) peak = hw.PeakFlops("bf16");
  return peak;
}

std::string PeakDtypeFor(const HardwareSpec& hw, const std::string& compute_dtype) {
  if (hw.PeakFlops(compute_dtype) != 0) return compute_dtype;
  if (hw.PeakFlops("bf16") != 0) return "bf16";
  return "";
}

namespace {

// One phase on its roofline, its bytes read at `bandwidth_gbps`.
PhaseEstimate Phase(uint64_t bytes, uint64_t pass_bytes, double flops, double bandwidth_gbps,
                    double peak) {
  PhaseEstimate p;
  p.bytes = bytes;
  p.pass_bytes = pass_bytes;
  p.flops = flops;
  if (bytes != 0) {
    p.bandwidth_gbps = bandwidth_gbps;
    p.memory_s = p.bandwidth_gbps > 0 ? static_cast<double>(bytes) / (p.bandwidth_gbps * 1e9) : 0;
  }
  p.compute_s = peak > 0 ? flops / (peak * kComputeEfficiency) : 0;
  p.bound = p.compute_s > p.memory_s ? Bound::kCompute : Bound::kBandwidth;
  p.seconds = std::max(p.memory_s, p.compute_s);
  return p;
}

// Seconds to read the step's weights: each pass at the weights curve's
// bandwidth for its own size and `batch`, routed experts' passes at the
// `touched` fraction (without passes: one layer's share of `weight_bytes`).
double WeightsMemorySeconds(const ModelCost& cost, const HardwareSpec& hw, uint64_t weight_bytes,
                            uint64_t batch, double touched) {
  if (cost.weight_passes.empty()) {
    const double bw = WeightsBandwidthGbps(hw, PassBytes(weight_bytes, cost.layers), batch);
    return bw > 0 ? static_cast<double>(weight_bytes) / (bw * 1e9) : 0;
  }
  double seconds = 0;
  for (const ModelCost::WeightPass& p : cost.weight_passes) {
    const double bw = WeightsBandwidthGbps(hw, PassLookupBytes(p, touched), batch);
    if (bw <= 0) return 0;
    seconds += static_cast<double>(p.total) * (p.expert ? touched : 1.0) / (bw * 1e9);
  }
  return seconds;
}

// `batch`: the sequences (decode) or tokens (prefill) each weight GEMV
// multiplies; `touched`: the fraction of routed experts they read.
StepEstimate Finish(StepEstimate e, const ModelCost& cost, double weight_flops,
                    double attention_flops, const HardwareSpec& hw, uint64_t batch,
                    double touched) {
  // Two peaks: the weight GEMMs run in the weight format (fp8 x fp8 on the
  // fp8 tensor cores), attention in the activations' 16-bit type.
  e.peak_flops = PeakFlopsFor(hw, cost.compute_dtype);
  e.attention_peak_flops = PeakFlopsFor(hw, cost.attention_dtype);
  e.flops = weight_flops + attention_flops;
  // Each layer's attention is a separate pass: its bandwidth is looked up at
  // one layer's bytes. Each weight matrix is a GEMV of its own: the weights'
  // bandwidth is their bytes over the sum of each matrix's time.
  const std::vector<uint64_t> weight_passes = WeightPassBytes(cost, e.weight_bytes, batch);
  const uint64_t kv_pass = PassBytes(e.kv_bytes, cost.cache_layers);
  const double weights_s = WeightsMemorySeconds(cost, hw, e.weight_bytes, batch, touched);
  e.weights = Phase(e.weight_bytes, weight_passes.empty() ? 0 : weight_passes.back(), weight_flops,
                    weights_s > 0 ? static_cast<double>(e.weight_bytes) / (weights_s * 1e9) : 0,
                    e.peak_flops);
  e.attention = Phase(e.kv_bytes, kv_pass, attention_flops,
                      StepBandwidthGbps(hw, kv_pass, cost.attention_group), e.attention_peak_flops);
  e.memory_s = e.weights.memory_s + e.attention.memory_s;
  e.compute_s = e.weights.compute_s + e.attention.compute_s;
  e.seconds = e.weights.seconds + e.attention.seconds;
  e.bound = e.compute_s > e.memory_s ? Bound::kCompute : Bound::kBandwidth;
  e.bandwidth_gbps =
      e.memory_s > 0 ? static_cast<double>(e.weight_bytes + e.kv_bytes) / (e.memory_s * 1e9) : 0;
  return e;
}

}  // namespace

StepEstimate EstimateDecodeStep(const ModelCost& cost, const HardwareSpec& hw, uint64_t context,
                                uint64_t batch) {
  StepEstimate e;
  const double touched = ExpertsTouchedFraction(cost.experts, cost.experts_per_token, batch);
  e.weight_bytes = CheckedAdd(
      cost.dense_weight_bytes,
      static_cast<uint64_t>(std::llround(static_cast<double>(cost.expert_weight_bytes) * touched)));
  e.kv_bytes = cost.kv.ReadBytes(context, batch);
  const double b = static_cast<double>(batch);
  double attention = cost.attention_flops_per_token_ctx * static_cast<double>(context);
  for (const ModelCost::WindowedGroup& g : cost.windowed) {
    attention += g.flops_per_token_ctx * static_cast<double>(std::min(context, g.window));
  }
  return Finish(e, cost, b * 2 * cost.active_params / static_cast<double>(cost.tp), b * attention,
                hw, batch, touched);
}

StepEstimate EstimatePrefill(const ModelCost& cost, const HardwareSpec& hw, uint64_t prompt) {
  StepEstimate e;
  const double touched = ExpertsTouchedFraction(cost.experts, cost.experts_per_token, prompt);
  e.weight_bytes = CheckedAdd(
      cost.dense_weight_bytes,
      static_cast<uint64_t>(std::llround(static_cast<double>(cost.expert_weight_bytes) * touched)));
  e.kv_bytes = cost.kv.TotalBytes(prompt, 1);
  return Finish(e, cost,
                2 * cost.active_params / static_cast<double>(cost.tp) * static_cast<double>(prompt),
                PrefillAttentionFlops(cost, prompt), hw, prompt, touched);
}

uint64_t ComputeBoundBatch(const ModelCost& cost, const HardwareSpec& hw, uint64_t context,
                           uint64_t limit) {
  for (uint64_t b = 1; b <= limit; b *= 2) {
    if (EstimateDecodeStep(cost, hw, context, b).bound == Bound::kCompute) return b;
  }
  return 0;
}

uint64_t WeightsComputeBoundBatch(const ModelCost& cost, const HardwareSpec& hw, uint64_t context,
                                  uint64_t limit) {
  const auto compute = [&](uint64_t b) {
    return EstimateDecodeStep(cost, hw, context, b).weights.bound == Bound::kCompute;
  };
  if (limit == 0) return 0;
  uint64_t hi = 1;
  while (hi < limit && !compute(hi)) hi = std::min(hi * 2, limit);
  if (!compute(hi)) return 0;
  uint64_t lo = hi / 2;  // bandwidth-bound (or 0, below every batch)
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (compute(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace kvplan
