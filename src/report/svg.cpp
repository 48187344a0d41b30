#include "report/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/table.h"
#include "report/xml.h"

namespace kvplan {

namespace {

// Okabe-Ito: distinguishable with the common colour-vision deficiencies.
constexpr const char* kColors[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                   "#E69F00", "#56B4E9", "#000000", "#F0E442"};
constexpr const char* kDashes[] = {"", "6 3", "2 3", "8 3 2 3"};

// A marker shape per series, centred on (x, y).
std::string Marker(size_t series, double x, double y, const char* color) {
  switch (series % 4) {
    case 0:
      return fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"/>", x, y,
                         color);
    case 1:
      return fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"7\" height=\"7\" fill=\"{}\"/>",
                         x - 3.5, y - 3.5, color);
    case 2:
      return fmt::format("<path d=\"M{:.1f},{:.1f} l4,7 h-8 z\" fill=\"{}\"/>", x, y - 4.5, color);
    default:
      return fmt::format("<path d=\"M{:.1f},{:.1f} l4.5,4.5 l-4.5,4.5 l-4.5,-4.5 z\" fill=\"{}\"/>",
                         x, y - 4.5, color);
  }
}

// The plot area inside the picture, leaving room for the title, tick labels
// and axis titles, and the axes fitted to the data: where a value lands.
struct PlotArea {
  AxisScale sx, sy;
  double left = 0, right = 0, top = 0, bottom = 0;
  double X(double v) const { return left + sx.Position(v) * (right - left); }
  double Y(double v) const { return bottom - sy.Position(v) * (bottom - top); }
};

// The XML prolog, the svg element, the white background and the title.
std::string Heading(const Chart& chart, int width, int height) {
  std::string o;
  o += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
      width, height);
  o += fmt::format("<title>{}</title>\n", XmlEscape(chart.title));
  o += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", width,
                   height);
  // Bold sans glyphs average about 0.62 em: shrink a long title to fit.
  double title_px =
      std::min(17.0, (width - 24.0) / (0.62 * std::max<double>(1, DisplayWidth(chart.title))));
  o += fmt::format(
      "<text x=\"{:.1f}\" y=\"28\" text-anchor=\"middle\" font-size=\"{:.1f}\" "
      "font-weight=\"bold\">{}</text>\n",
      width / 2.0, title_px, XmlEscape(chart.title));
  return o;
}

// Grid lines, the axes, their tick labels and titles.
std::string Axes(const Chart& chart, const PlotArea& a, int height) {
  const double left = a.left, right = a.right, top = a.top, bottom = a.bottom;
  auto px = [&](double v) { return a.X(v); };
  auto py = [&](double v) { return a.Y(v); };
  const AxisScale& sx = a.sx;
  const AxisScale& sy = a.sy;
  std::string o;
  o += "<g class=\"grid\" stroke=\"#dddddd\" stroke-width=\"1\">\n";
  for (double t : sx.ticks) {
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>\n", px(t),
                     top, bottom);
  }
  for (double t : sy.ticks) {
    o += fmt::format("<line x1=\"{1:.1f}\" y1=\"{0:.1f}\" x2=\"{2:.1f}\" y2=\"{0:.1f}\"/>\n", py(t),
                     left, right);
  }
  o += "</g>\n";
  o += fmt::format(
      "<g class=\"axes\" stroke=\"#333333\" stroke-width=\"1.2\" fill=\"none\">"
      "<path d=\"M{0:.1f},{1:.1f} V{2:.1f} H{3:.1f}\"/></g>\n",
      left, top, bottom, right);
  o += "<g class=\"x-ticks\" font-size=\"12\" text-anchor=\"middle\" fill=\"#333333\">\n";
  for (double t : sx.ticks) {
    o += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#333333\"/>"
        "<text x=\"{0:.1f}\" y=\"{3:.1f}\">{4}</text>\n",
        px(t), bottom, bottom + 5, bottom + 19, XmlEscape(TickLabel(t, chart.x.labels)));
  }
  o += "</g>\n";
  o += "<g class=\"y-ticks\" font-size=\"12\" text-anchor=\"end\" fill=\"#333333\">\n";
  for (double t : sy.ticks) {
    o += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#333333\"/>"
        "<text x=\"{3:.1f}\" y=\"{4:.1f}\">{5}</text>\n",
        left - 5, py(t), left, left - 8, py(t) + 4, XmlEscape(TickLabel(t, chart.y.labels)));
  }
  o += "</g>\n";
  o += fmt::format(
      "<text class=\"x-title\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" "
      "font-size=\"14\">{}</text>\n",
      (left + right) / 2, height - 18.0, XmlEscape(chart.x.title));
  o += fmt::format(
      "<text class=\"y-title\" x=\"0\" y=\"0\" text-anchor=\"middle\" font-size=\"14\" "
      "transform=\"translate(22,{:.1f}) rotate(-90)\">{}</text>\n",
      (top + bottom) / 2, XmlEscape(chart.y.title));
  return o;
}

// Series: a polyline per unbroken run (a log axis cannot show 0), then markers.
std::string Series(const Chart& chart, const PlotArea& a) {
  auto px = [&](double v) { return a.X(v); };
  auto py = [&](double v) { return a.Y(v); };
  std::string o;
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const ChartSeries& s = chart.series[i];
    const char* color = kColors[i % std::size(kColors)];
    const char* dash = kDashes[i % std::size(kDashes)];
    o += fmt::format("<g class=\"series\" data-name=\"{}\">\n", XmlEscape(s.name));
    std::string d, markers;
    bool pen = false;
    for (const ChartPoint& p : s.points) {
      if (!Plottable(chart.x, p.x) || !Plottable(chart.y, p.y)) {
        pen = false;
        continue;
      }
      double x = px(p.x), y = py(p.y);
      if (!pen) {
        d += fmt::format("M{:.1f},{:.1f} ", x, y);
      } else if (s.step) {
        d += fmt::format("H{:.1f} V{:.1f} ", x, y);
      } else {
        d += fmt::format("L{:.1f},{:.1f} ", x, y);
      }
      pen = true;
      markers += Marker(i, x, y, color);
    }
    if (!d.empty()) {
      d.pop_back();
      o += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", d,
                       color, *dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : "");
    }
    o += markers;
    o += "\n</g>\n";
  }
  return o;
}

// Legend: top right inside the plot, on a white box so lines do not cross it.
std::string Legend(const Chart& chart, const PlotArea& a) {
  const double right = a.right, top = a.top;
  std::string o;
  size_t longest = 0;
  for (const ChartSeries& s : chart.series) longest = std::max(longest, DisplayWidth(s.name));
  double box_w = 44 + 7.2 * static_cast<double>(longest), row_h = 20;
  double box_h = 10 + row_h * static_cast<double>(chart.series.size());
  double bx = right - box_w - 8, by = top + 8;
  o += fmt::format(
      "<g class=\"legend\" font-size=\"12\">\n<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
      "height=\"{:.1f}\" fill=\"#ffffff\" fill-opacity=\"0.9\" stroke=\"#999999\"/>\n",
      bx, by, box_w, box_h);
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const char* color = kColors[i % std::size(kColors)];
    const char* dash = kDashes[i % std::size(kDashes)];
    double y = by + 5 + row_h * (static_cast<double>(i) + 0.5);
    o += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
        "stroke-width=\"2\"{}/>",
        bx + 8, y, bx + 32, y, color, *dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : "");
    o += Marker(i, bx + 20, y, color);
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", bx + 38, y + 4,
                     XmlEscape(chart.series[i].name));
  }
  o += "</g>\n";
  return o;
}

}  // namespace

std::string RenderSvg(const Chart& chart, int width, int height) {
  std::vector<double> xs, ys;
  PlottablePoints(chart, xs, ys);
  PlotArea area;
  area.sx = FitAxis(chart.x, xs);
  area.sy = FitAxis(chart.y, ys);
  // Plot area, leaving room for the title, tick labels and axis titles.
  area.left = 84;
  area.right = width - 24.0;
  area.top = 52;
  area.bottom = height - 64.0;

  std::string o = Heading(chart, width, height);
  o += Axes(chart, area, height);
  o += Series(chart, area);
  if (!chart.series.empty()) o += Legend(chart, area);
  o += "</svg>\n";
  return o;
}

}  // namespace kvplan
