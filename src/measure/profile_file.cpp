#include "measure/profile_file.h"

#include <fmt/format.h>

#include <ctime>

#include "util/atomic_file.h"

namespace kvplan {

std::string UtcDate() {
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(date, sizeof date, "%Y-%m-%d", &utc);
  return date;
}

void WriteProfile(const HardwareSpec& h, const std::string& command, const std::string& path,
                  bool force) {
  const std::string yaml =
      fmt::format("# Hardware profile written by `{}` (schema: docs/hardware-spec.md)\n{}", command,
                  HardwareToYaml(h));
  ParseHardwareYaml(yaml, path);  // what is written must read back
  WriteFileAtomic(path, yaml, force);
}

}  // namespace kvplan
