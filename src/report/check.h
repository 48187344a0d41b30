// `kvplan check` rendered for people (each requirement PASS or FAIL with
// measured and required, the notes, the verdict) and as JSON.
#pragma once

#include <string>
#include <vector>

#include "plan/check.h"

namespace kvplan {

/// The text report of every checked file (invalid ones are left to stderr),
/// its lines wrapped to `width` columns (0: any).
std::string CheckText(const std::vector<CheckOutcome>& all, size_t width = 0);

/// Every file with its status, checks and notes, and the counts.
std::string CheckJson(const std::vector<CheckOutcome>& all);

}  // namespace kvplan
