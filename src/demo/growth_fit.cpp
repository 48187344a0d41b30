#include "demo/growth_fit.h"

#include <cmath>

#include "util/error.h"

namespace kvplan::demo {

PowerFit FitPowerLaw(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) Fail("power-law fit: {} x values but {} y values", x.size(), y.size());
  if (x.size() < 2) Fail("power-law fit: needs at least two points, got {}", x.size());
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] > 0) || !(y[i] > 0)) {
      Fail("power-law fit: point {} ({}, {}) is not positive", i, x[i], y[i]);
    }
    sx += std::log(x[i]);
    sy += std::log(y[i]);
  }
  const double mx = sx / n, my = sy / n;
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double dx = std::log(x[i]) - mx, dy = std::log(y[i]) - my;
    sxx += dx * dx;
    sxy += dx * dy;
    syy += dy * dy;
  }
  if (sxx == 0) Fail("power-law fit: every x is the same ({})", x.front());
  PowerFit f;
  f.exponent = sxy / sxx;
  f.coefficient = std::exp(my - f.exponent * mx);
  f.r_squared = syy == 0 ? 1.0 : (sxy * sxy) / (sxx * syy);
  return f;
}

}  // namespace kvplan::demo
