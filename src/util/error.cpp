#include "util/error.h"

#include <unistd.h>

#include <cerrno>

namespace kvplan {

std::string OneLine(const std::string& message) {
  std::string out;
  out.reserve(message.size());
  for (char c : message) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (u < 0x20 || u == 0x7f)
      out += fmt::format("\\x{:02x}", u);
    else
      out += c;
  }
  return out;
}

void WriteStderr(const std::string& text) noexcept {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

void PrintError(const std::string& message) noexcept {
  try {
    WriteStderr("kvplan: error: " + OneLine(message) + "\n");
  } catch (...) {  // out of memory for the line: the exit code still tells
  }
}

std::string SourcePos::Prefix() const {
  if (file.empty()) return line > 0 ? fmt::format("line {}:{}: ", line, column) : "";
  if (line <= 0) return file + ": ";
  return fmt::format("{}:{}:{}: ", file, line, column);
}

}  // namespace kvplan
