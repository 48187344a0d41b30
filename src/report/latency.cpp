#include "report/latency.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "report/table.h"
#include "report/terminal.h"
#include "util/units.h"

namespace kvplan {
namespace {

std::string Ms(double s) {
  return Sig3(s * 1e3);
}
std::string Rate(double per_s) {
  return per_s >= 100 ? fmt::format("{:.0f}", per_s) : fmt::format("{:.3g}", per_s);
}

std::string BandwidthSource(const HardwareSpec& hw, const ModelCost& cost) {
  const uint64_t group = cost.attention_group;
  if (HasMeasuredCurve(hw)) {
    std::vector<uint64_t> groups;
    for (const BandwidthPoint& p : hw.measured->curve) {
      if (groups.empty() || groups.back() != p.group) groups.push_back(p.group);
    }
    const std::string by_group = groups.size() > 1
                                     ? fmt::format(" at GQA groups {}; attention read at group {}",
                                                   fmt::join(groups, ", "), group)
                                     : "";
    const std::string weights =
        hw.measured->weights_curve.empty()
            ? ""
            : fmt::format(
                  "; weights at the GEMV curve, {} points{}, {}", hw.measured->weights_curve.size(),
                  hw.measured->weights_curve.back().batch > 1
                      ? fmt::format(" at batch 1-{}", hw.measured->weights_curve.back().batch)
                      : "",
                  cost.weight_passes.empty() ? "at one layer's share (no architecture)"
                                             : "each matrix at its size");
    return fmt::format("measured curve of {} ({} points{}{}, {})", hw.origin,
                       hw.measured->curve.size(), by_group, weights,
                       hw.measured->machine.empty() ? hw.display_name : hw.measured->machine);
  }
  return fmt::format("datasheet {:.0f} GB/s x {:.2f} (typical decode bandwidth utilisation)",
                     hw.memory_bandwidth_gbps, kDatasheetBandwidthEfficiency);
}

// "fp8 dense peak 1,979 TFLOP/s x 0.60", saying which dtype's peak is really
// used: a format the GPU lists no figure for (fp4 on an H100, fp8 on an
// A100) runs dequantized at the bf16 peak, and the label must not claim fp4.
std::string PeakLabel(const HardwareSpec& hw, const std::string& wanted, double peak) {
  const std::string used = PeakDtypeFor(hw, wanted);
  if (used.empty()) {
    return fmt::format("no {} or bf16 peak listed for {}: compute time not modelled (0)", wanted,
                       hw.name);
  }
  return fmt::format("{} dense peak {:.4g} TFLOP/s x {:.2f}{}", used, peak / 1e12,
                     kComputeEfficiency,
                     used == wanted ? "" : fmt::format(" (no {} figure for {})", wanted, hw.name));
}

// Weights + KV on one rank at `batch` sequences: what must be resident for
// the step to run at all (activations and the engine's reserve come on top,

Json StepJson(const StepEstimate& e) {
  Json j;
  j.Set("weight_bytes", e.weight_bytes);
  j.Set("kv_bytes", e.kv_bytes);
  j.Set("flops", e.flops);
  j.Set("bandwidth_gbps", e.bandwidth_gbps);
  j.Set("peak_flops", e.peak_flops);
  j.Set("attention_peak_flops", e.attention_peak_flops);
  j.Set("memory_ms", e.memory_s * 1e3);
  j.Set("compute_ms", e.compute_s * 1e3);
  j.Set("bound", BoundName(e.bound));
  for (const auto& [key, ph] : {std::pair<const char*, const PhaseEstimate*>{"weights", &e.weights},
                                {"attention", &e.attention}}) {
    Json p;
    p.Set("bytes", ph->bytes);
    p.Set("flops", ph->flops);
    p.Set("bandwidth_gbps", ph->bandwidth_gbps);
    p.Set("memory_ms", ph->memory_s * 1e3);
    p.Set("compute_ms", ph->compute_s * 1e3);
    p.Set("ms", ph->seconds * 1e3);
    p.Set("bound", BoundName(ph->bound));
    j.Set(key, std::move(p));
  }
  return j;
}

// A bandwidth with the digits to check a line by hand: "2,512 GB/s" but
// "6.2 GB/s" (a CPU profile), not "6 GB/s".
std::string Gbps(double gbps) {
  return gbps >= 100 ? WithCommas(static_cast<uint64_t>(std::llround(gbps)))
                     : fmt::format("{:.3g}", gbps);
}

// "weights    15.01 GB at 2,512 GB/s = 5.98 ms | 32.1 TFLOP ... = ... ms -> ..."
std::string PhaseLine(const char* name, const PhaseEstimate& p, double peak) {
  return fmt::format(
      "      {:<10} {} at {} GB/s = {} ms | {} TFLOP at {:.4g} TFLOP/s = {} ms"
      "  -> {} ms ({})\n",
      name, FormatGB(p.bytes), Gbps(p.bandwidth_gbps), Ms(p.memory_s), Sig3(p.flops / 1e12),
      peak * kComputeEfficiency / 1e12, Ms(p.compute_s), Ms(p.seconds), BoundName(p.bound));
}

Table BatchTable(const LatencySetup& s, const std::vector<uint64_t>& batches) {
  Table t({"batch", "weights read", "KV read", "memory ms", "compute ms", "TPOT ms", "tok/s/seq",
           "tok/s total", "bound"});
  // Left out first when too wide: the bytes (the lines above state them at
  // the chosen batch), then the two times TPOT is the sum of.
  t.SetDropOrder(1, 4);
  t.SetDropOrder(2, 3);
  t.SetDropOrder(3, 2);
  t.SetDropOrder(4, 1);
  for (uint64_t b : batches) {
    StepEstimate e = EstimateDecodeStep(s.cost, s.hw, s.context, b);
    t.AddRow({std::to_string(b) + (Fits(s, b) ? "" : "*"), FormatGB(e.weight_bytes),
              FormatGB(e.kv_bytes), Ms(e.memory_s), Ms(e.compute_s), Ms(e.seconds),
              Rate(1.0 / e.seconds), Rate(static_cast<double>(b) / e.seconds), BoundName(e.bound)});
  }
  return t;
}

}  // namespace

std::string LatencyCsv(const LatencySetup& s, const std::vector<uint64_t>& batches) {
  Table t({"batch", "fits", "resident_bytes", "weight_bytes", "kv_bytes", "memory_ms", "compute_ms",
           "tpot_ms", "tokens_per_s_per_sequence", "tokens_per_s_aggregate", "bound"});
  for (uint64_t b : batches) {
    StepEstimate e = EstimateDecodeStep(s.cost, s.hw, s.context, b);
    t.AddRow({std::to_string(b), Fits(s, b) ? "true" : "false", std::to_string(ResidentBytes(s, b)),
              std::to_string(e.weight_bytes), std::to_string(e.kv_bytes),
              fmt::format("{:.6g}", e.memory_s * 1e3), fmt::format("{:.6g}", e.compute_s * 1e3),
              fmt::format("{:.6g}", e.seconds * 1e3), fmt::format("{:.6g}", 1.0 / e.seconds),
              fmt::format("{:.6g}", static_cast<double>(b) / e.seconds), BoundName(e.bound)});
  }
  return t.Csv();
}

Json LatencyJson(const LatencySetup& s, const StepEstimate& decode, const StepEstimate& prefill,
                 const std::vector<uint64_t>& batches) {
  Json j;
  j.Set("model", s.model.name);
  j.Set("hardware", s.hw.name);
  j.Set("tp", s.cost.tp);
  j.Set("weight_dtype", s.cost.weight_dtype);
  j.Set("weight_format", s.cost.weight_format);
  if (s.cost.weights_from.rfind("exact:", 0) == 0) j.Set("weights_from", s.cost.weights_from);
  j.Set("kv_cache_dtype", s.kv_dtype);
  j.Set("context_tokens", s.context);
  j.Set("batch", s.batch);
  j.Set("prompt_tokens", s.prompt);
  j.Set("ttft_ms", prefill.seconds * 1e3);
  j.Set("tpot_ms", decode.seconds * 1e3);
  j.Set("bound", BoundName(decode.bound));
  j.Set("prefill_bound", BoundName(prefill.bound));
  j.Set("tokens_per_s_per_sequence", 1.0 / decode.seconds);
  j.Set("tokens_per_s_aggregate", static_cast<double>(s.batch) / decode.seconds);
  j.Set("bandwidth_source", HasMeasuredCurve(s.hw) ? "measured" : "datasheet");
  j.Set("bandwidth_gbps", decode.bandwidth_gbps);
  j.Set("bandwidth_efficiency", HasMeasuredCurve(s.hw) ? 1.0 : kDatasheetBandwidthEfficiency);
  j.Set("compute_efficiency", kComputeEfficiency);
  // The dtypes whose peaks are really used ("" when the spec lists none).
  j.Set("compute_dtype", PeakDtypeFor(s.hw, s.cost.compute_dtype));
  j.Set("attention_compute_dtype", PeakDtypeFor(s.hw, s.cost.attention_dtype));
  j.Set("weights_format_compute_dtype", s.cost.compute_dtype);
  j.Set("memory_bytes", s.hw.TotalMemoryBytes());
  j.Set("weight_bytes_resident", WeightBytes(s));
  j.Set("resident_bytes", ResidentBytes(s, s.batch));
  j.Set("weights_fit", s.hw.TotalMemoryBytes() == 0 || WeightBytes(s) <= s.hw.TotalMemoryBytes());
  j.Set("fits", Fits(s, s.batch));
  const uint64_t turn = ComputeBoundBatch(s.cost, s.hw, s.context, 1 << 16);
  j.Set("compute_bound_batch", turn == 0 ? Json(nullptr) : Json(turn));
  const uint64_t wturn = WeightsComputeBoundBatch(s.cost, s.hw, s.context, 1 << 16);
  j.Set("weights_compute_bound_batch", wturn == 0 ? Json(nullptr) : Json(wturn));
  j.Set("decode", StepJson(decode));
  j.Set("prefill", StepJson(prefill));
  Json rows = Json::MakeArray();
  for (uint64_t b : batches) {
    StepEstimate e = EstimateDecodeStep(s.cost, s.hw, s.context, b);
    Json r = StepJson(e);
    r.Set("batch", b);
    r.Set("resident_bytes", ResidentBytes(s, b));
    r.Set("fits", Fits(s, b));
    r.Set("tpot_ms", e.seconds * 1e3);
    r.Set("tokens_per_s_per_sequence", 1.0 / e.seconds);
    r.Set("tokens_per_s_aggregate", static_cast<double>(b) / e.seconds);
    rows.Push(std::move(r));
  }
  j.Set("batches", std::move(rows));
  return j;
}

std::string LatencyText(const LatencySetup& s, const StepEstimate& decode,
                        const StepEstimate& prefill, const std::vector<uint64_t>& batches,
                        size_t width) {
  std::string out;
  out += fmt::format("{} on {} · weights {} · KV cache {} · tensor parallel {}\n", s.model.name,
                     s.hw.display_name, s.cost.weight_format, s.kv_dtype, s.cost.tp);
  out += fmt::format("bandwidth: {}\n", BandwidthSource(s.hw, s.cost));
  if (s.cost.weights_from.rfind("exact:", 0) == 0) {
    out += fmt::format("weights:   {} per GPU ({})\n",
                       FormatGiB(s.cost.dense_weight_bytes + s.cost.expert_weight_bytes +
                                 s.cost.lookup_weight_bytes),
                       s.cost.weights_from);
  }
  if (s.cost.compute_dtype == s.cost.attention_dtype) {
    out +=
        fmt::format("compute:   {}\n\n", PeakLabel(s.hw, s.cost.compute_dtype, decode.peak_flops));
  } else {
    out += fmt::format("compute:   weight matmuls at the {}\n",
                       PeakLabel(s.hw, s.cost.compute_dtype, decode.peak_flops));
    out += fmt::format("           attention at the {} (16-bit activations)\n\n",
                       PeakLabel(s.hw, s.cost.attention_dtype, decode.attention_peak_flops));
  }
  out += fmt::format(
      "TTFT  {} ms   prompt {}, {}-bound; each phase is the larger of its "
      "memory and compute time:\n",
      Ms(prefill.seconds), Plural(s.prompt, "token"), BoundName(prefill.bound));
  out += PhaseLine("weights", prefill.weights, prefill.peak_flops);
  out += PhaseLine("attention", prefill.attention, prefill.attention_peak_flops);
  out +=
      fmt::format("TPOT  {} ms   batch {}, context {}, {}-bound, per rank:\n", Ms(decode.seconds),
                  s.batch, Plural(s.context, "token"), BoundName(decode.bound));
  out += PhaseLine("weights", decode.weights, decode.peak_flops);
  out += PhaseLine("attention", decode.attention, decode.attention_peak_flops);
  out +=
      fmt::format("      {} tokens/s per sequence, {} tokens/s in aggregate\n",
                  Rate(1.0 / decode.seconds), Rate(static_cast<double>(s.batch) / decode.seconds));
  if (s.hw.TotalMemoryBytes() != 0 && WeightBytes(s) > s.hw.TotalMemoryBytes()) {
    out += fmt::format(
        "      note: the weights alone need {} per rank, more than the {} of {}: the model does "
        "not load at tensor parallel {} (kvplan capacity)\n",
        FormatGiB(WeightBytes(s)), FormatGiB(s.hw.TotalMemoryBytes()), s.hw.name, s.cost.tp);
  } else if (!Fits(s, s.batch)) {
    out += fmt::format(
        "      note: weights + KV need {} per rank, more than the {} of {} (kvplan capacity)\n",
        FormatGiB(ResidentBytes(s, s.batch)), FormatGiB(s.hw.TotalMemoryBytes()), s.hw.name);
  }
  out +=
      fmt::format("\nDecode step by batch (context {}, per rank):\n", Plural(s.context, "token"));
  out += BatchTable(s, batches).Text("  ", width);
  if (std::any_of(batches.begin(), batches.end(), [&](uint64_t b) { return !Fits(s, b); })) {
    out += fmt::format(
        "* weights + KV exceed the {} of {} per rank: that batch cannot be resident (times "
        "shown as if it were)\n",
        FormatGiB(s.hw.TotalMemoryBytes()), s.hw.name);
  }
  const uint64_t turn = ComputeBoundBatch(s.cost, s.hw, s.context, 1 << 16);
  if (turn == 1) {
    out += "Decode is compute-bound from batch 1.\n";
  } else if (turn != 0) {
    // "About the same at any batch" only where it is: the KV of a long
    // context, or the experts a larger batch touches, grow the step too.
    const uint64_t below = turn / 2;
    const double t1 = EstimateDecodeStep(s.cost, s.hw, s.context, 1).seconds;
    const double tb = EstimateDecodeStep(s.cost, s.hw, s.context, below).seconds;
    out += tb <= 1.25 * t1
               ? fmt::format(
                     "Decode turns compute-bound at batch {}: below it a step costs about the same "
                     "at any batch (the weights dominate the bytes).\n",
                     turn)
               : fmt::format(
                     "Decode turns compute-bound at batch {}: below it the step is "
                     "bandwidth-bound, but it grows with the batch ({} ms at batch 1, {} ms at "
                     "batch {}): {} grow with it.\n",
                     turn, Ms(t1), Ms(tb), WithCommas(below),
                     s.cost.experts != 0 ? "the KV and expert bytes read per step, and the FLOPs,"
                                         : "the KV bytes read per step, and the FLOPs,");
  } else {
    out +=
        "Decode stays bandwidth-bound at every batch up to 65,536 (the KV bytes grow as fast "
        "as the FLOPs).\n";
  }
  // The weights' own ridge, exact: the classic "batch where decode turns
  // compute-bound", which the step as a whole may pass without turning.
  const uint64_t wturn = WeightsComputeBoundBatch(s.cost, s.hw, s.context, 1 << 16);
  if (wturn > 1 && (turn == 0 || wturn < turn)) {
    const StepEstimate w = EstimateDecodeStep(s.cost, s.hw, s.context, wturn);
    out += fmt::format(
        "The weight GEMMs alone turn compute-bound at batch {}: from there their FLOPs take longer "
        "than reading the weights (the ridge: {:.0f} FLOP per byte at {} GB/s and {} TFLOP/s){}.\n",
        WithCommas(wturn), w.peak_flops * kComputeEfficiency / (w.weights.bandwidth_gbps * 1e9),
        Rate(w.weights.bandwidth_gbps), Rate(w.peak_flops * kComputeEfficiency / 1e12),
        turn == 0
            ? "; the step as a whole stays bandwidth-bound, its KV bytes growing with the batch"
            : "");
  }
  if (s.cost.experts != 0) {
    out += fmt::format(
        "MoE: {} of {} experts per token; the memory side counts the expected distinct experts a "
        "batch touches, 1 - (1 - k/E)^B of them ({:.0f}% at batch {}).\n",
        s.cost.experts_per_token, s.cost.experts,
        100 * ExpertsTouchedFraction(s.cost.experts, s.cost.experts_per_token, s.batch), s.batch);
  }
  if (s.cost.tp > 1) {
    out +=
        "Tensor parallel: weights, KV and FLOPs per rank; communication (all-reduces) is not "
        "modelled.\n";
  }
  return width == 0 ? out : WrapText(out, width);
}

}  // namespace kvplan
