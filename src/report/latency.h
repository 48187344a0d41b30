// `kvplan latency` rendered: TTFT and TPOT with each phase's bytes, FLOPs
// and bound, the decode table by batch, and where decode turns
// compute-bound (text); every figure (JSON); the batch table (CSV).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/latency_fit.h"
#include "report/json.h"

namespace kvplan {

/// `decode` is the step at the setup's batch and context, `prefill` the
/// setup's prompt; `batches` the rows of the decode table (TableBatches).
/// Lines fit `width` columns (0: any): the table leaves out its byte
/// columns, then its memory and compute times; sentences wrap.
std::string LatencyText(const LatencySetup& s, const StepEstimate& decode,
                        const StepEstimate& prefill, const std::vector<uint64_t>& batches,
                        size_t width = 0);

Json LatencyJson(const LatencySetup& s, const StepEstimate& decode, const StepEstimate& prefill,
                 const std::vector<uint64_t>& batches);

/// The decode table for machines: plain numbers, the unit in each header.
std::string LatencyCsv(const LatencySetup& s, const std::vector<uint64_t>& batches);

}  // namespace kvplan
