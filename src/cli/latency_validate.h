// `kvplan latency --validate`: the latency model against real decode steps
// on this CPU (src/demo/decode_validation.h), as a benchmark.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace kvplan {

struct ValidateOptions {
  bool enabled = false;
  int repeats = 7;
  bool quick = false;
  int threads = 0;  // 0: all cores, wall clock; 1: one thread, its CPU time
  int rounds = 5;   // profile + validation repeated; each shape's error is the median over rounds
};

/// Adds --validate, --repeats, --quick and --threads to `sub`.
void AddValidateOptions(CLI::App* sub, ValidateOptions& o);

/// Runs the validation with the profile at `profile` (measured now when
/// empty); prints the table in `format`. Returns 0 when the model met its
/// target (every error within 10%, median within 5%), else 1.
int RunLatencyValidation(const ValidateOptions& o, const std::string& profile,
                         const std::string& format);

}  // namespace kvplan
