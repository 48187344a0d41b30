#include "report/terminal.h"

#include <doctest/doctest.h>

#include <string>

#include "report/table.h"

namespace kvplan {

TEST_CASE("the width: COLUMNS, else the terminal, else 100; never below 40") {
  CHECK(WidthFrom("80", 0) == 80);
  CHECK(WidthFrom("80", 120) == 80);
  CHECK(WidthFrom(nullptr, 120) == 120);
  CHECK(WidthFrom(nullptr, 0) == kDefaultWidth);
  CHECK(WidthFrom("", 0) == kDefaultWidth);
  CHECK(WidthFrom("0", 0) == kDefaultWidth);
  CHECK(WidthFrom("12x", 0) == kDefaultWidth);
  CHECK(WidthFrom("-3", 90) == 90);
  CHECK(WidthFrom("10", 0) == kMinWidth);
}

TEST_CASE("WrapLine breaks at spaces, hangs continuations, keeps a line that fits") {
  CHECK(WrapLine("short line", 40, "  ") == "short line\n");
  CHECK(WrapLine("aaa bbb ccc ddd", 9, "  ") == "aaa bbb\n  ccc ddd\n");
  // Leading spaces stay; aligned gaps stay where the line does not break.
  CHECK(WrapLine("  x    yy zz", 9, "    ") == "  x    yy\n    zz\n");
  // A word wider than the line stays whole...
  CHECK(WrapLine("a abcdefghij b", 6, "") == "a\nabcdefghij\nb\n");
  // ...unless it is a list: it breaks after its commas.
  CHECK(WrapLine("k=aaaa,bbbb,cccc", 10, "  ") == "k=aaaa,\n  bbbb,\n  cccc\n");
  // Display width counts code points, not bytes.
  CHECK(WrapLine("a · b · c", 5, "") == "a · b\n· c\n");
}

TEST_CASE("WrapText wraps each line under its own indent, lines that fit unchanged") {
  const std::string text = "head\n  one two three four\n\nlast";
  CHECK(WrapText(text, 1000) == text);
  CHECK(WrapText(text, 12) == "head\n  one two\n    three\n    four\n\nlast");
}

TEST_CASE("a table too wide leaves out columns by drop order, then turns vertical") {
  Table t({"name", "a", "bbbbbbbb", "c"});
  t.SetDropOrder(2, 2);
  t.SetDropOrder(1, 1);
  t.AddRow({"first", "1", "22222222", "3"});
  const std::string full = t.Text("  ");
  CHECK(t.Text("  ", 0) == full);
  CHECK(t.Text("  ", 100) == full);
  CHECK(t.Text("  ", 16) ==
        "  name   a  c\n"
        "  \u2500\u2500\u2500\u2500\u2500  \u2500  \u2500\n"
        "  first  1  3\n"
        "  (not shown, to\n"
        "   fit 16\n"
        "   columns:\n"
        "   bbbbbbbb)\n");
  CHECK(t.Text("  ", 12) ==
        "  name   c\n"
        "  \u2500\u2500\u2500\u2500\u2500  \u2500\n"
        "  first  3\n"
        "  (not\n"
        "   shown, to\n"
        "   fit 12\n"
        "   columns:\n"
        "   a,\n"
        "   bbbbbbbb)\n");
  Table v({"name", "value"});
  v.AddRow({"k", "a long value here"});
  v.SetAlign(1, Table::Align::kRight);
  CHECK(v.Text("", 10) == "k\n  value: a\n    long\n    value\n    here\n");
}

TEST_CASE("a left-aligned last column wraps under itself") {
  Table t({"field", "value"});
  t.SetAlign(1, Table::Align::kLeft);
  t.AddRow({"source", "one two three four five six seven eight nine ten eleven twelve"});
  CHECK(t.Text("", 40) ==
        "field   value\n"
        "\u2500\u2500\u2500\u2500\u2500\u2500  "
        "\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500"
        "\u2500"
        "\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500"
        "\u2500\n"
        "source  one two three four five six\n"
        "        seven eight nine ten eleven\n"
        "        twelve\n");
}

}  // namespace kvplan
