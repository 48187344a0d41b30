// Comparing deployments side by side: the figures of each configuration and
// their ratio to the first one, so "what does fp8 / tp4 / the other model
// buy us" reads off one table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvplan {

/// One row of a comparison: a figure for every configuration (column).
struct CompareRow {
  std::string key;             // stable JSON/CSV key, e.g. "max_tokens"
  std::string label;           // for the text table, e.g. "tokens in cache"
  std::string unit;            // "bytes", "tokens", "requests", "" (for formatting)
  std::vector<double> values;  // one per configuration
  bool higher_is_better = true;

  /// values[i] / values[0]; 0 when the first value is 0 (no meaningful ratio).
  double Ratio(size_t i) const;
};

/// Parses "key=v1,v2,..." into the key and its values. Throws Error naming
/// `flag` when the form is wrong, a value is empty, or fewer than one value.
std::pair<std::string, std::vector<std::string>> ParseVary(const std::string& text,
                                                           const std::string& flag = "--vary");

}  // namespace kvplan
