#include "report/chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/table.h"
#include "util/units.h"

namespace kvplan {

double AxisScale::Position(double v) const {
  if (log2) return (std::log2(v) - std::log2(lo)) / (std::log2(hi) - std::log2(lo));
  return (v - lo) / (hi - lo);
}

bool Plottable(const ChartAxis& axis, double v) {
  return std::isfinite(v) && (!axis.log2 || v > 0);
}

AxisScale FitAxis(const ChartAxis& axis, const std::vector<double>& values) {
  AxisScale s;
  s.log2 = axis.log2;
  double lo = INFINITY, hi = -INFINITY;
  for (double v : values) {
    if (!Plottable(axis, v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (axis.log2) {
    if (!(lo <= hi)) lo = hi = 1;
    int e0 = static_cast<int>(std::floor(std::log2(lo)));
    int e1 = static_cast<int>(std::ceil(std::log2(hi)));
    if (e1 == e0) ++e1;
    int step = 1;
    while ((e1 - e0) / step > 10) ++step;
    // Both ends on ticks: widen downwards unless that would go below 1 (an
    // axis of counts starting at 0.5 reads oddly), else upwards.
    int widen = step * ((e1 - e0 + step - 1) / step) - (e1 - e0);
    if (e0 - widen >= 0 || e0 < 0) {
      e0 -= widen;
    } else {
      e1 += widen;
    }
    s.lo = std::ldexp(1.0, e0);
    s.hi = std::ldexp(1.0, e1);
    for (int e = e0; e <= e1; e += step) s.ticks.push_back(std::ldexp(1.0, e));
    return s;
  }
  if (!(lo <= hi)) lo = 0, hi = 1;
  if (lo > 0) lo = 0;  // non-negative data reads best against a zero baseline
  if (hi == lo) hi = lo + 1;
  double raw = (hi - lo) / 6;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  }
  s.lo = std::floor(lo / step) * step;
  s.hi = std::ceil(hi / step) * step;
  // Index the ticks rather than accumulate: t += step can stall when step is
  // tiny next to t, and accumulating drifts.
  const long count = std::lround((s.hi - s.lo) / step);
  for (long i = 0; i <= count && i <= 100; ++i) {
    double t = s.lo + static_cast<double>(i) * step;
    s.ticks.push_back(std::abs(t) < step / 1e9 ? 0.0 : t);
  }
  return s;
}

std::string TickLabel(double value, AxisLabels labels) {
  if (labels == AxisLabels::kTokens && value >= 1024) {
    double e = std::log2(value);
    if (e == std::floor(e)) {
      const char* units[] = {"K", "M", "G"};
      int u = std::min(2, static_cast<int>(e) / 10 - 1);
      return fmt::format("{}{}", std::ldexp(1.0, static_cast<int>(e) - 10 * (u + 1)), units[u]);
    }
  }
  if (value == std::floor(value) && std::abs(value) < 1e15) {
    std::string digits = WithCommas(static_cast<uint64_t>(std::abs(value)));
    return value < 0 ? fmt::format("-{}", digits) : digits;
  }
  return fmt::format("{:g}", value);
}

namespace {

// Distinct markers per series, so series stay apart without colour.
constexpr const char* kMarkers[] = {"●", "■", "▲", "◆", "○", "□", "△", "◇"};

// A grid of braille cells: dot (x, y) with y growing downwards.
class BrailleCanvas {
 public:
  BrailleCanvas(int w, int h) : w_(w), h_(h), dots_(static_cast<size_t>(w * h), 0) {}
  int DotsX() const { return w_ * 2; }
  int DotsY() const { return h_ * 4; }
  void Set(int x, int y) {
    if (x < 0 || y < 0 || x >= DotsX() || y >= DotsY()) return;
    // Braille dot bits: left column 1,2,3,7; right column 4,5,6,8.
    static constexpr unsigned char kBits[2][4] = {{0x01, 0x02, 0x04, 0x40},
                                                  {0x08, 0x10, 0x20, 0x80}};
    dots_[static_cast<size_t>((y / 4) * w_ + x / 2)] |= kBits[x % 2][y % 4];
  }
  void Line(int x0, int y0, int x1, int y1) {
    int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0);
    int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    while (true) {
      Set(x0, y0);
      if (x0 == x1 && y0 == y1) break;
      int e2 = 2 * err;
      if (e2 >= dy) err += dy, x0 += sx;
      if (e2 <= dx) err += dx, y0 += sy;
    }
  }
  // The cell as UTF-8: U+2800 + bits (a blank cell stays a space).
  std::string Cell(int cx, int cy) const {
    unsigned bits = dots_[static_cast<size_t>(cy * w_ + cx)];
    if (bits == 0) return " ";
    unsigned cp = 0x2800 + bits;
    std::string s;
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
    return s;
  }

 private:
  int w_, h_;
  std::vector<unsigned char> dots_;
};

std::string PadLeft(const std::string& s, size_t width) {
  size_t w = DisplayWidth(s);
  return w >= width ? s : std::string(width - w, ' ') + s;
}

}  // namespace

void PlottablePoints(const Chart& chart, std::vector<double>& xs, std::vector<double>& ys) {
  for (const ChartSeries& s : chart.series) {
    for (const ChartPoint& p : s.points) {
      if (!Plottable(chart.x, p.x) || !Plottable(chart.y, p.y)) continue;
      xs.push_back(p.x);
      ys.push_back(p.y);
    }
  }
}

std::string RenderTerminalChart(const Chart& chart, int width, int height) {
  std::vector<double> xs, ys;
  PlottablePoints(chart, xs, ys);
  AxisScale sx = FitAxis(chart.x, xs), sy = FitAxis(chart.y, ys);
  BrailleCanvas canvas(width, height);
  // Clamped: a tick a rounding error past the axis end must not index past the grid.
  auto dot_x = [&](double v) {
    return std::clamp(static_cast<int>(std::lround(sx.Position(v) * (canvas.DotsX() - 1))), 0,
                      canvas.DotsX() - 1);
  };
  auto dot_y = [&](double v) {
    return std::clamp(static_cast<int>(std::lround((1 - sy.Position(v)) * (canvas.DotsY() - 1))), 0,
                      canvas.DotsY() - 1);
  };
  // Markers override the braille cell they land in: (cell x, cell y) -> marker.
  std::vector<std::string> marks(static_cast<size_t>(width * height));
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const ChartSeries& s = chart.series[i];
    bool have_prev = false;
    int px = 0, py = 0;
    for (const ChartPoint& p : s.points) {
      if (!Plottable(chart.x, p.x) || !Plottable(chart.y, p.y)) {
        have_prev = false;  // a gap: a log axis cannot show 0
        continue;
      }
      int x = dot_x(p.x), y = dot_y(p.y);
      if (have_prev) {
        if (s.step) {
          canvas.Line(px, py, x, py);
          canvas.Line(x, py, x, y);
        } else {
          canvas.Line(px, py, x, y);
        }
      }
      marks[static_cast<size_t>((y / 4) * width + x / 2)] = kMarkers[i % std::size(kMarkers)];
      have_prev = true;
      px = x, py = y;
    }
  }
  // Y labels on the rows holding a tick.
  std::vector<std::string> row_label(static_cast<size_t>(height));
  size_t label_w = 0;
  for (double t : sy.ticks) {
    int row = dot_y(t) / 4;
    row_label[static_cast<size_t>(row)] = TickLabel(t, chart.y.labels);
    label_w = std::max(label_w, DisplayWidth(row_label[static_cast<size_t>(row)]));
  }
  std::string out;
  if (!chart.title.empty()) out += chart.title + "\n";
  if (!chart.y.title.empty()) out += std::string(label_w + 1, ' ') + chart.y.title + "\n";
  for (int cy = 0; cy < height; ++cy) {
    const std::string& lab = row_label[static_cast<size_t>(cy)];
    out += PadLeft(lab, label_w) + (lab.empty() ? " │" : " ┤");
    for (int cx = 0; cx < width; ++cx) {
      const std::string& m = marks[static_cast<size_t>(cy * width + cx)];
      out += m.empty() ? canvas.Cell(cx, cy) : m;
    }
    out += "\n";
  }
  // X axis: a rule with tick marks, then labels centred under them where they fit.
  std::string rule, labels(static_cast<size_t>(width + 8), ' ');
  std::vector<bool> tick_at(static_cast<size_t>(width), false);
  size_t free_from = 0;
  for (double t : sx.ticks) {
    int cx = std::clamp(dot_x(t) / 2, 0, width - 1);
    tick_at[static_cast<size_t>(cx)] = true;
    std::string lab = TickLabel(t, chart.x.labels);
    size_t start = static_cast<size_t>(std::max(0, cx - static_cast<int>(lab.size()) / 2));
    if (start < free_from || start + lab.size() > labels.size()) continue;
    labels.replace(start, lab.size(), lab);
    free_from = start + lab.size() + 1;
  }
  for (int cx = 0; cx < width; ++cx) rule += tick_at[static_cast<size_t>(cx)] ? "┬" : "─";
  while (!labels.empty() && labels.back() == ' ') labels.pop_back();
  out += std::string(label_w, ' ') + " └" + rule + "\n";
  out += std::string(label_w + 2, ' ') + labels + "\n";
  if (!chart.x.title.empty()) {
    int pad = std::max(0, width / 2 - static_cast<int>(DisplayWidth(chart.x.title)) / 2);
    out += std::string(label_w + 2 + static_cast<size_t>(pad), ' ') + chart.x.title + "\n";
  }
  std::string legend;
  for (size_t i = 0; i < chart.series.size(); ++i) {
    legend += fmt::format("{}{} {}", i == 0 ? "" : "   ", kMarkers[i % std::size(kMarkers)],
                          chart.series[i].name);
  }
  if (!legend.empty()) out += std::string(label_w + 2, ' ') + legend + "\n";
  return out;
}

}  // namespace kvplan
