// Text tables for the terminal (aligned columns) and CSV for spreadsheets.
#pragma once

#include <string>
#include <vector>

namespace kvplan {

class Table {
 public:
  enum class Align { kLeft, kRight };

  /// Column headers; numeric-looking columns are right-aligned unless set.
  explicit Table(std::vector<std::string> headers);

  void SetAlign(size_t column, Align align);
  void AddRow(std::vector<std::string> cells);
  size_t Rows() const { return rows_.size(); }

  /// Aligned text with a header rule, each line prefixed by `indent`.
  std::string Text(const std::string& indent = "  ") const;
  /// RFC 4180 CSV (quotes where needed), header first.
  std::string Csv() const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

/// One CSV field, quoted when it holds a comma, quote or newline.
std::string CsvField(const std::string& s);

/// Display width of UTF-8 text (counts code points).
size_t DisplayWidth(const std::string& s);

}  // namespace kvplan
