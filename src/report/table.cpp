#include "report/table.h"

#include <algorithm>

namespace kvplan {

size_t DisplayWidth(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

Table::Table(std::vector<std::string> headers)
    : headers_(std::move(headers)), align_(headers_.size(), Align::kRight) {
  if (!align_.empty()) align_[0] = Align::kLeft;
}

void Table::SetAlign(size_t column, Align align) {
  if (column < align_.size()) align_[column] = align;
}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::Text(const std::string& indent) const {
  std::vector<size_t> width(headers_.size());
  for (size_t c = 0; c < headers_.size(); ++c) width[c] = DisplayWidth(headers_[c]);
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], DisplayWidth(row[c]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = indent;
    for (size_t c = 0; c < cells.size(); ++c) {
      size_t pad = width[c] - DisplayWidth(cells[c]);
      if (c) out += "  ";
      if (align_[c] == Align::kRight) out.append(pad, ' ');
      out += cells[c];
      if (align_[c] == Align::kLeft && c + 1 < cells.size()) out.append(pad, ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(headers_);
  std::string rule = indent;
  for (size_t c = 0; c < width.size(); ++c) {
    if (c) rule += "  ";
    for (size_t i = 0; i < width[c]; ++i) rule += "\u2500";
  }
  out += rule + "\n";
  for (const auto& row : rows_) out += line(row);
  return out;
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
