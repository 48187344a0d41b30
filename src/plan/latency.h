// The latency model: time to first token (TTFT) and time per output token
// (TPOT) of a model on an accelerator, from bytes moved and FLOPs done.
//
// Decode (one step of a batch of B sequences at context n), per tensor-
// parallel rank, in two phases that run one after the other, each on its
// own roofline:
//   weights   = max(weight bytes / bandwidth(weight bytes per layer),
//                   2 * active params * B / (weight peak * eff))
//   attention = max(KV bytes / bandwidth(KV bytes per caching layer),
//                   attention FLOPs / (attention peak * eff))
//   TPOT      = weights + attention
// The weight peak is the weight format's (fp8 weights: the fp8 peak); the
// attention peak is the 16-bit activations' (bf16), whatever the weights.
// memory time and compute time are the sums of the two phases' terms; the
// larger names the bound. bandwidth(bytes) is the measured curve of a
// `kvplan bench --save` profile at the bytes one pass reads (log-linear
// interpolation, clamped at the ends), and small passes stream slower than
// large ones: attention is one pass per layer over its slice of the cache;
// the weights one GEMV per matrix (q/k/v fused as engines fuse them, gate
// and up likewise, a layer's touched routed experts one fused-MoE pass), so the weight bytes over
// bandwidth is a sum over the matrices, each at its own size. With no curve
// it is the datasheet figure x kDatasheetBandwidthEfficiency.
// Prefill of a P-token prompt, the same two phases:
//   weights   = max(all weights / bandwidth, 2 * active params * P / (weight peak * eff))
//   attention = max(the prompt's KV / bandwidth, causal attention FLOPs / (attention peak * eff))
//   TTFT      = weights + attention
// docs/latency.md states every assumption and why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/kv.h"
#include "plan/weights.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"

namespace kvplan {

/// Decode reaches this fraction of the datasheet bandwidth when no measured
/// profile is given: optimised engines (vLLM, TensorRT-LLM) report a model
/// bandwidth utilisation (MBU) of about 60-85% in memory-bound decode.
inline constexpr double kDatasheetBandwidthEfficiency = 0.75;
/// Fraction of the dense peak FLOP/s large matmuls reach (prefill, and
/// decode at large batch): the MFU serving engines report is about 50-70%.
inline constexpr double kComputeEfficiency = 0.6;

/// What a model moves and computes, per tensor-parallel rank, independent of
/// the batch and context (those are arguments of the functions below).
struct ModelCost {
  uint64_t tp = 1;
  uint64_t layers = 0;               // decoder layers (each reads its slice of the weights)
  uint64_t cache_layers = 0;         // layers that read a KV cache or state per step
  uint64_t attention_group = 1;      // query heads per KV head (MLA: every head shares the latent)
  uint64_t dense_weight_bytes = 0;   // weights every decode step reads on a rank:
                                     // all but routed experts and lookup tables
  uint64_t expert_weight_bytes = 0;  // every routed expert on a rank
  uint64_t lookup_weight_bytes = 0;  // embedding / position tables: a step reads B rows only
  uint64_t experts = 0;              // routed experts per MoE layer (0: dense model)
  uint64_t experts_per_token = 0;
  double active_params = 0;                  // matmul parameters one token uses, whole model
  double attention_flops_per_token_ctx = 0;  // per rank: FLOPs of one query per cached token
                                             // over all full-attention layers
  struct WindowedGroup {
    uint64_t window;
    double flops_per_token_ctx;
  };
  std::vector<WindowedGroup> windowed;  // sliding/chunked groups, per rank
  KvCost kv;                            // per rank
  std::string weight_dtype;             // the weight format's name
  std::string weight_format;            // its label, e.g. "mxfp4 (experts only)"
  std::string weights_from;             // where the weight bytes come from (WeightBytesSource)
  std::string compute_dtype;            // the FLOPs key the weight matmuls' peak is wanted from
  std::string attention_dtype;          // the FLOPs key attention's peak is wanted from: the
                                        // activations' 16-bit type (fp32 for fp32 weights)
  /// The weight matrices a step reads, one pass (one GEMV) each, by size:
  /// what the weights curve is read at. Empty when only `params` is known
  /// (no architecture): then one pass per layer of a layer's share.
  struct WeightPass {
    uint64_t bytes = 0;   // one matrix per rank (routed experts: one layer's stacked
                          // experts, of which a step reads the touched fraction)
    uint64_t total = 0;   // every read of this size in one step, all experts touched
    bool expert = false;  // routed experts: a step reads the touched fraction of total
  };
  std::vector<WeightPass> weight_passes;  // sorted by bytes; totals sum to
                                          // dense_weight_bytes + expert_weight_bytes
};

/// Builds the per-rank cost of `model` with `weights` in `format`, a KV cache
/// of `dtype`, on `tp` ranks (call CheckKvConfig first).
ModelCost ComputeModelCost(const ModelSpec& model, const CacheDtype& dtype,
                           const WeightFormat& format, uint64_t tp);

/// Expected fraction of a layer's routed experts that a batch of `tokens`
/// tokens touches, each token picking k of E uniformly and independently:
/// 1 - (1 - k/E)^tokens (1 for a dense model).
double ExpertsTouchedFraction(uint64_t experts, uint64_t experts_per_token, uint64_t tokens);

/// The bandwidth a pass reading `bytes` bytes achieves, GB/s: the measured
/// curve (interpolated linearly in log(bytes), clamped to its first and last
/// points) when `hw` carries one, else datasheet x kDatasheetBandwidthEfficiency.
/// A curve measured at several GQA groups is read at `group` (query heads per
/// KV head): linearly in log(group) between the two nearest measured groups,
/// clamped to the smallest and largest.
double StepBandwidthGbps(const HardwareSpec& hw, uint64_t bytes, uint64_t group = 1);

/// The bandwidth the weight GEMVs achieve reading a matrix of `bytes` bytes
/// for `batch` sequences at once: the profile's measured weights_curve when
/// it has one (interpolated and clamped as above, with batch in the place of
/// group), else StepBandwidthGbps(hw, bytes, 1).
double WeightsBandwidthGbps(const HardwareSpec& hw, uint64_t bytes, uint64_t batch = 1);

/// The points of `hw`'s measured curve (indices into measured->curve) that
/// StepBandwidthGbps(hw, bytes, group) is made of: at most four (two sizes
/// at each of two groups), fewer where it is clamped or lands on a measured
/// size or group; none without a measured curve.
std::vector<size_t> CurvePointsRead(const HardwareSpec& hw, uint64_t bytes, uint64_t group);

/// The same for WeightsBandwidthGbps (indices into measured->weights_curve;
/// none where there is no weights curve).
std::vector<size_t> WeightsCurvePointsRead(const HardwareSpec& hw, uint64_t bytes, uint64_t batch);

/// The sizes (ascending, each once) the weights curve is read at for one
/// step of `batch` sequences (prefill: tokens) that reads `weight_bytes` of
/// weights: each of cost.weight_passes' sizes, a routed-expert pass at the
/// touched fraction of its layer's experts; or one layer's share of
/// `weight_bytes` when the architecture is not known.
std::vector<uint64_t> WeightPassBytes(const ModelCost& cost, uint64_t weight_bytes, uint64_t batch);

/// True when StepBandwidthGbps uses a measured curve.
inline bool HasMeasuredCurve(const HardwareSpec& hw) {
  return hw.measured.has_value() && !hw.measured->curve.empty();
}

enum class Bound { kBandwidth, kCompute };

/// "bandwidth" or "compute".
const char* BoundName(Bound b);

/// One phase of a step (the weight matmuls, or attention over the cache) on
/// its roofline.
struct PhaseEstimate {
  uint64_t bytes = 0;         // read per step per rank
  double flops = 0;           // per rank
  uint64_t pass_bytes = 0;    // attention: one layer's pass, where the curve is read;
                              // weights: the largest matrix (WeightPassBytes has them all)
  double bandwidth_gbps = 0;  // bytes / memory_s: attention, the curve at pass_bytes;
                              // weights, the passes' harmonic mean by bytes
  double memory_s = 0;
  double compute_s = 0;
  double seconds = 0;  // max(memory_s, compute_s)
  Bound bound = Bound::kBandwidth;
};

struct StepEstimate {
  uint64_t weight_bytes = 0;        // read per step per rank
  uint64_t kv_bytes = 0;            // read per step per rank (prefill: written)
  double flops = 0;                 // per rank
  double bandwidth_gbps = 0;        // effective: (weight_bytes + kv_bytes) / memory_s
  double peak_flops = 0;            // dense peak the weight matmuls run at, per rank
  double attention_peak_flops = 0;  // dense peak attention runs at (16-bit), per rank
  PhaseEstimate weights;            // weight matmuls (prefill: the linear part)
  PhaseEstimate attention;          // attention over the cache (prefill: the quadratic part)
  double memory_s = 0;              // weights.memory_s + attention.memory_s
  double compute_s = 0;             // weights.compute_s + attention.compute_s
  double seconds = 0;               // weights.seconds + attention.seconds
  Bound bound = Bound::kBandwidth;  // compute when compute_s > memory_s
};

/// One decode step of `batch` sequences at `context` tokens each.
StepEstimate EstimateDecodeStep(const ModelCost& cost, const HardwareSpec& hw, uint64_t context,
                                uint64_t batch);

/// Prefill of one `prompt`-token request: causal attention over the prompt,
/// with the floor of reading every weight once and writing its KV.
StepEstimate EstimatePrefill(const ModelCost& cost, const HardwareSpec& hw, uint64_t prompt);

/// Dense peak FLOP/s of `hw` for `compute_dtype`, falling back to fp16/bf16
/// (weight-only formats compute in 16 bits); 0 when the spec lists neither.
double PeakFlopsFor(const HardwareSpec& hw, const std::string& compute_dtype);

/// The FLOPs key PeakFlopsFor really reads for `compute_dtype`: the dtype
/// itself when `hw` lists it, else "bf16" when it lists that (an fp8 model on
/// an A100, nvfp4 on an H100: the engine dequantizes to 16 bits), else "".
std::string PeakDtypeFor(const HardwareSpec& hw, const std::string& compute_dtype);

/// Pairs (query, key) of causal attention over a `prompt`-token prompt, each
/// query attending to at most `window` earlier tokens (0: no window):
/// P (P + 1) / 2, or w (w + 1) / 2 + (P - w) w past the window.
double CausalPairs(uint64_t prompt, uint64_t window);

/// Attention FLOPs per rank of one `prompt`-token prefill (causal pairs,
/// capped at each windowed group's window).
double PrefillAttentionFlops(const ModelCost& cost, uint64_t prompt);

/// The attention part of a ModelCost (attention_flops_per_token_ctx and
/// windowed) for `model` on `tp` ranks, without the weights: what
/// `size --explain` needs to say how prefill work grows.
ModelCost AttentionCost(const ModelSpec& model, uint64_t tp);

/// The smallest power-of-two batch (up to `limit`) whose decode step at
/// `context` is compute-bound, or 0 when none up to `limit` is.
uint64_t ComputeBoundBatch(const ModelCost& cost, const HardwareSpec& hw, uint64_t context,
                           uint64_t limit);

/// The smallest batch (up to `limit`) at which the weights phase of a
/// decode step at `context` is compute-bound: the weight GEMMs' FLOPs (2
/// per weight per sequence) at the compute peak outlast reading the weights,
/// the roofline's ridge for them. The step as a whole can stay
/// bandwidth-bound past it (the KV bytes grow with the batch too). Doubling,
/// then bisection: exact where the phase's bound changes once as the batch
/// grows. 0 when none up to `limit` is.
uint64_t WeightsComputeBoundBatch(const ModelCost& cost, const HardwareSpec& hw, uint64_t context,
                                  uint64_t limit);

}  // namespace kvplan
