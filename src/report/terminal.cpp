#include "report/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "report/table.h"

namespace kvplan {

size_t WidthFrom(const char* columns, size_t tty_columns) {
  size_t width = 0;
  if (columns != nullptr) {
    const char* end = columns + std::strlen(columns);
    size_t n = 0;
    const auto [p, ec] = std::from_chars(columns, end, n);
    if (ec == std::errc() && p == end && n > 0) width = n;
  }
  if (width == 0) width = tty_columns != 0 ? tty_columns : kDefaultWidth;
  return std::max(width, kMinWidth);
}

size_t TerminalWidth() {
  size_t tty = 0;
  if (isatty(STDOUT_FILENO) == 1) {
    winsize ws{};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) tty = ws.ws_col;
  }
  return WidthFrom(std::getenv("COLUMNS"), tty);
}

std::string WrapLine(const std::string& line, size_t width, const std::string& hang) {
  if (DisplayWidth(line) <= width) return line + "\n";
  const size_t lead = line.find_first_not_of(' ');
  if (lead == std::string::npos) return line + "\n";
  // The words, each with the spaces written before it. A word too wide for
  // a line of its own breaks after its commas (a list of KEY=VALUE items).
  const size_t room = width > DisplayWidth(hang) ? width - DisplayWidth(hang) : 1;
  std::vector<std::pair<size_t, std::string>> words;
  for (size_t i = lead, spaces = 0; i < line.size();) {
    const size_t end = std::min(line.find(' ', i), line.size());
    std::string word = line.substr(i, end - i);
    while (DisplayWidth(word) > room) {
      const size_t comma = word.find(',');
      if (comma == std::string::npos || comma + 1 == word.size()) break;
      words.emplace_back(spaces, word.substr(0, comma + 1));
      word.erase(0, comma + 1);
      spaces = 0;
    }
    words.emplace_back(spaces, word);
    i = std::min(line.find_first_not_of(' ', end), line.size());
    spaces = i - end;
  }
  std::string out, current = line.substr(0, lead);
  size_t current_width = lead;
  bool empty = true;  // no word on the current line yet
  for (const auto& [spaces, word] : words) {
    const size_t w = DisplayWidth(word);
    if (!empty && current_width + spaces + w > width) {
      out += current + "\n";
      current = hang;
      current_width = DisplayWidth(hang);
      empty = true;
    }
    // The spaces between words stay as written (aligned figures) unless
    // the line breaks there.
    if (!empty) {
      current.append(spaces, ' ');
      current_width += spaces;
    }
    current += word;
    current_width += w;
    empty = false;
  }
  return out + current + "\n";
}

std::string WrapText(const std::string& text, size_t width, size_t extra_indent) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    const bool last = nl == std::string::npos;
    const std::string line = text.substr(start, last ? std::string::npos : nl - start);
    const size_t lead = std::min(line.find_first_not_of(' '), line.size());
    std::string wrapped = WrapLine(line, width, std::string(lead + extra_indent, ' '));
    if (last) wrapped.pop_back();  // a final line without '\n' stays so
    out += wrapped;
    if (last) break;
    start = nl + 1;
  }
  return out;
}

}  // namespace kvplan
