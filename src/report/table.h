// Text tables for the terminal (aligned columns) and CSV for spreadsheets.
// A text table fits a width: it leaves out its least important columns
// first, and turns vertical (one block of "header: value" lines per row)
// when even its essential columns do not fit.
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
  /// How readily `column` is left out when the table is too wide: 0 (every
  /// column's default) never; the highest number goes first.
  void SetDropOrder(size_t column, int order);
  void AddRow(std::vector<std::string> cells);
  size_t Rows() const { return rows_.size(); }

  /// Aligned text with a header rule, each line prefixed by `indent`. With
  /// a `width` (0: any), columns with a drop order are left out, highest
  /// first, until every line fits, and one line names them; when the
  /// columns that may not be left out are still too wide, each row is a
  /// block instead: its first cell, then "header: value" per column.
  std::string Text(const std::string& indent = "  ", size_t width = 0) const;
  /// RFC 4180 CSV (quotes where needed), header first.
  std::string Csv() const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<int> drop_;
  std::vector<std::vector<std::string>> rows_;
};

/// One CSV field, quoted when it holds a comma, quote or newline.
std::string CsvField(const std::string& s);

/// Display width of UTF-8 text (counts code points).
size_t DisplayWidth(const std::string& s);

}  // namespace kvplan
