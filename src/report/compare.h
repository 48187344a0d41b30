// `kvplan compare` rendered: the configurations side by side with ratios
// to the first (text), one row per figure and configuration (CSV), and
// every configuration with its figures and ratios (JSON).
#pragma once

#include <string>
#include <vector>

#include "plan/compare.h"
#include "report/json.h"

namespace kvplan {

/// `vary_key` is the --vary key ("" when none): with "engine", each
/// column's memory fraction is shown and explained. Fits `width` columns
/// (0: any): a table too wide turns vertical, notes wrap.
std::string CompareText(const std::vector<CompareColumn>& cols, const std::vector<CompareRow>& rows,
                        const std::string& vary_key, size_t width);

std::string CompareCsv(const std::vector<CompareColumn>& cols, const std::vector<CompareRow>& rows,
                       const std::string& vary_key);

Json CompareJson(const std::vector<CompareColumn>& cols, const std::vector<CompareRow>& rows);

}  // namespace kvplan
