// Fitting a growth exponent: time = c * n^k, fitted as the least-squares
// line through (log n, log time).
#pragma once

#include <vector>

namespace kvplan::demo {

struct PowerFit {
  double exponent = 0;     // k
  double coefficient = 0;  // c
  double r_squared = 0;    // of the log-log fit
};

/// Least-squares fit of log(y) = log(c) + k log(x). Needs at least two
/// distinct x, and every x and y > 0 (else Error).
PowerFit FitPowerLaw(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace kvplan::demo
