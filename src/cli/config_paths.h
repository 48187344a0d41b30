// The inputs of `kvplan check`: each file as given, each folder walked for
// its deployment configs (*.yaml, *.yml), in name order.
#pragma once

#include <string>
#include <vector>

#include "plan/check.h"

namespace kvplan {

/// One CheckOutcome per file the arguments name, not yet checked (no report,
/// no error). A folder with no configs is an outcome of its own, an error,
/// so that --format junit and json still print a whole document; so is each
/// folder the walk cannot read and each *.yaml entry that is no file. A file
/// named twice (itself and in its folder) is listed once.
std::vector<CheckOutcome> ExpandPaths(const std::vector<std::string>& args);

}  // namespace kvplan
