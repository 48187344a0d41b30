// "Did you mean ...?" for names the user mistyped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kvplan {

/// Up to `n` candidates close to `name` (case-insensitive edit distance,
/// substring matches count as close), closest first; empty when none is close.
std::vector<std::string> ClosestNames(std::string_view name,
                                      const std::vector<std::string>& candidates, size_t n = 3);

/// `s` in lower case (ASCII): names compared case-insensitively.
std::string Lower(std::string_view s);

/// " (did you mean 'a', 'b'?)" or "" — ready to append to an error message.
std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace kvplan
