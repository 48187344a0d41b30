// Charts: the data model shared by the SVG writer (report/svg.h) and the
// Unicode terminal renderer here, and the axis arithmetic both use, so the
// plot in the terminal and the one in the file show the same ticks.
#pragma once

#include <string>
#include <vector>

namespace kvplan {

struct ChartPoint {
  double x = 0;
  double y = 0;
};

struct ChartSeries {
  std::string name;
  std::vector<ChartPoint> points;  // drawn in order; points a log axis cannot show are skipped
  bool step = false;               // draw as a step (horizontal, then vertical) instead of a line
};

enum class AxisLabels { kPlain, kTokens };  // kTokens: 1024 -> "1K", 131072 -> "128K"

struct ChartAxis {
  std::string title;
  bool log2 = false;  // powers-of-two axis: ticks at 2^k
  AxisLabels labels = AxisLabels::kPlain;
};

struct Chart {
  std::string title;
  ChartAxis x, y;
  std::vector<ChartSeries> series;
};

/// One axis fitted to data: the range shown and where the ticks go.
struct AxisScale {
  double lo = 0, hi = 1;  // data range shown (log2 axes: positive values)
  bool log2 = false;
  std::vector<double> ticks;  // data values, ascending, within [lo, hi]

  /// Where `v` falls in [0, 1] along the axis (may fall outside for outliers).
  double Position(double v) const;
};

/// Fits `axis` to `values`: a log2 axis spans whole powers of two with a tick
/// on each (thinned to at most ~10), a linear axis starts at 0 when the data
/// is non-negative and ticks at 1/2/5 x 10^k steps.
AxisScale FitAxis(const ChartAxis& axis, const std::vector<double>& values);

/// A tick label: "1K", "128K", "1M" for powers of two with kTokens; else the
/// shortest plain number ("0.5", "20", "1,000").
std::string TickLabel(double value, AxisLabels labels);

/// True when a log axis can place `v` (v > 0) or the axis is linear.
bool Plottable(const ChartAxis& axis, double v);

/// The x and y of every point of every series that the axes can plot,
/// appended to `xs` and `ys`.
void PlottablePoints(const Chart& chart, std::vector<double>& xs, std::vector<double>& ys);

/// The chart drawn with Unicode braille dots (each character 2 x 4 dots),
/// series marked with distinct symbols, y labels on the left, x labels below,
/// a legend and the title; `width` x `height` characters of plot area.
std::string RenderTerminalChart(const Chart& chart, int width = 60, int height = 16);

}  // namespace kvplan
