// `kvplan models --verify SPEC --against config.json`: every field where a
// spec and a Hugging Face config disagree.
#pragma once

#include <string>

namespace kvplan {

/// Prints the differences (text or json) and returns 1 when some field
/// differs, 0 when none does. Bad input throws Error (exit 2).
int RunModelsVerify(const std::string& spec_path, const std::string& config_path,
                    const std::string& format);

}  // namespace kvplan
