// `kvplan check --format github`: GitHub Actions workflow commands (::error
// on each failing requirement at its line, ::notice for notes) and one
// summary line per file.
#pragma once

#include <string>
#include <vector>

#include "plan/check.h"

namespace kvplan {

std::string CheckGithub(const std::vector<CheckOutcome>& all);

}  // namespace kvplan
