// `kvplan check` rendered for people (each requirement PASS or FAIL with
// measured and required, the notes, the verdict) and as JSON.
#pragma once

#include <string>
#include <vector>

#include "plan/check.h"

namespace kvplan {

/// The verdict on one file: "PASS: all 7 checks pass", "PASS: the 1 check
/// passes", "FAIL: 2 of 7 checks fail", each with ", 1 skipped" where some
/// are.
std::string CheckVerdict(const CheckReport& report);

/// The fixes of a failed item as one phrase: "passes with max_model_len
/// 40080, or kv_cache_dtype fp8"; "" when it has none.
std::string FixesPhrase(const CheckItem& item);

/// The text report of every checked file (invalid ones are left to stderr),
/// its lines wrapped to `width` columns (0: any).
std::string CheckText(const std::vector<CheckOutcome>& all, size_t width = 0);

/// Every file with its status, checks and notes, and the counts.
std::string CheckJson(const std::vector<CheckOutcome>& all);

}  // namespace kvplan
