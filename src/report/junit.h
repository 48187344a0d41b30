// `kvplan check --format junit`: one testsuite per file, one testcase per
// requirement, for CI test reports.
#pragma once

#include <string>
#include <vector>

#include "plan/check.h"

namespace kvplan {

/// The JUnit XML document of every outcome (an invalid file: one error).
std::string CheckJunit(const std::vector<CheckOutcome>& all);

}  // namespace kvplan
