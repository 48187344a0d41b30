#include "util/error.h"

namespace kvplan {

std::string OneLine(const std::string& message) {
  std::string out;
  out.reserve(message.size());
  for (char c : message) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (u < 0x20 || u == 0x7f) out += fmt::format("\\x{:02x}", u);
    else out += c;
  }
  return out;
}

std::string SourcePos::Prefix() const {
  if (file.empty()) return line > 0 ? fmt::format("line {}:{}: ", line, column) : "";
  if (line <= 0) return file + ": ";
  return fmt::format("{}:{}:{}: ", file, line, column);
}

}  // namespace kvplan
