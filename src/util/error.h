// kvplan::Error — the one error type. Readers and validators throw it; main()
// catches it once, prints its message as one line on stderr and exits 2.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace kvplan {

/// `message` with control characters (a newline or tab echoed from an input
/// value) written as \n, \t, \xNN, so an error is always one printable line.
std::string OneLine(const std::string& message);

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(OneLine(message)) {}
};

/// Throws Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void Fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

/// Writes `text` to stderr with write(2), retrying short writes and
/// ignoring failures: stderr full (`2>/dev/full`) or closed (`2>&-`) must
/// not turn an error into an abort, and there is nowhere left to report it.
/// Never throws.
void WriteStderr(const std::string& text) noexcept;

/// Prints "kvplan: error: <OneLine(message)>" on stderr (WriteStderr).
void PrintError(const std::string& message) noexcept;

/// A place in an input file, printed as "file:line:col" (1-based; 0 = unknown).
struct SourcePos {
  std::string file;
  int line = 0;
  int column = 0;

  /// "file:line:col: " (or "file: " when the line is unknown; "" when no file).
  std::string Prefix() const;
};

}  // namespace kvplan
