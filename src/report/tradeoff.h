// `kvplan tradeoff` rendered: the chart of both grids (for the terminal and
// SVG), the two tables with the deployment above them (text), every point
// (JSON), and one table of both grids (CSV).
#pragma once

#include <cstdint>
#include <string>

#include "plan/capacity.h"
#include "plan/tradeoff.h"
#include "report/chart.h"
#include "report/json.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"

namespace kvplan {

/// Both grids as one chart: max batch over context, and context over batch.
Chart TradeoffChart(const ModelSpec& m, const HardwareSpec& hw, const CapacityResult& cap,
                    const Tradeoff& t);

/// The deployment, both tables and a note on batches above max-num-seqs;
/// `max_context` is the longest context the grids consider.
/// Fits `width` columns (0: any).
std::string TradeoffText(const ModelSpec& m, const HardwareSpec& hw, const CapacityResult& cap,
                         uint64_t max_context, const Tradeoff& t, size_t width);

Json TradeoffJson(const ModelSpec& m, const HardwareSpec& hw, const CapacityResult& cap,
                  uint64_t max_context, const Tradeoff& t);

/// One table for both grids: a row is (context, batch) on the frontier.
std::string TradeoffCsv(const ModelSpec& m, const HardwareSpec& hw, const CapacityResult& cap,
                        const Tradeoff& t);

}  // namespace kvplan
