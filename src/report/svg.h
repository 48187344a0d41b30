// SVG plots of a Chart (report/chart.h): axes with ticks and labels, log2
// axes for powers of two, axis titles, a legend, several series and a title,
// as standalone, well-formed SVG 1.1 that browsers and rsvg-convert render.
#pragma once

#include <string>
#include <string_view>

#include "report/chart.h"

namespace kvplan {

/// The chart as a standalone SVG document, `width` x `height` pixels.
std::string RenderSvg(const Chart& chart, int width = 800, int height = 500);

}  // namespace kvplan
