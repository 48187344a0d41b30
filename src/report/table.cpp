#include "report/table.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/terminal.h"

namespace kvplan {

size_t DisplayWidth(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

Table::Table(std::vector<std::string> headers)
    : headers_(std::move(headers)),
      align_(headers_.size(), Align::kRight),
      drop_(headers_.size(), 0) {
  if (!align_.empty()) align_[0] = Align::kLeft;
}

void Table::SetAlign(size_t column, Align align) {
  if (column < align_.size()) align_[column] = align;
}

void Table::SetDropOrder(size_t column, int order) {
  if (column < drop_.size()) drop_[column] = order;
}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

namespace {

// The aligned table of the columns in `shown` (indices, in order).
std::string Aligned(const std::vector<std::string>& headers,
                    const std::vector<std::vector<std::string>>& rows,
                    const std::vector<Table::Align>& align, const std::vector<size_t>& shown,
                    const std::string& indent, size_t last_width = 0) {
  std::vector<size_t> width(headers.size());
  for (size_t c : shown) width[c] = DisplayWidth(headers[c]);
  for (const auto& row : rows) {
    for (size_t c : shown) width[c] = std::max(width[c], DisplayWidth(row[c]));
  }
  // A last (left-aligned) column held to `last_width`: its cells wrap onto
  // lines of their own, aligned under it.
  const size_t last = shown.back();
  size_t start = DisplayWidth(indent);
  for (size_t k = 0; k + 1 < shown.size(); ++k) start += width[shown[k]] + 2;
  if (last_width != 0 && width[last] > last_width) {
    width[last] = last_width;
    std::string pad(start, ' ');
    std::string out;
    auto cells_line = [&](const std::vector<std::string>& cells) {
      std::string head = indent;
      for (size_t k = 0; k + 1 < shown.size(); ++k) {
        const size_t c = shown[k];
        size_t p = width[c] - DisplayWidth(cells[c]);
        if (k) head += "  ";
        if (align[c] == Table::Align::kRight) head.append(p, ' ');
        head += cells[c];
        if (align[c] == Table::Align::kLeft) head.append(p, ' ');
      }
      if (shown.size() > 1) head += "  ";
      std::string wrapped = WrapLine(head + cells[last], start + last_width, pad);
      // Trailing spaces of an empty last cell go, as in the unwrapped table.
      std::string lines;
      size_t from = 0;
      while (from < wrapped.size()) {
        size_t nl = wrapped.find('\n', from);
        std::string l = wrapped.substr(from, nl - from);
        while (!l.empty() && l.back() == ' ') l.pop_back();
        lines += l + "\n";
        from = nl + 1;
      }
      return lines;
    };
    out += cells_line(headers);
    std::string rule = indent;
    for (size_t k = 0; k < shown.size(); ++k) {
      if (k) rule += "  ";
      for (size_t i = 0; i < width[shown[k]]; ++i) rule += "\u2500";
    }
    out += rule + "\n";
    for (const auto& row : rows) out += cells_line(row);
    return out;
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = indent;
    for (size_t k = 0; k < shown.size(); ++k) {
      const size_t c = shown[k];
      size_t pad = width[c] - DisplayWidth(cells[c]);
      if (k) out += "  ";
      if (align[c] == Table::Align::kRight) out.append(pad, ' ');
      out += cells[c];
      if (align[c] == Table::Align::kLeft && k + 1 < shown.size()) out.append(pad, ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(headers);
  std::string rule = indent;
  for (size_t k = 0; k < shown.size(); ++k) {
    if (k) rule += "  ";
    for (size_t i = 0; i < width[shown[k]]; ++i) rule += "\u2500";
  }
  out += rule + "\n";
  for (const auto& row : rows) out += line(row);
  return out;
}

size_t WidestLine(const std::string& text) {
  size_t widest = 0, start = 0;
  while (start < text.size()) {
    size_t nl = std::min(text.find('\n', start), text.size());
    widest = std::max(widest, DisplayWidth(text.substr(start, nl - start)));
    start = nl + 1;
  }
  return widest;
}

}  // namespace

std::string Table::Text(const std::string& indent, size_t width) const {
  std::vector<size_t> shown(headers_.size());
  for (size_t c = 0; c < shown.size(); ++c) shown[c] = c;
  std::string out = Aligned(headers_, rows_, align_, shown, indent);
  if (width == 0 || WidestLine(out) <= width) return out;
  // Leave out the droppable columns, the highest order first (the
  // rightmost first among equals), until the table fits.
  std::vector<size_t> order;
  for (size_t c = 0; c < drop_.size(); ++c) {
    if (drop_[c] > 0) order.push_back(c);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return drop_[x] > drop_[y] || (drop_[x] == drop_[y] && x > y);
  });
  std::vector<size_t> dropped;
  for (size_t c : order) {
    shown.erase(std::find(shown.begin(), shown.end(), c));
    dropped.push_back(c);
    out = Aligned(headers_, rows_, align_, shown, indent);
    if (WidestLine(out) <= width) break;
  }
  // A left-aligned last column (a value, a description) wraps within the
  // room the others leave it, when that room is wide enough to read.
  constexpr size_t kMinWrapped = 24;
  if (WidestLine(out) > width && align_[shown.back()] == Align::kLeft && shown.size() > 1) {
    size_t start = DisplayWidth(indent);
    for (size_t k = 0; k + 1 < shown.size(); ++k) {
      size_t w = DisplayWidth(headers_[shown[k]]);
      for (const auto& row : rows_) w = std::max(w, DisplayWidth(row[shown[k]]));
      start += w + 2;
    }
    if (start + kMinWrapped <= width) {
      out = Aligned(headers_, rows_, align_, shown, indent, width - start);
    }
  }
  if (WidestLine(out) <= width) {
    if (dropped.empty()) return out;
    std::sort(dropped.begin(), dropped.end());
    std::string names;
    for (size_t c : dropped) names += (names.empty() ? "" : ", ") + headers_[c];
    return out + WrapLine(fmt::format("{}(not shown, to fit {} columns: {})", indent, width, names),
                          width, indent + " ");
  }
  // Vertical: every column of each row, one "header: value" line each.
  std::string v;
  for (const auto& row : rows_) {
    v += WrapLine(indent + row[0], width, indent + "  ");
    for (size_t c = 1; c < headers_.size(); ++c) {
      if (row[c].empty()) continue;
      v += WrapLine(
          fmt::format("{}  {}{}{}", indent, headers_[c], headers_[c].empty() ? "" : ": ", row[c]),
          width, indent + "    ");
    }
  }
  return v;
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string Table::Csv() const {
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c) out += ',';
      out += CsvField(cells[c]);
    }
    out += '\n';
  };
  line(headers_);
  for (const auto& row : rows_) line(row);
  return out;
}

}  // namespace kvplan
