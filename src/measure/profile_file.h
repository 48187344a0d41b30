// The hardware profile file `kvplan bench --save` writes, for the CPU and
// the CUDA bench alike.
#pragma once

#include <string>

#include "spec/hardware_spec.h"

namespace kvplan {

/// Today's date in UTC, as YYYY-MM-DD: when a profile was measured.
std::string UtcDate();

/// Writes `h` to `path` as a hardware profile YAML (docs/hardware-spec.md),
/// atomically, replacing a file only with `force`; its first line names
/// `command`, the kvplan command that measured it. What is written is read
/// back first, so no profile kvplan writes fails to load.
void WriteProfile(const HardwareSpec& h, const std::string& command, const std::string& path,
                  bool force);

}  // namespace kvplan
