#include "util/error.h"

namespace kvplan {

std::string SourcePos::Prefix() const {
  if (file.empty()) return line > 0 ? fmt::format("line {}:{}: ", line, column) : "";
  if (line <= 0) return file + ": ";
  return fmt::format("{}:{}:{}: ", file, line, column);
}

}  // namespace kvplan
