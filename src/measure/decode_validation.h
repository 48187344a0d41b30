// The latency model's validation: a synthetic decode step of a small
// Llama-shaped model on this CPU (random fp16 weights, a real fp16 KV cache:
// RMSNorm, QKV / O / gated-MLP GEMVs, the kernels' decode attention over the
// cache, lm_head), timed; and the model's prediction for the same step from
// a bandwidth curve measured on attention alone. The shapes validated are
// never the shapes the curve was measured on.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "measure/ceilings.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"

namespace kvplan::kernels {

struct SyntheticModel {
  int64_t layers = 8;
  int64_t hidden = 1024;
  int64_t q_heads = 8;
  int64_t kv_heads = 2;
  int64_t head_dim = 128;
  int64_t intermediate = 2816;
  int64_t vocab = 32000;
};

/// The ModelSpec of `m` (fp16 weights, untied embedding, gated MLP, RMSNorm,
/// full attention), validated, for ComputeModelCost.
ModelSpec SyntheticModelSpec(const SyntheticModel& m);

struct ValidationShape {
  int64_t context = 4096;
  int64_t batch = 1;
};

struct ValidationPoint {
  ValidationShape shape;
  double measured_s = 0;             // median step time
  double predicted_s = 0;            // EstimateDecodeStep(...).seconds
  double measured_attention_s = 0;   // median time of the step spent in decode attention
  double predicted_attention_s = 0;  // the model's attention phase
  uint64_t bytes = 0;                // weights + KV the model says a step reads
  /// The read ceiling measured right before each timed step (median), and
  /// the steps' time at the profile's ceiling: the median over the steps of
  /// time x (ceiling beside it / the profile's read ceiling). See DriftProbe.
  double ceiling_gbps = 0;
  double adjusted_measured_s = 0;
  double adjusted_attention_s = 0;  // the attention's time, stated the same way
  double Error() const { return predicted_s / measured_s - 1.0; }
  /// The model's error with the machine's drift since the profile taken out.
  double AdjustedError() const { return predicted_s / adjusted_measured_s - 1.0; }
};

/// How steps are run and timed. threads 0: all cores (OpenMP's default),
/// wall-clock time, as `kvplan bench` times. threads 1: one thread timed by
/// its own CPU time, which a loaded shared machine distorts far less (time
/// spent descheduled is not counted; time stalled on memory is).
struct TimingMode {
  int threads = 0;
  bool SingleThreadCpuClock() const { return threads == 1; }
};

/// The read ceiling, read again beside each timing: one pass over a buffer
/// the size of the last-level cache (256 MiB to 1 GiB) on the mode's
/// threads and clock. On a shared machine the speed of memory and cores
/// drifts from one minute to the next (the read ceiling can move by half
/// within one bench run), so a time measured beside a ceiling c is also
/// stated at the reference ceiling: t x c / reference. Times stated that
/// way on both sides of a comparison (the curve and the steps) compare as
/// if measured at the same moment; the reference itself cancels out.
class DriftProbe {
 public:
  /// bytes: the buffer (0: the last-level cache's size, 256 MiB to 1 GiB).
  /// reference: GB/s times are stated at (0: the median of 5 passes now).
  explicit DriftProbe(TimingMode mode, uint64_t bytes = 0, double reference = 0);
  double reference() const { return reference_; }
  /// One pass now, GB/s.
  double Read() { return meter_.MeasureOnce(); }
  /// A time of `seconds` measured beside a read of `ceiling_gbps`, at the reference.
  double AtReference(double seconds, double ceiling_gbps) const {
    return seconds * ceiling_gbps / reference_;
  }

 private:
  kernels::ReadCeilingMeter meter_;
  double reference_ = 0;
};

/// Times `repeats` decode steps (median, caches flushed before each) of `m`
/// at each shape, and predicts each with the latency model on `hw`. The
/// ceiling is read before each step and the steps also stated at `hw`'s
/// read ceiling (ValidationPoint::adjusted_measured_s).
/// `progress` (may be empty) is told what runs. With `remeasure` (a profile
/// measured in this process, in `mode`), the curve points each shape's
/// prediction reads (CurvePointsRead: at most four; WeightsCurvePointsRead
/// at each weight matrix's size) are measured again right before its steps, stated at the
/// same reference, and the prediction reads them: on a shared machine whose
/// speed drifts by tens of percent from one minute to the next, the
/// prediction's inputs and the steps it predicts then come from the same
/// moment. The shapes are still never the curve's shapes.
std::vector<ValidationPoint> ValidateDecodeModel(
    const SyntheticModel& m, const std::vector<ValidationShape>& shapes, const HardwareSpec& hw,
    int repeats, TimingMode mode, const std::function<void(const std::string&)>& progress,
    bool remeasure = false);

/// The weight GEMV's bandwidth curve in `mode`: fp16 matrices of 2048
/// columns and 2, 8, 32 and 128 MiB (capped at `max_bytes`), at batch 1, 2
/// and 4 (one matrix read for 1, 2 or 4 vectors: a batch-4 GEMV reads more
/// slowly per byte than batch 1), caches flushed, median of 7 (the
/// profile's weights_curve). With a `probe`, the ceiling is read before each
/// timing and every point is stated at the probe's reference.
std::vector<BandwidthPoint> MeasureWeightsCurve(TimingMode mode, uint64_t max_bytes = UINT64_MAX,
                                                DriftProbe* probe = nullptr);

/// A profile measured now, in `mode`: the read ceiling, the bench's
/// bandwidth curve shapes (fp16 attention, 8 KV heads x 128, batch 1, at
/// each of `curve_contexts` for each GQA group in `groups`; caches flushed,
/// median of 7) and the weights curve, as `kvplan bench --save` writes it,
/// every point stated at the read ceiling measured first (DriftProbe).
HardwareSpec MeasureProfileNow(const std::vector<int64_t>& curve_contexts,
                               const std::vector<int64_t>& groups, TimingMode mode,
                               const std::function<void(const std::string&)>& progress);

}  // namespace kvplan::kernels
